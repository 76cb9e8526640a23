package alerting

import (
	"context"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/textutil"
)

// phoneSender tells the channel's number about the event by SMS, voice
// call or WhatsApp (typ): through Twilio when it is configured, else
// through the relay endpoint of typ.
func phoneSender(typ monv1.AlertChannelType) sender {
	return sender{takes: incidentEvents, build: func(_ context.Context, d *delivery) (*outgoing, error) {
		relay := map[monv1.AlertChannelType]string{
			monv1.ChannelSMS: d.endpoints.SMS, monv1.ChannelVoice: d.endpoints.Voice, monv1.ChannelWhatsApp: d.endpoints.WhatsApp,
		}[typ]
		text := d.sum.Title
		if r, ok := d.sum.Fields["reason"].(string); ok && r != "" {
			text += ": " + r
		}
		to := d.ch.Spec.To
		if d.twilio.configured() {
			return d.twilio.phoneRequest(typ, to, text)
		}
		if relay == "" {
			return nil, permanent("no %s provider is configured", typ)
		}
		if !ValidE164(to) {
			return nil, permanent("%q is not an E.164 phone number", to)
		}
		out, _ := jsonPost(relay, map[string]string{"to": to, "body": textutil.Truncate(text, 320), "channel": string(typ)})
		d.authorizeRelay(out)
		return out, nil
	}}
}
