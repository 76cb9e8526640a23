package integrations

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/go-chi/chi/v5"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/alerting"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/credentials"
	"github.com/uptime-operator/uptime-operator/internal/httpjson"
	"github.com/uptime-operator/uptime-operator/internal/netguard"
	"github.com/uptime-operator/uptime-operator/internal/plans"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
)

// Alert channels ("integrations") map onto AlertChannel CRs. Secret channel
// fields (tokens, keys, chat webhook URLs that embed tokens) go to a Secret
// "<channel>-credentials" the API creates and the channel references; a
// webhook channel's signing secret is generated here, returned once, and
// kept where the AlertChannel controller would keep one it generated
// (monv1.SigningSecretName, key monv1.SigningSecretKey). Channels created
// before name key "secret" in their reference, which keeps working. Both
// Secrets are owned by the channel, so deleting it removes them.

const (
	maxConnectionsPerType = 10
	credentialsSuffix     = "-credentials"
)

// channelFields are the body fields of each channel type.
var channelFields = map[monv1.AlertChannelType][]string{
	monv1.ChannelWebhook: {"webhook_url"}, monv1.ChannelSlack: {"webhook_url"}, monv1.ChannelDiscord: {"webhook_url"},
	monv1.ChannelTeams: {"webhook_url"}, monv1.ChannelGoogleChat: {"webhook_url"}, monv1.ChannelMattermost: {"webhook_url"},
	monv1.ChannelZapier: {"webhook_url"}, monv1.ChannelPagerDuty: {"integration_key"}, monv1.ChannelOpsgenie: {"api_key", "region"},
	monv1.ChannelTelegram: {"chat_id"}, monv1.ChannelGitHub: {"repository", "token"}, monv1.ChannelSMS: {"to"},
	monv1.ChannelVoice: {"to"}, monv1.ChannelWhatsApp: {"to"}, monv1.ChannelEmail: {"emails"},
}

// channelFeature is the plan feature a channel type needs, if any.
func channelFeature(t monv1.AlertChannelType) monv1.Feature {
	switch t {
	case monv1.ChannelWebhook:
		return monv1.FeatureWebhooks
	case monv1.ChannelSMS, monv1.ChannelVoice, monv1.ChannelWhatsApp:
		return monv1.FeatureSMS
	}
	return ""
}

// secretField reports whether a field of type t is kept in a Secret.
func secretField(t monv1.AlertChannelType, f string) bool {
	switch f {
	case "integration_key", "api_key", "token":
		return true
	case "webhook_url":
		return t != monv1.ChannelWebhook
	}
	return false
}

// maxRoutingIDs is the longest list of group ids, and of monitor ids, a
// connection's routing names (docs/rest-api.md, Alert channels).
const maxRoutingIDs = 500

// routingFrom is the routing b describes; field names of its errors start
// with prefix. It refuses an over-limit list before looking up any id and
// resolves the rest with core.Deps.RefsByID (bounded reads).
func (h *Handlers) routingFrom(ctx context.Context, ns string, b *restapi.Routing, prefix string) (*monv1.AlertRouting, error) {
	var errs []core.FieldError
	rt := &monv1.AlertRouting{Scope: monv1.RoutingScope(b.Scope), MinSeverity: monv1.Severity(b.MinSeverity)}
	if rt.Scope == "" {
		rt.Scope = "all"
	}
	if rt.MinSeverity == "" {
		rt.MinSeverity = "down"
	}
	if !slices.Contains([]monv1.RoutingScope{"all", "groups", "monitors"}, rt.Scope) {
		errs = append(errs, core.FieldErr(prefix+"scope", "must be all, groups or monitors"))
	}
	if rt.MinSeverity != "down" && rt.MinSeverity != "degraded" {
		errs = append(errs, core.FieldErr(prefix+"min_severity", "must be down or degraded"))
	}
	over := false
	for _, ae := range []*core.Error{
		core.TooManyIDs(prefix+"group_ids", len(b.GroupIDs), maxRoutingIDs, "monitor groups"),
		core.TooManyIDs(prefix+"monitor_ids", len(b.MonitorIDs), maxRoutingIDs, "monitors"),
	} {
		if ae != nil {
			errs, over = append(errs, ae.Body.Errors...), true
		}
	}
	if over {
		return nil, core.ValidationError(errs...)
	}
	groups, gerrs, err := h.d.RefsByID(ctx, &monv1.MonitorGroupList{}, ns, b.GroupIDs, prefix+"group_ids", "monitor group")
	if err != nil {
		return nil, err
	}
	monitors, merrs, err := h.d.RefsByID(ctx, &monv1.MonitorList{}, ns, b.MonitorIDs, prefix+"monitor_ids", "monitor")
	if err != nil {
		return nil, err
	}
	rt.Groups, rt.Monitors = groups, monitors
	errs = append(append(errs, gerrs...), merrs...)
	if rt.Scope == "groups" && len(rt.Groups) == 0 && len(errs) == 0 {
		errs = append(errs, core.FieldErr(prefix+"group_ids", "is required when scope is groups"))
	}
	if rt.Scope == "monitors" && len(rt.Monitors) == 0 && len(errs) == 0 {
		errs = append(errs, core.FieldErr(prefix+"monitor_ids", "is required when scope is monitors"))
	}
	if len(errs) > 0 {
		return nil, core.ValidationError(errs...)
	}
	return rt, nil
}

// connectionBody is a decoded connection body: the channel fields as
// strings (emails as a list), plus name and routing.
type connectionBody struct {
	fields  map[string]string
	emails  []string
	name    *string
	routing *restapi.Routing
}

func decodeConnection(r *http.Request, t monv1.AlertChannelType) (*connectionBody, error) {
	var raw map[string]json.RawMessage
	if err := core.DecodeJSON(r, &raw, false); err != nil {
		return nil, err
	}
	b := &connectionBody{fields: map[string]string{}}
	var errs []core.FieldError
	for k, v := range raw {
		switch {
		case k == "name":
			var n string
			if json.Unmarshal(v, &n) != nil || len(n) > 60 {
				errs = append(errs, core.FieldErr("name", "must be a string of up to 60 characters"))
			}
			b.name = &n
		case k == "routing":
			var rb restapi.Routing
			if err := core.DecodeBytes(v, &rb, true, "routing."); err != nil {
				return nil, err
			}
			b.routing = &rb
		case k == "emails" && t == monv1.ChannelEmail:
			if json.Unmarshal(v, &b.emails) != nil {
				errs = append(errs, core.FieldErr("emails", "must be an array of email addresses"))
			}
		case slices.Contains(channelFields[t], k):
			var sv string
			if json.Unmarshal(v, &sv) != nil {
				errs = append(errs, core.FieldErr(k, "must be a string"))
			}
			b.fields[k] = strings.TrimSpace(sv)
		default:
			errs = append(errs, core.FieldErr(k, "unknown field for %s connections", t))
		}
	}
	if len(errs) > 0 {
		return nil, core.ValidationError(errs...)
	}
	return b, nil
}

// channelFieldPath maps AlertChannel field paths to connection fields.
func channelFieldPath(p string) string {
	p = strings.TrimPrefix(strings.TrimPrefix(p, "spec"), ".")
	switch {
	case strings.HasPrefix(p, "webhookURL"):
		return "webhook_url"
	case strings.HasPrefix(p, "integrationKey"):
		return "integration_key"
	case strings.HasPrefix(p, "apiKey"):
		return "api_key"
	case strings.HasPrefix(p, "chatID"):
		return "chat_id"
	case strings.HasPrefix(p, "token"):
		return "token"
	case strings.HasPrefix(p, "routing.groups"):
		return "routing.group_ids"
	case strings.HasPrefix(p, "routing.monitors"):
		return "routing.monitor_ids"
	}
	return core.SnakePath(p)
}

// applyConnection writes the fields of b onto ch and returns the secret
// values to store. Blank secret fields keep the stored value.
func applyConnection(ch *monv1.AlertChannel, b *connectionBody, create bool) (map[string]string, error) {
	t := ch.Spec.Type
	secrets := map[string]string{}
	var errs []core.FieldError
	for _, f := range channelFields[t] {
		if f == "emails" {
			if b.emails != nil {
				ch.Spec.Emails = b.emails
			}
			if create && len(ch.Spec.Emails) == 0 {
				errs = append(errs, core.FieldErr("emails", "is required for %s connections", t))
			}
			continue
		}
		v, sent := b.fields[f]
		if v == "" {
			if create {
				errs = append(errs, core.FieldErr(f, "is required for %s connections", t))
			} else if sent && !secretField(t, f) {
				errs = append(errs, core.FieldErr(f, "must not be empty"))
			}
			continue
		}
		ref := &monv1.SecretKeySelector{Name: ch.Name + credentialsSuffix, Key: f}
		switch f {
		case "webhook_url":
			// A generic webhook's URL is stored as written unless it
			// carries a credential (view reads AlertChannels).
			if secretField(t, f) || credentials.ChannelURLIsSecret(t, v) {
				ch.Spec.WebhookURL, ch.Spec.WebhookURLFrom, secrets[f] = "", ref, v
			} else {
				ch.Spec.WebhookURL, ch.Spec.WebhookURLFrom = v, nil
			}
		case "integration_key":
			ch.Spec.IntegrationKeyFrom, secrets[f] = ref, v
		case "api_key":
			ch.Spec.APIKeyFrom, secrets[f] = ref, v
		case "token":
			ch.Spec.TokenFrom, secrets[f] = ref, v
		case "region":
			ch.Spec.Region = strings.ToLower(v)
		case "chat_id":
			ch.Spec.ChatID = v
		case "repository":
			ch.Spec.Repository = v
		case "to":
			ch.Spec.To = v
		}
	}
	if b.name != nil {
		ch.Spec.Name = *b.name
	}
	if len(errs) > 0 {
		return nil, core.ValidationError(errs...)
	}
	return secrets, nil
}

// putSecret creates or updates a Secret owned by ch.
func (h *Handlers) putSecret(ctx context.Context, ch *monv1.AlertChannel, name string, data map[string]string) error {
	return h.d.PutOwnedSecret(ctx, ch, "AlertChannel", name, data)
}

func (h *Handlers) createConnection(w http.ResponseWriter, r *http.Request) {
	ctx, c := r.Context(), core.CallerFrom(r.Context())
	t := monv1.AlertChannelType(strings.ToLower(chi.URLParam(r, "type")))
	if _, ok := channelFields[t]; !ok {
		core.WriteNotFound(w, "Channel type")
		return
	}
	if f := channelFeature(t); f != "" {
		if ae := h.d.RequireFeature(ctx, c.Namespace, f); ae != nil {
			httpjson.Write(w, ae.Status, ae.Body)
			return
		}
	}
	b, err := decodeConnection(r, t)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	ch := &monv1.AlertChannel{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: string(t) + "-" + utilrand.String(6)},
		Spec: monv1.AlertChannelSpec{Type: t}}
	secrets, err := applyConnection(ch, b, true)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	if b.routing != nil {
		if ch.Spec.Routing, err = h.routingFrom(ctx, c.Namespace, b.routing, "routing."); err != nil {
			core.WriteErr(w, r, err)
			return
		}
	}
	if t == monv1.ChannelWebhook {
		if err := h.checkEndpoint(ctx, b.fields["webhook_url"]); err != nil {
			core.WriteErr(w, r, err)
			return
		}
	}
	var signing string
	if t == monv1.ChannelWebhook {
		if signing, err = monv1.NewSigningSecret(); err != nil {
			core.WriteErr(w, r, err)
			return
		}
		ch.Spec.SigningSecretRef = &monv1.SecretKeySelector{Name: monv1.SigningSecretName(ch.Name), Key: monv1.SigningSecretKey}
	}
	if err := h.d.Client.Create(ctx, ch); err != nil {
		core.WriteErr(w, r, h.d.WriteFailed(ctx, c.Namespace, err, channelFieldPath))
		return
	}
	if err := h.channelSecrets(ctx, ch, secrets, signing); err != nil {
		_ = h.d.Client.Delete(ctx, ch)
		core.WriteErr(w, r, err)
		return
	}
	out := restapi.ConnectionCreated{Success: true, Message: "Connection created", ConnectionID: string(ch.UID),
		Name: ch.Spec.Name, IntegrationType: string(t), SigningSecret: signing}
	if out.Name == "" {
		out.Name = string(t)
	}
	httpjson.Write(w, http.StatusCreated, out)
}

func (h *Handlers) channelSecrets(ctx context.Context, ch *monv1.AlertChannel, secrets map[string]string, signing string) error {
	if len(secrets) > 0 {
		if err := h.putSecret(ctx, ch, ch.Name+credentialsSuffix, secrets); err != nil {
			return fmt.Errorf("store channel credentials: %w", err)
		}
	}
	if signing != "" {
		ref := ch.Spec.SigningSecretRef
		if err := h.putSecret(ctx, ch, ref.Name, map[string]string{ref.Key: signing}); err != nil {
			return fmt.Errorf("store signing secret: %w", err)
		}
	}
	return nil
}

// checkEndpoint applies the connection-time checks of a webhook endpoint
// that need the network (its host resolves, it does not redirect) when a
// connection is created or its URL changes; a rejection is the validation
// error of the webhook_url field. Private addresses pass here only where
// the cluster setting (dev mode) allows them.
func (h *Handlers) checkEndpoint(ctx context.Context, raw string) error {
	var ee *alerting.EndpointError
	if err := alerting.CheckWebhookEndpoint(ctx, raw, netguard.Guard{AllowPrivate: h.allowPrivateTargets}); errors.As(err, &ee) {
		return core.ValidationError(core.FieldErr("webhook_url", "%s", ee.Message))
	}
	return nil
}

func (h *Handlers) pathChannel(w http.ResponseWriter, r *http.Request) *monv1.AlertChannel {
	return core.PathObject[*monv1.AlertChannel](h.d, w, r, &monv1.AlertChannelList{}, "connectionId", "Connection")
}

func (h *Handlers) updateConnection(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	ch := h.pathChannel(w, r)
	if ch == nil {
		return
	}
	b, err := decodeConnection(r, ch.Spec.Type)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	var routing *monv1.AlertRouting
	if b.routing != nil {
		if routing, err = h.routingFrom(ctx, ch.Namespace, b.routing, "routing."); err != nil {
			core.WriteErr(w, r, err)
			return
		}
	}
	if u := b.fields["webhook_url"]; ch.Spec.Type == monv1.ChannelWebhook && u != "" && (u != ch.Spec.WebhookURL || ch.Spec.WebhookURLFrom != nil) {
		if err := h.checkEndpoint(ctx, u); err != nil {
			core.WriteErr(w, r, err)
			return
		}
	}
	var secrets map[string]string
	err = h.d.Mutate(ctx, ch, func() error {
		var err error
		secrets, err = applyConnection(ch, b, false)
		if routing != nil {
			ch.Spec.Routing = routing
		}
		return err
	})
	if err == nil {
		err = h.channelSecrets(ctx, ch, secrets, "")
	}
	if err != nil {
		core.WriteErr(w, r, h.d.WriteFailed(ctx, ch.Namespace, err, channelFieldPath))
		return
	}
	h.writeChannel(w, r, ch)
}

func (h *Handlers) deleteConnection(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	ch := h.pathChannel(w, r)
	if ch == nil {
		return
	}
	if err := h.d.DeleteObject(ctx, ch); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	// Only the Secrets the channel owns go with it (DeleteOwnedSecret): a
	// Secret that merely has the name of one stays.
	for _, name := range []string{ch.Name + credentialsSuffix, monv1.SigningSecretName(ch.Name)} {
		if err := h.d.DeleteOwnedSecret(ctx, ch, name); err != nil {
			core.LogFrom(ctx).Error(err, "unable to delete a connection's secret", "connection", ch.Name, "secret", name)
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

func (h *Handlers) putRouting(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	var b restapi.Routing
	if err := core.DecodeJSON(r, &b, true); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	// The body first: an over-limit list is refused before any lookup.
	routing, err := h.routingFrom(ctx, core.CallerFrom(ctx).Namespace, &b, "")
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	ch := h.pathChannel(w, r)
	if ch == nil {
		return
	}
	if err := h.d.Mutate(ctx, ch, func() error { ch.Spec.Routing = routing; return nil }); err != nil {
		core.WriteErr(w, r, h.d.WriteFailed(ctx, ch.Namespace, err, channelFieldPath))
		return
	}
	h.writeChannel(w, r, ch)
}

func (h *Handlers) testConnection(w http.ResponseWriter, r *http.Request) {
	ch := h.pathChannel(w, r)
	if ch == nil {
		return
	}
	if h.channelTester == nil {
		core.WriteError(w, http.StatusServiceUnavailable, core.CodeChannelUnavailable, "test alerts cannot be sent right now")
		return
	}
	if err := h.channelTester.TestChannel(r.Context(), ch); err != nil {
		httpjson.Write(w, http.StatusOK, restapi.Success{Success: false, Message: err.Error()})
		return
	}
	httpjson.Write(w, http.StatusOK, restapi.Success{Success: true, Message: "Test alert sent"})
}

func (h *Handlers) channelObject(ch *monv1.AlertChannel, groups, monitors *core.ObjectUIDs) restapi.Channel {
	status := "active"
	switch {
	case ch.Spec.Disabled:
		status = "disabled"
	case ch.Status.ConsecutiveFailures >= 3:
		status = "failing"
	}
	rt := restapi.ChannelRouting{Scope: "all", GroupIDs: []string{}, MonitorIDs: []string{}, MinSeverity: "down"}
	if r := ch.Spec.Routing; r != nil {
		if r.Scope != "" {
			rt.Scope = string(r.Scope)
		}
		if r.MinSeverity != "" {
			rt.MinSeverity = string(r.MinSeverity)
		}
		ids := func(refs []monv1.LocalObjectReference, idx *core.ObjectUIDs) []string {
			out := []string{}
			for _, ref := range refs {
				if u := idx.UIDOf(ref.Name); u != nil {
					out = append(out, *u)
				}
			}
			return out
		}
		rt.GroupIDs, rt.MonitorIDs = ids(r.Groups, groups), ids(r.Monitors, monitors)
	}
	name := ch.Spec.Name
	if name == "" {
		name = string(ch.Spec.Type)
	}
	return restapi.Channel{ID: string(ch.UID), Type: string(ch.Spec.Type), Name: name, Status: status, Routing: rt,
		ConsecutiveFailures: ch.Status.ConsecutiveFailures, LastDeliveryAt: core.MetaTimePtr(ch.Status.LastDeliveryAt),
		LastDeliveryStatus: core.StrPtr(ch.Status.LastDeliveryStatus), CreatedAt: core.ISOTime(ch.CreationTimestamp.Time)}
}

func (h *Handlers) writeChannel(w http.ResponseWriter, r *http.Request, ch *monv1.AlertChannel) {
	groups, err := h.d.UIDIndex(r.Context(), &monv1.MonitorGroupList{}, ch.Namespace)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	monitors, err := h.d.UIDIndex(r.Context(), &monv1.MonitorList{}, ch.Namespace)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, h.channelObject(ch, groups, monitors))
}

func (h *Handlers) listIntegrations(w http.ResponseWriter, r *http.Request) {
	ctx, c := r.Context(), core.CallerFrom(r.Context())
	var list monv1.AlertChannelList
	if err := h.d.List(ctx, &list, c.Namespace); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	plan, err := h.d.Plans.ForNamespace(ctx, c.Namespace)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	groups, err := h.d.UIDIndex(ctx, &monv1.MonitorGroupList{}, c.Namespace)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	monitors, err := h.d.UIDIndex(ctx, &monv1.MonitorList{}, c.Namespace)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	conns := []restapi.Channel{}
	count := map[monv1.AlertChannelType]int{}
	for i := range list.Items {
		ch := &list.Items[i]
		if ch.DeletionTimestamp != nil {
			continue
		}
		count[ch.Spec.Type]++
		conns = append(conns, h.channelObject(ch, groups, monitors))
	}
	slices.SortFunc(conns, func(a, b restapi.Channel) int { return strings.Compare(a.CreatedAt, b.CreatedAt) })
	types := []restapi.ChannelType{}
	names := make([]string, 0, len(channelFields))
	for t := range channelFields {
		names = append(names, string(t))
	}
	slices.Sort(names)
	for _, n := range names {
		t := monv1.AlertChannelType(n)
		f := channelFeature(t)
		types = append(types, restapi.ChannelType{Type: n, Fields: channelFields[t], Connections: count[t],
			MaxConnections: maxConnectionsPerType, Available: f == "" || plans.HasFeature(plan, f)})
	}
	httpjson.Write(w, http.StatusOK, restapi.Integrations{Types: types, Connections: conns})
}

// rotateSigningSecret replaces a webhook channel's signing secret. The new
// secret is returned once; the old one stops signing at once.
func (h *Handlers) rotateSigningSecret(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	ch := h.pathChannel(w, r)
	if ch == nil {
		return
	}
	if ch.Spec.Type != monv1.ChannelWebhook {
		core.WriteValidation(w, core.FieldErr("type", "only webhook connections have a signing secret"))
		return
	}
	ref := ch.SigningSecret()
	if ref == nil {
		ref = &monv1.SecretKeySelector{Name: monv1.SigningSecretName(ch.Name), Key: monv1.SigningSecretKey}
	}
	secret, err := monv1.NewSigningSecret()
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	if err := h.putSecret(ctx, ch, ref.Name, map[string]string{ref.Key: secret}); err != nil {
		core.WriteErr(w, r, fmt.Errorf("store signing secret: %w", err))
		return
	}
	httpjson.Write(w, http.StatusOK, restapi.SigningSecret{ConnectionID: string(ch.UID), SigningSecret: secret,
		RotatedAt: core.ISOTime(h.d.Clock.Now())})
}
