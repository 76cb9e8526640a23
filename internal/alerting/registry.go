package alerting

import (
	"context"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/alertevent"
)

// sender is what the operator knows about one channel type: which events
// the type receives and how a delivery becomes the provider's request.
// Each type's sender is in a file of its own (send_<type>.go), as each
// check is in probes/; adding a channel type is a constant in api/v1alpha1,
// a file here and a line in senders.
type sender struct {
	// takes is the events channels of the type receive.
	takes eventSet
	// build makes the request of d; a configuration it cannot fix is a
	// permanent error.
	build func(ctx context.Context, d *delivery) (*outgoing, error)
}

// eventSet is which events a channel type receives.
type eventSet int

const (
	// incidentEvents are monitor.down, monitor.up, incident.resolved and
	// the test event.
	incidentEvents eventSet = iota
	// incidentAndRoutedEvents add the notices that follow routing:
	// expiry, maintenance and SLO notices.
	incidentAndRoutedEvents
	// allEvents add the notices that go to every webhook connection
	// (last-mile, site health, third-party status).
	allEvents
)

// senders maps each channel type to its sender. TestEveryChannelTypeHasASender
// keeps it in step with monv1.AlertChannelTypes.
var senders = map[monv1.AlertChannelType]sender{
	monv1.ChannelWebhook:    webhookSender,
	monv1.ChannelZapier:     zapierSender,
	monv1.ChannelSlack:      chatSender("*"),
	monv1.ChannelGoogleChat: chatSender("*"),
	monv1.ChannelMattermost: chatSender("**"),
	monv1.ChannelDiscord:    discordSender,
	monv1.ChannelTeams:      teamsSender,
	monv1.ChannelPagerDuty:  pagerDutySender,
	monv1.ChannelOpsgenie:   opsgenieSender,
	monv1.ChannelTelegram:   telegramSender,
	monv1.ChannelGitHub:     gitHubSender,
	monv1.ChannelSMS:        phoneSender(monv1.ChannelSMS),
	monv1.ChannelVoice:      phoneSender(monv1.ChannelVoice),
	monv1.ChannelWhatsApp:   phoneSender(monv1.ChannelWhatsApp),
	monv1.ChannelEmail:      emailSender,
}

// Accepts reports whether a channel of type t receives events of kind. The
// webhook channel receives everything. The automation platform receives only
// incident and test events, as do incident-management, code-hosting and
// phone channels (the code host opens an issue on down and test, and
// comments on and closes it on monitor.up and incident.resolved). Chat,
// messaging and email channels also receive expiry, maintenance and SLO
// notices. The sender of each type says which (sender.takes).
func Accepts(t monv1.AlertChannelType, kind string) bool {
	s, ok := senders[t]
	if !ok {
		return false
	}
	incident := incidentEvent(kind)
	switch s.takes {
	case allEvents:
		return true
	case incidentAndRoutedEvents:
		return incident || routedNotice(kind)
	}
	return incident
}

// incidentEvent reports whether kind is an incident event or the test
// event.
func incidentEvent(kind string) bool {
	return kind == alertevent.MonitorDown || kind == alertevent.MonitorUp || kind == alertevent.IncidentResolved || kind == alertevent.Test
}
