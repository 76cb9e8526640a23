package monitors

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/credentials"
	"github.com/uptime-operator/uptime-operator/internal/engine"
	"github.com/uptime-operator/uptime-operator/internal/httpjson"
	"github.com/uptime-operator/uptime-operator/internal/monitor"
	"github.com/uptime-operator/uptime-operator/internal/netguard"
	"github.com/uptime-operator/uptime-operator/internal/plans"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// bodyMode says which endpoint a monitor body came from.
type bodyMode int

const (
	modeCreate bodyMode = iota
	modeUpdate
	modeCode // monitoring as code: regions and notification emails managed
)

// applyMonitorBody writes the sent fields of b onto m. On update only sent
// fields change; config keys are merged (null removes a key). An update
// that moves the monitor's target to another origin drops the stored
// credentials it does not send again (package credentials, "A credential
// stays with its origin"); the returned warnings name them. The Secret
// references the write makes must be ones its caller may make
// (checkSecretRefs).
func (h *Handlers) applyMonitorBody(ctx context.Context, m *monv1.Monitor, b *core.MonitorBody, mode bodyMode) ([]string, error) {
	var errs []core.FieldError
	spec := &m.Spec
	var was *monv1.MonitorSpec
	if mode != modeCreate {
		was = spec.DeepCopy()
	}
	if b.Type.Set {
		t := monv1.MonitorType(strings.ToLower(b.Type.Value()))
		switch {
		case mode == modeUpdate && t != spec.Type:
			errs = append(errs, core.FieldErr("type", "cannot change after creation"))
		case !slices.Contains(monv1.MonitorTypes, t):
			errs = append(errs, core.FieldErr("type", "must be one of %s", strings.Join(monv1.MonitorTypeNames(), ", ")))
		default:
			spec.Type = t
		}
	}
	spec.Type = core.TypeOrDefault(spec.Type)
	if b.Name.Set {
		spec.Name = strings.TrimSpace(b.Name.Value())
		if spec.Name == "" {
			errs = append(errs, core.FieldErr("name", "must be 1-255 characters"))
		}
	} else if mode == modeCreate {
		errs = append(errs, core.FieldErr("name", "is required"))
	}
	if b.URL.Set {
		spec.URL = strings.TrimSpace(b.URL.Value())
	}
	if b.IntervalSeconds.Set {
		spec.IntervalSeconds = b.IntervalSeconds.Value()
		if b.IntervalSeconds.Null {
			spec.IntervalSeconds = 0
		}
	}
	if b.IsActive.Set && !b.IsActive.Null {
		spec.Paused = !b.IsActive.Value()
	}
	if b.Paused.Set && !b.Paused.Null && mode == modeCode {
		spec.Paused = b.Paused.Value()
	}
	if b.Tags.Set {
		spec.Tags = monitor.NormalizeTags(b.Tags.Value())
	}
	if b.Regions.Set {
		regions := b.Regions.Value()
		switch {
		case mode == modeUpdate && !slices.Equal(regions, spec.Regions):
			errs = append(errs, core.FieldErr("regions", "regions change only via PUT /monitors/:id/regions"))
		case mode == modeCode && b.Regions.Null:
			spec.Regions = nil
		case len(regions) == 0 && !b.Regions.Null:
			errs = append(errs, core.FieldErr("regions", "must have 1-50 region codes"))
		default:
			spec.Regions = regions
		}
	}
	if b.GroupID.Set {
		if b.GroupID.Null || b.GroupID.Value() == "" {
			spec.GroupRef = nil
		} else if obj, err := h.d.FindByUID(ctx, &monv1.MonitorGroupList{}, m.Namespace, b.GroupID.Value()); err == nil {
			spec.GroupRef = &monv1.LocalObjectReference{Name: obj.GetName()}
		} else if errors.Is(err, core.ErrNotFound) {
			errs = append(errs, core.FieldErr("group_id", "monitor group not found"))
		} else {
			return nil, err
		}
	}
	if b.EscalationPolicyID.Set {
		if b.EscalationPolicyID.Null || b.EscalationPolicyID.Value() == "" {
			spec.EscalationPolicyRef = nil
		} else if obj, err := h.d.FindByUID(ctx, &monv1.EscalationPolicyList{}, m.Namespace, b.EscalationPolicyID.Value()); err == nil {
			spec.EscalationPolicyRef = &monv1.LocalObjectReference{Name: obj.GetName()}
		} else if errors.Is(err, core.ErrNotFound) {
			errs = append(errs, core.FieldErr("escalation_policy_id", "escalation policy not found"))
		} else {
			return nil, err
		}
	}
	if b.Key.Set && mode == modeCode {
		spec.Key = b.Key.Value()
	}
	if len(errs) > 0 {
		return nil, core.ValidationError(errs...)
	}
	// The config: sent keys are merged over the current ones, unless the
	// type changed (then the new config stands alone).
	var cur *monv1.MonitorSpec
	if mode != modeCreate {
		cur = spec.DeepCopy()
	}
	sent := map[string]json.RawMessage{}
	if b.Config.Set && !b.Config.Null {
		sent = b.Config.Value()
		if fe := checkConfigLimits(sent); fe != nil {
			return nil, core.ValidationError(fe...)
		}
	}
	if emails, ok := sent[core.ConfigNotificationEmails]; ok {
		delete(sent, core.ConfigNotificationEmails)
		// Per-monitor alert recipients are owner-only through /monitors: an
		// API key's value is ignored. Monitoring as code sets them (the
		// Automation check is the caller's).
		if mode == modeCode {
			var list []string
			if string(emails) != "null" {
				if err := json.Unmarshal(emails, &list); err != nil {
					return nil, core.ValidationError(core.FieldErr("config.notification_emails", "must be an array of email addresses"))
				}
			}
			spec.NotificationEmails = list
		}
	}
	if b.Config.Set && b.Config.Null {
		cur = nil // null config: the type's defaults alone
	}
	urlMoved := mode == modeUpdate && !credentials.SameOrigin(was.URL, spec.URL)
	dropped, err := updatedConfig(spec, cur, sent, urlMoved)
	if err != nil {
		return nil, err
	}
	if err := h.creds.checkRefs(ctx, m, was); err != nil {
		return nil, err
	}
	var warnings []string
	for _, p := range dropped {
		warnings = append(warnings, p+": the stored credential was dropped because the target origin changed; send it again to use it with the new target")
	}
	return warnings, nil
}

// validateMonitor applies the defaults and the pure validation of package
// monitor, which the admission webhooks call too, so the REST API refuses
// what admission would, with the REST field names.
func (h *Handlers) validateMonitor(ctx context.Context, m *monv1.Monitor) error {
	plan, err := h.d.Plans.ForNamespace(ctx, m.Namespace)
	if err != nil {
		return err
	}
	monitor.DefaultMonitor(m, plan)
	guard := netguard.Guard{AllowPrivate: h.allowPrivateTargets}
	errs := monitor.ValidateMonitorSpec(ctx, &m.Spec, guard, field.NewPath("spec"))
	if min := plans.MinIntervalSeconds(plan); m.Spec.IntervalSeconds < min {
		errs = append(errs, field.Invalid(field.NewPath("spec", "intervalSeconds"), m.Spec.IntervalSeconds,
			fmt.Sprintf("must not be below the plan's minimum interval of %d seconds", min)))
	}
	if len(errs) > 0 {
		return core.ValidationError(core.FromFieldErrors(errs, core.MonitorFieldPath)...)
	}
	return nil
}

// monitorRefs resolves what monitor objects reference, once per request.
type monitorRefs struct {
	h          *Handlers
	ns         string
	groups     *core.ObjectUIDs
	policies   *core.ObjectUIDs
	plan       *monv1.Plan
	regions    []string
	loaded     bool
	planLoaded bool
}

func (h *Handlers) refs(ns string) *monitorRefs { return &monitorRefs{h: h, ns: ns} }

func (x *monitorRefs) load(ctx context.Context) error {
	if x.loaded {
		return nil
	}
	if err := x.loadPlan(ctx); err != nil {
		return err
	}
	var err error
	if x.groups, err = x.h.d.UIDIndex(ctx, &monv1.MonitorGroupList{}, x.ns); err != nil {
		return err
	}
	if x.policies, err = x.h.d.UIDIndex(ctx, &monv1.EscalationPolicyList{}, x.ns); err != nil {
		return err
	}
	x.loaded = true
	return nil
}

// loadPlan reads the workspace's plan and the regions: what the default
// regions come from. load also reads the groups and escalation policies
// that references resolve to; a monitor without references needs only
// this (GET /monitors/:id).
func (x *monitorRefs) loadPlan(ctx context.Context) error {
	if x.planLoaded {
		return nil
	}
	var err error
	if x.plan, err = x.h.d.Plans.ForNamespace(ctx, x.ns); err != nil {
		return err
	}
	if x.regions, err = monitor.RegionCodes(ctx, x.h.d.Client); err != nil {
		return err
	}
	x.planLoaded = true
	return nil
}

// refUID returns the uid of a referenced object, reading the API server when
// the cache has not seen it yet.
func (x *monitorRefs) refUID(ctx context.Context, idx *core.ObjectUIDs, obj client.Object, ref *monv1.LocalObjectReference) *string {
	if ref == nil {
		return nil
	}
	if u := idx.UIDOf(ref.Name); u != nil {
		return u
	}
	if err := x.h.d.Reader.Get(ctx, client.ObjectKey{Namespace: x.ns, Name: ref.Name}, obj); err == nil {
		u := string(obj.GetUID())
		return &u
	}
	return nil
}

// monitorObject renders m. With uptime, the 24 h and 30 d uptime are
// computed from the store rather than read from status.
func (h *Handlers) monitorObject(ctx context.Context, m *monv1.Monitor, x *monitorRefs, uptime bool) (*restapi.Monitor, error) {
	if err := x.load(ctx); err != nil {
		return nil, err
	}
	st := &m.Status
	out := &restapi.Monitor{
		ID: string(m.UID), Name: m.Spec.Name, Type: string(core.TypeOrDefault(m.Spec.Type)), URL: core.StrPtr(m.Spec.URL),
		IntervalSeconds: m.Spec.IntervalSeconds, IsActive: !m.Spec.Paused,
		GroupID:            x.refUID(ctx, x.groups, &monv1.MonitorGroup{}, m.Spec.GroupRef),
		EscalationPolicyID: x.refUID(ctx, x.policies, &monv1.EscalationPolicy{}, m.Spec.EscalationPolicyRef),
		Tags:               core.NonNil(m.Spec.Tags), Regions: core.NonNil(m.Spec.Regions), Config: h.configs.get(m),
		Key: core.StrPtr(m.Spec.Key), CreatedAt: core.ISOTime(m.CreationTimestamp.Time),
		CurrentStatus: string(st.CurrentStatus), LastStatus: core.StrPtr(st.LastStatus),
		LastCheckedAt: core.MetaTimePtr(st.LastCheckedAt), LastResponseTimeMs: st.LastResponseTimeMs,
		LastError: core.StrPtr(st.LastError), UnderMaintenance: st.UnderMaintenance,
		Uptime24h: monitor.ParsePercent(st.Uptime24h), Uptime30d: monitor.ParsePercent(st.Uptime30d),
		EffectiveTimeoutMs: st.EffectiveTimeoutMs, EffectiveRegions: st.EffectiveRegions,
	}
	switch {
	case m.Spec.Paused:
		out.CurrentStatus = string(monv1.StatusPaused)
	case out.CurrentStatus == "" || out.CurrentStatus == string(monv1.StatusPaused):
		out.CurrentStatus = string(monv1.StatusPending)
	}
	if oi := st.OpenIncident; oi != nil {
		out.OpenIncident = &restapi.OpenIncident{ID: oi.ID, StartedAt: core.ISOTime(oi.StartedAt.Time)}
	}
	if out.EffectiveTimeoutMs == 0 {
		out.EffectiveTimeoutMs = monitor.EffectiveTimeoutMs(&m.Spec)
	}
	if len(out.EffectiveRegions) == 0 {
		// Not reconciled yet: compute what the controller will write.
		out.EffectiveRegions = monitor.EffectiveRegions(&m.Spec, x.plan, x.regions)
	}
	out.EffectiveRegions = core.NonNil(out.EffectiveRegions)
	if m.Spec.Type == monv1.MonitorCron {
		tok, err := h.creds.heartbeatToken(ctx, m)
		if err != nil {
			return nil, err
		}
		out.HeartbeatURL = h.heartbeatURL(tok)
	}
	if uptime && h.st != nil {
		var err error
		if out.Uptime24h, out.Uptime30d, err = h.uptimes.get(ctx, h, string(m.UID)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// uptimeCache keeps the 24 h and 30 d uptime of each monitor that GET
// /monitors/:id computed, for as long as it is exact. The windows end at
// the end of the current minute (store.UptimeWindowEnd), so the answer
// changes only when the minute turns or the monitor's rollups change; a
// store that numbers those changes (uptimeVersioner: SQLite, the only
// writer of its file) lets an entry be reused until its version moves.
// Without one (PostgreSQL, where other replicas ingest too) nothing is
// kept and every request asks the store, in one query.
type uptimeCache struct {
	mu      sync.Mutex
	entries map[string]uptimeEntry
	// off disables reuse (benchmarks of the store path).
	off bool
}

// uptimeVersioner is a store that numbers the changes of each monitor's
// rollups (see sqlite.Store.UptimeVersion). ok is false when it cannot
// tell.
type uptimeVersioner interface {
	UptimeVersion(monitorID string) (version uint64, ok bool)
}

type uptimeEntry struct {
	to       time.Time
	version  uint64
	day, mon *float64
}

// maxUptimeEntries bounds the cache; it starts over when full.
const maxUptimeEntries = 200_000

func (u *uptimeCache) get(ctx context.Context, h *Handlers, uid string) (day, mon *float64, err error) {
	to := store.UptimeWindowEnd(h.d.Clock.Now())
	// The version is read before the store: a change that commits in
	// between gives a newer version at the next request.
	var version uint64
	versioned := false
	if v, ok := h.st.(uptimeVersioner); ok && !u.off {
		version, versioned = v.UptimeVersion(uid)
	}
	if versioned {
		u.mu.Lock()
		e, ok := u.entries[uid]
		u.mu.Unlock()
		if ok && e.version == version && e.to.Equal(to) {
			return e.day, e.mon, nil
		}
	}
	ps, err := h.st.UptimeWindows(ctx, uid, to, 30*24*time.Hour, 24*time.Hour)
	if err != nil {
		return nil, nil, err
	}
	mon, day = ps[0], ps[1]
	if versioned {
		u.mu.Lock()
		if u.entries == nil || len(u.entries) >= maxUptimeEntries {
			u.entries = map[string]uptimeEntry{}
		}
		u.entries[uid] = uptimeEntry{to: to, version: version, day: day, mon: mon}
		u.mu.Unlock()
	}
	return day, mon, nil
}

// heartbeatURL is the public ping URL of heartbeat token tok, or nil
// when there is no token (not a cron monitor, or none minted yet).
func (h *Handlers) heartbeatURL(tok string) *string {
	if tok == "" {
		return nil
	}
	u := strings.TrimSuffix(h.publicURL, "/") + monv1.HeartbeatPath(tok)
	return &u
}

// --- handlers ---------------------------------------------------------------

// configCache keeps the encoded REST "config" of each monitor's spec
// generation: building it is a JSON round trip, and a list of 10,000
// monitors would otherwise redo it for every monitor on every request.
type configCache struct {
	mu      sync.Mutex
	entries map[types.UID]configEntry
}

type configEntry struct {
	generation int64
	config     json.RawMessage
}

// encodeConfig is the config of m as responses show it: configOf of the
// redacted spec (credentials read [REDACTED]) as JSON (an object, keys
// sorted).
func encodeConfig(m *monv1.Monitor) json.RawMessage {
	raw, err := json.Marshal(core.ConfigObject(credentials.Redact(&m.Spec, m.Name)))
	if err != nil {
		// configOf holds only encoded values; this cannot happen.
		panic(fmt.Sprintf("encode monitor config: %v", err))
	}
	return raw
}

// maxConfigEntries bounds the cache; it starts over when full.
const maxConfigEntries = 100_000

// get returns the encoded config of m, cached by UID and generation (which
// moves with every spec change). The bytes returned are shared: callers
// only read them.
func (c *configCache) get(m *monv1.Monitor) json.RawMessage {
	if m.UID == "" || m.Generation == 0 {
		return encodeConfig(m)
	}
	c.mu.Lock()
	e, ok := c.entries[m.UID]
	c.mu.Unlock()
	if ok && e.generation == m.Generation {
		return e.config
	}
	cfg := encodeConfig(m)
	c.mu.Lock()
	if c.entries == nil || len(c.entries) >= maxConfigEntries {
		c.entries = map[types.UID]configEntry{}
	}
	c.entries[m.UID] = configEntry{generation: m.Generation, config: cfg}
	c.mu.Unlock()
	return cfg
}

func (h *Handlers) monitorsSummary(w http.ResponseWriter, r *http.Request) {
	c := core.CallerFrom(r.Context())
	var list monv1.MonitorList
	if err := h.d.List(r.Context(), &list, c.Namespace); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, core.Summarize(core.LiveMonitors(list.Items)))
}

// newMonitor builds an unsaved Monitor of ns from a create body.
func (h *Handlers) newMonitor(ctx context.Context, ns string, b *core.MonitorBody) (*monv1.Monitor, error) {
	m := &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Namespace: ns}}
	if _, err := h.applyMonitorBody(ctx, m, b, modeCreate); err != nil {
		return nil, err
	}
	m.GenerateName = core.ObjectNamePrefix(m.Spec.Name, "monitor")
	if err := h.validateMonitor(ctx, m); err != nil {
		return nil, err
	}
	return m, nil
}

func (h *Handlers) createMonitor(w http.ResponseWriter, r *http.Request) {
	ctx, c := r.Context(), core.CallerFrom(r.Context())
	var b restapi.MonitorCreate
	if err := core.DecodeJSON(r, &b, false); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	m, err := h.newMonitor(ctx, c.Namespace, core.CreateBody(&b))
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	if _, err := h.create(ctx, m); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	h.writeMonitor(w, r, m, http.StatusCreated, false)
}

// writeMonitor answers with the monitor object of m; warnings say what the
// write dropped (see applyMonitorBody).
func (h *Handlers) writeMonitor(w http.ResponseWriter, r *http.Request, m *monv1.Monitor, code int, uptime bool, warnings ...string) {
	o, err := h.monitorObject(r.Context(), m, h.refs(m.Namespace), uptime)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	o.Warnings = warnings
	httpjson.Write(w, code, o)
}

// getMonitor answers GET /monitors/:id. The answer is the list item of the
// monitor with the uptimes computed from the store; its bytes are reused
// while the item's key (see listKey) and both uptimes are the same.
func (h *Handlers) getMonitor(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	m := h.d.PathSharedMonitor(w, r)
	if m == nil {
		return
	}
	if h.st == nil || m.UID == "" || m.ResourceVersion == "" {
		h.writeMonitor(w, r, m, http.StatusOK, true)
		return
	}
	x := h.refs(m.Namespace)
	load := x.loadPlan
	if m.Spec.GroupRef != nil || m.Spec.EscalationPolicyRef != nil {
		load = x.load
	}
	if err := load(ctx); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	day, mon, err := h.uptimes.get(ctx, h, string(m.UID))
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	k := answerOf{item: h.listKeyOf(ctx, m, x, strings.Join(plans.DefaultRegions(x.plan, x.regions), ",")), day: percentKey(day), mon: percentKey(mon)}
	body := h.items.single(k)
	if body == nil {
		o, err := h.monitorObject(ctx, m, x, false)
		if err != nil {
			core.WriteErr(w, r, err)
			return
		}
		o.Uptime24h, o.Uptime30d = day, mon
		raw, err := json.Marshal(o)
		if err != nil {
			core.WriteErr(w, r, err)
			return
		}
		body = append(raw, '\n') // as httpjson.Write's encoder ends it
		h.items.storeSingle(k, body)
	}
	hdr := w.Header()
	hdr.Set("Content-Type", httpjson.ContentType)
	hdr.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// percentKey is an uptime as a comparable key: its bits, or NaN's for none.
func percentKey(p *float64) uint64 {
	if p == nil {
		return math.Float64bits(math.NaN())
	}
	return math.Float64bits(*p)
}

func (h *Handlers) updateMonitor(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	m := h.d.PathMonitor(w, r)
	if m == nil {
		return
	}
	var body restapi.MonitorUpdate
	if err := core.DecodeJSON(r, &body, false); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	b := core.UpdateBody(&body)
	wasPaused := m.Spec.Paused
	var warnings []string
	err := h.d.Mutate(ctx, m, func() error {
		wasPaused = m.Spec.Paused
		var err error
		if warnings, err = h.applyMonitorBody(ctx, m, b, modeUpdate); err != nil {
			return err
		}
		if err := h.validateMonitor(ctx, m); err != nil {
			return err
		}
		_, err = h.creds.keep(ctx, m, "")
		return err
	})
	if err != nil {
		core.WriteErr(w, r, h.d.WriteFailed(ctx, m.Namespace, err, core.MonitorFieldPath))
		return
	}
	h.recordPause(ctx, m, wasPaused)
	h.writeMonitor(w, r, m, http.StatusOK, true, warnings...)
}

// recordPause opens or closes the store's pause window when paused changed.
func (h *Handlers) recordPause(ctx context.Context, m *monv1.Monitor, wasPaused bool) {
	if h.st == nil || wasPaused == m.Spec.Paused {
		return
	}
	now := h.d.Clock.Now()
	var err error
	if m.Spec.Paused {
		err = h.st.PauseMonitor(ctx, string(m.UID), now)
	} else {
		err = h.st.ResumeMonitor(ctx, string(m.UID), now)
	}
	if err != nil {
		core.LogFrom(ctx).Error(err, "unable to record a pause window", "monitor", m.Name)
	}
}

func (h *Handlers) deleteMonitor(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	m := h.d.PathMonitor(w, r)
	if m == nil {
		return
	}
	if err := h.delete(ctx, m); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// delete deletes m and its history (a history left behind is pruned after
// the retention).
func (h *Handlers) delete(ctx context.Context, m *monv1.Monitor) error {
	if err := h.d.DeleteObject(ctx, m); err != nil {
		return err
	}
	if h.st != nil {
		if err := h.st.DeleteMonitorHistory(ctx, string(m.UID)); err != nil {
			core.LogFrom(ctx).Error(err, "unable to delete monitor history; it is pruned after the retention", "monitor", m.Name)
		}
	}
	return nil
}

// setPaused is pause and resume.
func (h *Handlers) setPaused(paused bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		m := h.d.PathMonitor(w, r)
		if m == nil {
			return
		}
		wasPaused := m.Spec.Paused
		err := h.d.Mutate(ctx, m, func() error {
			wasPaused = m.Spec.Paused
			m.Spec.Paused = paused
			return nil
		})
		if err != nil {
			core.WriteErr(w, r, h.d.WriteFailed(ctx, m.Namespace, err, core.MonitorFieldPath))
			return
		}
		h.recordPause(ctx, m, wasPaused)
		h.writeMonitor(w, r, m, http.StatusOK, false)
	}
}

func (h *Handlers) resetStats(w http.ResponseWriter, r *http.Request) {
	m := h.d.PathMonitor(w, r)
	if m == nil {
		return
	}
	if err := h.st.ResetStats(r.Context(), string(m.UID)); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, restapi.Success{Success: true, Message: "Statistics reset"})
}

// maxBulkIDs is the longest list of ids of POST /monitors/bulk
// (docs/rest-api.md, Limits).
const maxBulkIDs = 500

func (h *Handlers) bulkMonitors(w http.ResponseWriter, r *http.Request) {
	ctx, c := r.Context(), core.CallerFrom(r.Context())
	var b restapi.BulkRequest
	if err := core.DecodeJSON(r, &b, false); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	var errs []core.FieldError
	actions := []string{"pause", "resume", "delete", "add_tags", "remove_tags", "move_group"}
	if !slices.Contains(actions, b.Action) {
		errs = append(errs, core.FieldErr("action", "must be one of %s", strings.Join(actions, ", ")))
	}
	if len(b.IDs) < 1 || len(b.IDs) > maxBulkIDs {
		errs = append(errs, core.FieldErr("ids", "must have 1-%d monitor ids", maxBulkIDs))
	}
	tags := monitor.NormalizeTags(b.Tags)
	if (b.Action == "add_tags" || b.Action == "remove_tags") && len(tags) == 0 {
		errs = append(errs, core.FieldErr("tags", "is required for %s", b.Action))
	}
	for i, t := range tags {
		if len(t) < 1 || len(t) > 32 {
			errs = append(errs, core.FieldErr(fmt.Sprintf("tags[%d]", i), "must be 1-32 characters"))
		}
	}
	if b.Action == "move_group" && !b.GroupID.Set {
		errs = append(errs, core.FieldErr("group_id", "is required for move_group (null removes from the group)"))
	}
	// A refused body costs no read: nothing is looked up before here.
	if len(errs) > 0 {
		core.WriteValidation(w, errs...)
		return
	}
	var group *monv1.LocalObjectReference
	if b.Action == "move_group" && !b.GroupID.Null && b.GroupID.Value() != "" {
		g, err := h.d.FindByUID(ctx, &monv1.MonitorGroupList{}, c.Namespace, b.GroupID.Value())
		switch {
		case errors.Is(err, core.ErrNotFound):
			core.WriteValidation(w, core.FieldErr("group_id", "monitor group not found"))
			return
		case err != nil:
			core.WriteErr(w, r, err)
			return
		}
		group = &monv1.LocalObjectReference{Name: g.GetName()}
	}
	ids := uniqueIDs(b.IDs)
	found, err := h.d.ResolveIDs(ctx, &monv1.MonitorList{}, c.Namespace, ids)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	// Each monitor is its own object and its own write: they go
	// bulkWriters at a time (500 one after the other took seconds; the
	// answer lists failures in the order of the ids all the same).
	results := make([]error, len(ids))
	sem := make(chan struct{}, bulkWriters)
	var wg sync.WaitGroup
	for i, id := range ids {
		obj, ok := found[id]
		if !ok {
			results[i] = core.ErrNotFound
			continue
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			results[i] = h.bulkOne(ctx, obj.(*monv1.Monitor), b.Action, tags, group)
		}()
	}
	wg.Wait()
	updated := 0
	failed := []restapi.BulkFailure{}
	for i, id := range ids {
		err := results[i]
		if err == nil {
			updated++
			continue
		}
		msg := "Monitor not found"
		var ae *core.Error
		switch {
		case errors.As(err, &ae):
			msg = ae.Body.Error
			if len(ae.Body.Errors) > 0 {
				msg = ae.Body.Errors[0].Field + ": " + ae.Body.Errors[0].Message
			}
		case !errors.Is(err, core.ErrNotFound):
			msg = "could not update the monitor"
			core.LogFrom(ctx).Error(err, "bulk action failed", "monitor", id, "action", b.Action)
		}
		failed = append(failed, restapi.BulkFailure{ID: id, Error: msg})
	}
	httpjson.Write(w, http.StatusOK, restapi.BulkResult{Updated: updated, Failed: failed})
}

// bulkWriters is how many monitors a bulk action writes at once.
const bulkWriters = 16

// uniqueIDs is ids without repeats, in their order.
func uniqueIDs(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// bulkOne applies action to m, as the cache gave it: the write itself is
// the check that m is current (core.Deps.MutateCached).
func (h *Handlers) bulkOne(ctx context.Context, m *monv1.Monitor, action string, tags []string, group *monv1.LocalObjectReference) error {
	if action == "delete" {
		return h.delete(ctx, m)
	}
	wasPaused := m.Spec.Paused
	err := h.d.MutateCached(ctx, m, func() error {
		wasPaused = m.Spec.Paused
		switch action {
		case "pause":
			m.Spec.Paused = true
		case "resume":
			m.Spec.Paused = false
		case "add_tags":
			m.Spec.Tags = monitor.NormalizeTags(append(slices.Clone(m.Spec.Tags), tags...))
			if len(m.Spec.Tags) > 20 {
				return core.ValidationError(core.FieldErr("tags", "a monitor has at most 20 tags"))
			}
		case "remove_tags":
			m.Spec.Tags = slices.DeleteFunc(slices.Clone(m.Spec.Tags), func(t string) bool { return slices.Contains(tags, t) })
		case "move_group":
			m.Spec.GroupRef = group
		}
		return nil
	})
	if err != nil {
		return h.d.WriteFailed(ctx, m.Namespace, err, core.MonitorFieldPath)
	}
	h.recordPause(ctx, m, wasPaused)
	return nil
}

func resultJSON(res probeapi.Result) restapi.CheckResult {
	return restapi.CheckResult{
		Check: restapi.Check{ID: res.ID, CheckedAt: core.ISOTime(store.UTC(res.CheckedAt)), Region: res.Region, Status: string(res.Status),
			StatusCode: res.StatusCode, ResponseTimeMs: res.ResponseTimeMs, ErrorType: core.StrPtr(res.ErrorType), ErrorMessage: core.StrPtr(res.ErrorMessage)},
		Timings: res.Timings, TLS: res.TLS, Details: res.Details,
	}
}

func (h *Handlers) testMonitor(w http.ResponseWriter, r *http.Request) {
	ctx, c := r.Context(), core.CallerFrom(r.Context())
	var b restapi.MonitorCreate
	if err := core.DecodeJSON(r, &b, false); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	m, err := h.newMonitor(ctx, c.Namespace, core.CreateBody(&b))
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	// A name no Monitor has: an unsaved definition has no credentials
	// Secret of its own, so it must not match one by name.
	m.Name, m.GenerateName = m.GenerateName+"test-"+utilrand.String(8), ""
	h.runCheck(w, r, m, r.URL.Query().Get("region"), false)
}

func (h *Handlers) runCheckSaved(w http.ResponseWriter, r *http.Request) {
	m := h.d.PathMonitor(w, r)
	if m == nil {
		return
	}
	var b restapi.RunCheckBody
	if err := core.DecodeJSON(r, &b, false); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	if b.Region == "" {
		b.Region = r.URL.Query().Get("region")
	}
	h.runCheck(w, r, m, b.Region, true)
}

func (h *Handlers) runCheck(w http.ResponseWriter, r *http.Request, m *monv1.Monitor, region string, save bool) {
	if h.engine == nil {
		core.WriteError(w, http.StatusServiceUnavailable, core.CodeInternal, "checks cannot run right now")
		return
	}
	if m.Spec.Type == monv1.MonitorCron {
		core.WriteValidation(w, core.FieldErr("type", "cron monitors are checked by their heartbeats, not run on demand"))
		return
	}
	res, err := h.engine.RunCheck(r.Context(), m, region, save)
	var regionErr *engine.RegionError
	var noAgent *engine.NoAgentError
	var notAllowed *credentials.NotAllowedError
	switch {
	case errors.As(err, &notAllowed):
		core.WriteValidation(w, core.FieldErr("config.headers", "%v", notAllowed))
		return
	case errors.As(err, &regionErr):
		core.WriteValidation(w, core.FieldErr("region", "must be one of the monitor's regions: %s", strings.Join(regionErr.Regions, ", ")))
		return
	case errors.As(err, &noAgent):
		// Briefly unavailable: the monitor's agents are starting or away.
		w.Header().Set("Retry-After", "10")
		httpjson.Write(w, http.StatusServiceUnavailable, core.ErrorBody{
			Error: "No probe agent of the monitor's regions (" + strings.Join(noAgent.Regions, ", ") +
				") is online to run the check; try again shortly", Code: core.CodeRegionUnavailable,
			Details: map[string]any{"regions": core.NonNil(noAgent.Regions)}})
		return
	case err != nil:
		core.WriteErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, resultJSON(res))
}

// monitorRegions answers the regions endpoints for m.
func (h *Handlers) monitorRegions(w http.ResponseWriter, r *http.Request, m *monv1.Monitor) {
	o, err := h.monitorObject(r.Context(), m, h.refs(m.Namespace), false)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	effective := o.EffectiveRegions
	if len(m.Spec.Regions) > 0 {
		// Just set: the status may still name the previous regions.
		effective = slices.Clone(m.Spec.Regions)
	}
	httpjson.Write(w, http.StatusOK, restapi.Regions{Regions: effective, EffectiveRegions: effective, IsDefault: len(m.Spec.Regions) == 0})
}

func (h *Handlers) getRegions(w http.ResponseWriter, r *http.Request) {
	if m := h.d.PathMonitor(w, r); m != nil {
		h.monitorRegions(w, r, m)
	}
}

func (h *Handlers) putRegions(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	m := h.d.PathMonitor(w, r)
	if m == nil {
		return
	}
	var b restapi.RegionsBody
	if err := core.DecodeJSON(r, &b, false); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	codes := slices.Compact(slices.Clone(b.Regions))
	if len(codes) < 1 || len(codes) > 50 {
		core.WriteValidation(w, core.FieldErr("regions", "must have 1-50 region codes"))
		return
	}
	if err := h.d.Mutate(ctx, m, func() error { m.Spec.Regions = codes; return nil }); err != nil {
		core.WriteErr(w, r, h.d.WriteFailed(ctx, m.Namespace, err, core.MonitorFieldPath))
		return
	}
	h.monitorRegions(w, r, m)
}

func (h *Handlers) monitorExplanation(w http.ResponseWriter, r *http.Request) {
	m := h.d.PathMonitor(w, r)
	if m == nil {
		return
	}
	if h.engine == nil {
		core.WriteError(w, http.StatusServiceUnavailable, core.CodeInternal, "the engine is not available")
		return
	}
	ex, err := h.engine.ExplainMonitor(r.Context(), m)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, ex)
}

func (h *Handlers) rotateHeartbeat(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	m := h.d.PathMonitor(w, r)
	if m == nil {
		return
	}
	if m.Spec.Type != monv1.MonitorCron {
		core.WriteValidation(w, core.FieldErr("type", "only cron monitors have a heartbeat URL"))
		return
	}
	tok := monv1.NewHeartbeatToken()
	if err := h.creds.rotateHeartbeat(ctx, m, tok); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	err := h.d.Mutate(ctx, m, func() error {
		monv1.SetHeartbeatToken(m, tok)
		return nil
	})
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, restapi.HeartbeatURL{HeartbeatURL: h.heartbeatURL(tok)})
}

func (h *Handlers) cronHeartbeat(w http.ResponseWriter, r *http.Request) {
	m := h.d.PathMonitor(w, r)
	if m == nil {
		return
	}
	var b restapi.CronHeartbeat
	if err := core.DecodeJSON(r, &b, false); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	var errs []core.FieldError
	p := engine.Ping{OK: true, At: h.d.Clock.Now(), DurationMs: b.ExecutionTimeMs, StatusCode: b.StatusCode, ExecutionCount: b.ExecutionCount}
	if b.Status != nil {
		switch strings.ToLower(*b.Status) {
		case "success", "ok", "up":
		case "fail", "failure", "down", "error":
			p.OK = false
		default:
			errs = append(errs, core.FieldErr("status", "must be one of success, ok, up, fail, failure, down, error"))
		}
	}
	if b.ExecutionTimeMs != nil && (*b.ExecutionTimeMs < 0 || *b.ExecutionTimeMs > core.MaxJobDurationMs) {
		errs = append(errs, core.FieldErr("execution_time_ms", "must be between 0 and %d (7 days)", core.MaxJobDurationMs))
	}
	if b.StatusCode != nil && (*b.StatusCode < 0 || *b.StatusCode > 999) {
		errs = append(errs, core.FieldErr("status_code", "must be between 0 and 999"))
	}
	if m.Spec.Type != monv1.MonitorCron {
		errs = append(errs, core.FieldErr("type", "only cron monitors accept heartbeats"))
	}
	if len(errs) > 0 {
		core.WriteValidation(w, errs...)
		return
	}
	if h.engine == nil {
		core.WriteError(w, http.StatusServiceUnavailable, core.CodeInternal, "the engine is not available")
		return
	}
	if err := h.engine.Heartbeat(r.Context(), m, p); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, restapi.HeartbeatRecorded{Success: true, Paused: m.Spec.Paused})
}

// create creates a monitor built by newMonitor or by monitoring as code
// (every REST and MCP create goes through here). A cron monitor gets its
// heartbeat token before it is created, so the response carries its
// heartbeat_url: the token goes to its credentials Secret, its hash to the
// object (monv1.SetHeartbeatToken). A token set by hand (a plan's
// annotation) is kept; the controller moves it.
func (h *Handlers) create(ctx context.Context, m *monv1.Monitor) (*monv1.Monitor, error) {
	var heartbeat string
	if m.Spec.Type == monv1.MonitorCron && monv1.HeartbeatTokenHash(m) == "" {
		heartbeat = monv1.NewHeartbeatToken()
		monv1.SetHeartbeatToken(m, heartbeat)
	}
	if err := h.creds.create(ctx, m, heartbeat); err != nil {
		return nil, h.d.WriteFailed(ctx, m.Namespace, err, core.MonitorFieldPath)
	}
	if m.Spec.Paused && h.st != nil {
		_ = h.st.PauseMonitor(ctx, string(m.UID), h.d.Clock.Now())
	}
	return m, nil
}
