package alerting

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/alertevent"
	monitormodel "github.com/uptime-operator/uptime-operator/internal/monitor"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// Router builds outbox events and chooses their target channels. The engine
// calls it and passes the events to the store with the incident change.
type Router struct {
	// Reader lists AlertChannels (the manager's cache is fine).
	Reader client.Reader
	// BaseURL is the dashboard's base URL for incident and detail links;
	// empty leaves incident_url null.
	BaseURL string
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// EventOptions are the parts of an incident event the incident does not hold.
type EventOptions struct {
	// Region that reported the failure (down events).
	Region string
	// Reason is the failure reason (down events); defaults to the incident's
	// cause.
	Reason string
	// Explanation is the one-line verdict (down events).
	Explanation string
	// Severity of the event for min-severity routing: down (default) or
	// degraded.
	Severity monv1.Severity
	// ResolvedAt ends the incident for monitor.up and incident.resolved when
	// the incident passed in is not resolved yet (the event is built before
	// the store resolves it); defaults to now.
	ResolvedAt time.Time
}

// IncidentEvent builds the outbox event of kind (monitor.down, monitor.up or
// incident.resolved) for inc of monitor m, addressed to every enabled channel
// of m's namespace whose routing covers m and, unless the event is of
// degraded severity, to the monitor's and its group's notificationEmails. inc.ID must be set (the store keeps
// a caller-chosen id), so the payload's incident_id matches the incident.
func (r *Router) IncidentEvent(ctx context.Context, kind string, m *monv1.Monitor, inc store.Incident, opts EventOptions) (store.OutboxEvent, error) {
	if inc.ID == "" {
		return store.OutboxEvent{}, fmt.Errorf("build %s event: the incident needs an id before it is stored", kind)
	}
	facts := r.incidentFacts(m, inc, opts)
	if kind != alertevent.MonitorDown {
		facts.Region, facts.Reason, facts.Explanation = "", "", ""
	}
	p, err := alertevent.NewIncidentPayload(kind, facts)
	if err != nil {
		return store.OutboxEvent{}, err
	}
	sev := opts.Severity
	if sev == "" {
		sev = SeverityDown
	}
	covered := map[string]bool{}
	channels, err := r.channels(ctx, m.Namespace, func(ch *monv1.AlertChannel) bool {
		keep := Accepts(ch.Spec.Type, kind) && Covers(ch.Spec.Routing, m, sev)
		if keep && ch.Spec.Type == monv1.ChannelEmail {
			for _, e := range ch.Spec.Emails {
				covered[strings.ToLower(e)] = true
			}
		}
		return keep
	})
	if err != nil {
		return store.OutboxEvent{}, err
	}
	if sev != SeverityDegraded {
		emails, err := r.monitorEmails(ctx, m)
		if err != nil {
			return store.OutboxEvent{}, err
		}
		for _, e := range emails {
			if !covered[strings.ToLower(e)] {
				covered[strings.ToLower(e)] = true
				channels = append(channels, EmailTargetPrefix+e)
			}
		}
	}
	return newEvent(m.Namespace, kind, p, channels)
}

// monitorEmails are the per-monitor alert recipients of m: its own
// notificationEmails, then its group's. They receive the incident events of
// m at down severity, like a channel without routing; an address an email
// channel already covers is emailed once.
func (r *Router) monitorEmails(ctx context.Context, m *monv1.Monitor) ([]string, error) {
	out := slices.Clone(m.Spec.NotificationEmails)
	if ref := m.Spec.GroupRef; ref != nil {
		var g monv1.MonitorGroup
		err := r.Reader.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: ref.Name}, &g)
		if client.IgnoreNotFound(err) != nil {
			return nil, fmt.Errorf("get monitor group %s: %w", ref.Name, err)
		}
		out = append(out, g.Spec.NotificationEmails...)
	}
	return out, nil
}

// EscalationEvent builds the monitor.down that escalation step (1-based)
// sends. Routing is ignored: the step's named channels receive it, and when
// any of them is a webhook, so does every webhook connection of the
// namespace.
func (r *Router) EscalationEvent(ctx context.Context, m *monv1.Monitor, inc store.Incident, step int, targets []monv1.LocalObjectReference) (store.OutboxEvent, error) {
	if inc.ID == "" {
		return store.OutboxEvent{}, fmt.Errorf("build escalation event: the incident needs an id")
	}
	all, err := r.list(ctx, m.Namespace)
	if err != nil {
		return store.OutboxEvent{}, err
	}
	named := map[string]bool{}
	for _, t := range targets {
		named[t.Name] = true
	}
	webhooks := false
	for i := range all {
		if named[all[i].Name] && all[i].Spec.Type == monv1.ChannelWebhook {
			webhooks = true
		}
	}
	var ids []string
	for i := range all {
		ch := &all[i]
		if ch.Spec.Disabled || !Accepts(ch.Spec.Type, alertevent.MonitorDown) {
			continue
		}
		if named[ch.Name] || (webhooks && ch.Spec.Type == monv1.ChannelWebhook) {
			ids = append(ids, string(ch.UID))
		}
	}
	facts := r.incidentFacts(m, inc, EventOptions{})
	facts.Region, facts.Explanation = "", ""
	return newEvent(m.Namespace, alertevent.MonitorDown, alertevent.NewEscalationPayload(step, facts), ids)
}

// NoticeEvent builds a notice event (expiry, maintenance, last-mile, site
// health, third party). payload is one of the notice payload types. Expiry
// and maintenance notices follow routing: with affected monitors they go to
// channels covering at least one of them, without (a namespace-wide
// maintenance window) to every channel that takes the event. Last-mile,
// site-health and third-party notices go to every webhook connection.
func (r *Router) NoticeEvent(ctx context.Context, namespace, kind string, payload any, affected []*monv1.Monitor) (store.OutboxEvent, error) {
	routed := routedNotice(kind)
	channels, err := r.channels(ctx, namespace, func(ch *monv1.AlertChannel) bool {
		if !Accepts(ch.Spec.Type, kind) {
			return false
		}
		if !routed || len(affected) == 0 {
			return true
		}
		return slices.ContainsFunc(affected, func(m *monv1.Monitor) bool {
			return Covers(ch.Spec.Routing, m, SeverityDown)
		})
	})
	if err != nil {
		return store.OutboxEvent{}, err
	}
	return newEvent(namespace, kind, payload, channels)
}

// TestEvent builds a test event addressed to one channel, for enqueueing
// right after a connection is created. SendTest sends one synchronously.
func TestEvent(namespace, channelID string, now time.Time) (store.OutboxEvent, error) {
	return newEvent(namespace, alertevent.Test, alertevent.NewTestPayload(now), []string{channelID})
}

// Severities of min-severity routing.
const (
	SeverityDown     monv1.Severity = "down"
	SeverityDegraded monv1.Severity = "degraded"
)

// Covers reports whether routing r lets a channel receive events of monitor
// m at severity sev. A nil routing covers everything at down severity.
func Covers(r *monv1.AlertRouting, m *monv1.Monitor, sev monv1.Severity) bool {
	if r == nil {
		return sev != SeverityDegraded
	}
	if sev == SeverityDegraded && r.MinSeverity != SeverityDegraded {
		return false
	}
	has := func(refs []monv1.LocalObjectReference, name string) bool {
		return slices.ContainsFunc(refs, func(ref monv1.LocalObjectReference) bool { return ref.Name == name })
	}
	switch r.Scope {
	case "groups":
		return m.Spec.GroupRef != nil && has(r.Groups, m.Spec.GroupRef.Name)
	case "monitors":
		return has(r.Monitors, m.Name)
	}
	return true
}

// routedNotice reports whether a notice kind follows routing (expiry and
// maintenance); the other notices go to every webhook connection.
func routedNotice(kind string) bool {
	switch kind {
	case alertevent.SSLExpiring, alertevent.DomainExpiring, alertevent.MaintenanceStarted, alertevent.MaintenanceEnded,
		alertevent.SLOBurningFast, alertevent.SLOBurningSlow, alertevent.SLOBudgetExhausted:
		return true
	}
	return false
}

func (r *Router) incidentFacts(m *monv1.Monitor, inc store.Incident, opts EventOptions) alertevent.IncidentFacts {
	name := monitormodel.DisplayName(m)
	if name == "" {
		name = inc.MonitorName
	}
	target := inc.MonitorURL
	if target == "" {
		target = m.Status.Target
	}
	if target == "" {
		target = m.Spec.URL
	}
	reason := opts.Reason
	if reason == "" {
		reason = inc.Cause
	}
	f := alertevent.IncidentFacts{
		MonitorName: name, MonitorURL: target, IncidentID: inc.ID, StartedAt: inc.StartedAt,
		Region: opts.Region, Reason: reason, Explanation: opts.Explanation,
	}
	if f.Region == "" && len(inc.ConfirmingRegions) > 0 {
		f.Region = inc.ConfirmingRegions[0]
	}
	switch {
	case inc.ResolvedAt != nil:
		f.ResolvedAt = *inc.ResolvedAt
	case !opts.ResolvedAt.IsZero():
		f.ResolvedAt = opts.ResolvedAt
	default:
		f.ResolvedAt = r.now()
	}
	f.IncidentURL = r.Link("/incidents/" + inc.ID)
	return f
}

// Link is the dashboard URL of path (which starts with a slash), "" without
// a BaseURL. Notices link to their detail pages with it.
func (r *Router) Link(path string) string {
	if r.BaseURL == "" {
		return ""
	}
	return strings.TrimRight(r.BaseURL, "/") + path
}

func (r *Router) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Router) list(ctx context.Context, namespace string) ([]monv1.AlertChannel, error) {
	var list monv1.AlertChannelList
	if err := r.Reader.List(ctx, &list, client.InNamespace(namespace)); err != nil {
		return nil, fmt.Errorf("list alert channels of %s: %w", namespace, err)
	}
	slices.SortFunc(list.Items, func(a, b monv1.AlertChannel) int { return strings.Compare(a.Name, b.Name) })
	return list.Items, nil
}

// channels returns the uids of the enabled channels of namespace that keep
// accepts.
func (r *Router) channels(ctx context.Context, namespace string, keep func(*monv1.AlertChannel) bool) ([]string, error) {
	all, err := r.list(ctx, namespace)
	if err != nil {
		return nil, err
	}
	var ids []string
	for i := range all {
		ch := &all[i]
		if !ch.Spec.Disabled && ch.DeletionTimestamp.IsZero() && keep(ch) {
			ids = append(ids, string(ch.UID))
		}
	}
	return ids, nil
}

func newEvent(namespace, kind string, payload any, channels []string) (store.OutboxEvent, error) {
	raw, err := json.Marshal(payload)
	if err != nil {
		return store.OutboxEvent{}, fmt.Errorf("encode %s payload: %w", kind, err)
	}
	return store.OutboxEvent{ID: uuid.NewString(), Namespace: namespace, Kind: kind, Payload: raw, Channels: channels}, nil
}
