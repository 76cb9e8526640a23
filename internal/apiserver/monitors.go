package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
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

// isoTime formats a timestamp the way every response does: UTC with
// microseconds, never rounded (the store keeps microseconds).
func isoTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000Z") }

func isoTimePtr(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := isoTime(*t)
	return &s
}

func metaTimePtr(t *metav1.Time) *string {
	if t == nil {
		return nil
	}
	return isoTimePtr(&t.Time)
}

func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// monitorBody is the create and update body of a monitor, and the spec of
// monitoring as code.
type monitorBody struct {
	Name               nullable[string]                     `json:"name"`
	Type               nullable[string]                     `json:"type"`
	URL                nullable[string]                     `json:"url"`
	IntervalSeconds    nullable[int32]                      `json:"interval_seconds"`
	IsActive           nullable[bool]                       `json:"is_active"`
	GroupID            nullable[string]                     `json:"group_id"`
	EscalationPolicyID nullable[string]                     `json:"escalation_policy_id"`
	Tags               nullable[[]string]                   `json:"tags"`
	Regions            nullable[[]string]                   `json:"regions"`
	Config             nullable[map[string]json.RawMessage] `json:"config"`
	// Monitoring as code only.
	Key    nullable[string] `json:"key"`
	Paused nullable[bool]   `json:"paused"`
}

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
func (s *Server) applyMonitorBody(ctx context.Context, m *monv1.Monitor, b *monitorBody, mode bodyMode) ([]string, error) {
	var errs []FieldError
	spec := &m.Spec
	var was *monv1.MonitorSpec
	if mode != modeCreate {
		was = spec.DeepCopy()
	}
	if b.Type.Set {
		t := monv1.MonitorType(strings.ToLower(b.Type.value()))
		switch {
		case mode == modeUpdate && t != spec.Type:
			errs = append(errs, fieldErr("type", "cannot change after creation"))
		case !slices.Contains(monitorTypes, t):
			errs = append(errs, fieldErr("type", "must be one of http, api, ping, port, udp, cron, dns, multistep, mcp"))
		default:
			spec.Type = t
		}
	}
	spec.Type = typeOrDefault(spec.Type)
	if b.Name.Set {
		spec.Name = strings.TrimSpace(b.Name.value())
		if spec.Name == "" {
			errs = append(errs, fieldErr("name", "must be 1-255 characters"))
		}
	} else if mode == modeCreate {
		errs = append(errs, fieldErr("name", "is required"))
	}
	if b.URL.Set {
		spec.URL = strings.TrimSpace(b.URL.value())
	}
	if b.IntervalSeconds.Set {
		spec.IntervalSeconds = b.IntervalSeconds.value()
		if b.IntervalSeconds.Null {
			spec.IntervalSeconds = 0
		}
	}
	if b.IsActive.Set && !b.IsActive.Null {
		spec.Paused = !b.IsActive.value()
	}
	if b.Paused.Set && !b.Paused.Null && mode == modeCode {
		spec.Paused = b.Paused.value()
	}
	if b.Tags.Set {
		spec.Tags = monitor.NormalizeTags(b.Tags.value())
	}
	if b.Regions.Set {
		regions := b.Regions.value()
		switch {
		case mode == modeUpdate && !slices.Equal(regions, spec.Regions):
			errs = append(errs, fieldErr("regions", "regions change only via PUT /monitors/:id/regions"))
		case mode == modeCode && b.Regions.Null:
			spec.Regions = nil
		case len(regions) == 0 && !b.Regions.Null:
			errs = append(errs, fieldErr("regions", "must have 1-50 region codes"))
		default:
			spec.Regions = regions
		}
	}
	if b.GroupID.Set {
		if b.GroupID.Null || b.GroupID.value() == "" {
			spec.GroupRef = nil
		} else if obj, err := s.findByUID(ctx, &monv1.MonitorGroupList{}, m.Namespace, b.GroupID.value()); err == nil {
			spec.GroupRef = &monv1.LocalObjectReference{Name: obj.GetName()}
		} else if errors.Is(err, errNotFound) {
			errs = append(errs, fieldErr("group_id", "monitor group not found"))
		} else {
			return nil, err
		}
	}
	if b.EscalationPolicyID.Set {
		if b.EscalationPolicyID.Null || b.EscalationPolicyID.value() == "" {
			spec.EscalationPolicyRef = nil
		} else if obj, err := s.findByUID(ctx, &monv1.EscalationPolicyList{}, m.Namespace, b.EscalationPolicyID.value()); err == nil {
			spec.EscalationPolicyRef = &monv1.LocalObjectReference{Name: obj.GetName()}
		} else if errors.Is(err, errNotFound) {
			errs = append(errs, fieldErr("escalation_policy_id", "escalation policy not found"))
		} else {
			return nil, err
		}
	}
	if b.Key.Set && mode == modeCode {
		spec.Key = b.Key.value()
	}
	if len(errs) > 0 {
		return nil, validationError(errs...)
	}
	// The config: sent keys are merged over the current ones, unless the
	// type changed (then the new config stands alone).
	var cur *probeapi.Config
	if mode != modeCreate {
		c := monitor.ConfigOf(spec)
		cur = &c
	}
	sent := map[string]json.RawMessage{}
	if b.Config.Set && !b.Config.Null {
		sent = b.Config.value()
		if fe := checkConfigLimits(sent); fe != nil {
			return nil, validationError(fe...)
		}
	}
	if emails, ok := sent[configNotificationEmails]; ok {
		delete(sent, configNotificationEmails)
		// Per-monitor alert recipients are owner-only through /monitors: an
		// API key's value is ignored. Monitoring as code sets them (the
		// Automation check is the caller's).
		if mode == modeCode {
			var list []string
			if string(emails) != "null" {
				if err := json.Unmarshal(emails, &list); err != nil {
					return nil, validationError(fieldErr("config.notification_emails", "must be an array of email addresses"))
				}
			}
			spec.NotificationEmails = list
		}
	}
	if b.Config.Set && b.Config.Null {
		cur = nil // null config: the type's defaults alone
	}
	urlMoved := mode == modeUpdate && !credentials.SameOrigin(was.URL, spec.URL)
	cfg, dropped, err := updatedConfig(spec.Type, cur, sent, urlMoved)
	if err != nil {
		return nil, err
	}
	monitor.ApplyConfig(spec, &cfg)
	if err := s.checkSecretRefs(ctx, m, was); err != nil {
		return nil, err
	}
	var warnings []string
	for _, p := range dropped {
		warnings = append(warnings, p+": the stored credential was dropped because the target origin changed; send it again to use it with the new target")
	}
	return warnings, nil
}

var monitorTypes = []monv1.MonitorType{monv1.MonitorHTTP, monv1.MonitorAPI, monv1.MonitorPing, monv1.MonitorPort,
	monv1.MonitorUDP, monv1.MonitorCron, monv1.MonitorDNS, monv1.MonitorMultistep, monv1.MonitorMCP}

// validateMonitor applies the defaults and the pure validation of package
// monitor, which the admission webhooks call too, so the REST API refuses
// what admission would, with the REST field names.
func (s *Server) validateMonitor(ctx context.Context, m *monv1.Monitor) error {
	plan, err := s.opts.Plans.ForNamespace(ctx, m.Namespace)
	if err != nil {
		return err
	}
	monitor.DefaultMonitor(m, plan)
	guard := netguard.Guard{AllowPrivate: s.opts.AllowPrivateTargets}
	errs := monitor.ValidateMonitorSpec(ctx, &m.Spec, guard, field.NewPath("spec"))
	if min := plans.MinIntervalSeconds(plan); m.Spec.IntervalSeconds < min {
		errs = append(errs, field.Invalid(field.NewPath("spec", "intervalSeconds"), m.Spec.IntervalSeconds,
			fmt.Sprintf("must not be below the plan's minimum interval of %d seconds", min)))
	}
	if len(errs) > 0 {
		return validationError(fromFieldErrors(errs, monitorFieldPath)...)
	}
	return nil
}

// writeFailed maps an error of a create or update to its answer: admission
// refusals to the REST error shapes.
func (s *Server) writeFailed(ctx context.Context, ns string, err error, mapPath fieldPathMap) error {
	planName := ""
	if p, perr := s.opts.Plans.ForNamespace(ctx, ns); perr == nil {
		planName = p.Name
	}
	if ae := s.fromAdmission(err, planName, mapPath); ae != nil {
		return ae
	}
	return err
}

// monitorRefs resolves what monitor objects reference, once per request.
type monitorRefs struct {
	s          *Server
	ns         string
	groups     *objectUIDs
	policies   *objectUIDs
	plan       *monv1.Plan
	regions    []string
	loaded     bool
	planLoaded bool
}

func (s *Server) refs(ns string) *monitorRefs { return &monitorRefs{s: s, ns: ns} }

func (x *monitorRefs) load(ctx context.Context) error {
	if x.loaded {
		return nil
	}
	if err := x.loadPlan(ctx); err != nil {
		return err
	}
	var err error
	if x.groups, err = x.s.uidIndex(ctx, &monv1.MonitorGroupList{}, x.ns); err != nil {
		return err
	}
	if x.policies, err = x.s.uidIndex(ctx, &monv1.EscalationPolicyList{}, x.ns); err != nil {
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
	if x.plan, err = x.s.opts.Plans.ForNamespace(ctx, x.ns); err != nil {
		return err
	}
	if x.regions, err = monitor.RegionCodes(ctx, x.s.opts.Client); err != nil {
		return err
	}
	x.planLoaded = true
	return nil
}

// refUID returns the uid of a referenced object, reading the API server when
// the cache has not seen it yet.
func (x *monitorRefs) refUID(ctx context.Context, idx *objectUIDs, obj client.Object, ref *monv1.LocalObjectReference) *string {
	if ref == nil {
		return nil
	}
	if u := idx.uidOf(ref.Name); u != nil {
		return u
	}
	if err := x.s.opts.Reader.Get(ctx, client.ObjectKey{Namespace: x.ns, Name: ref.Name}, obj); err == nil {
		u := string(obj.GetUID())
		return &u
	}
	return nil
}

// monitorObject renders m. With uptime, the 24 h and 30 d uptime are
// computed from the store rather than read from status.
func (s *Server) monitorObject(ctx context.Context, m *monv1.Monitor, x *monitorRefs, uptime bool) (*restapi.Monitor, error) {
	if err := x.load(ctx); err != nil {
		return nil, err
	}
	st := &m.Status
	out := &restapi.Monitor{
		ID: string(m.UID), Name: m.Spec.Name, Type: string(typeOrDefault(m.Spec.Type)), URL: strPtr(m.Spec.URL),
		IntervalSeconds: m.Spec.IntervalSeconds, IsActive: !m.Spec.Paused,
		GroupID:            x.refUID(ctx, x.groups, &monv1.MonitorGroup{}, m.Spec.GroupRef),
		EscalationPolicyID: x.refUID(ctx, x.policies, &monv1.EscalationPolicy{}, m.Spec.EscalationPolicyRef),
		Tags:               nonNil(m.Spec.Tags), Regions: nonNil(m.Spec.Regions), Config: s.configs.get(m),
		Key: strPtr(m.Spec.Key), CreatedAt: isoTime(m.CreationTimestamp.Time),
		CurrentStatus: string(st.CurrentStatus), LastStatus: strPtr(st.LastStatus),
		LastCheckedAt: metaTimePtr(st.LastCheckedAt), LastResponseTimeMs: st.LastResponseTimeMs,
		LastError: strPtr(st.LastError), UnderMaintenance: st.UnderMaintenance,
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
		out.OpenIncident = &restapi.OpenIncident{ID: oi.ID, StartedAt: isoTime(oi.StartedAt.Time)}
	}
	if out.EffectiveTimeoutMs == 0 {
		out.EffectiveTimeoutMs = monitor.EffectiveTimeoutMs(&m.Spec)
	}
	if len(out.EffectiveRegions) == 0 {
		// Not reconciled yet: compute what the controller will write.
		out.EffectiveRegions = monitor.EffectiveRegions(&m.Spec, x.plan, x.regions)
	}
	out.EffectiveRegions = nonNil(out.EffectiveRegions)
	if m.Spec.Type == monv1.MonitorCron {
		out.HeartbeatURL = s.heartbeatURL(m)
	}
	if uptime && s.opts.Store != nil {
		var err error
		if out.Uptime24h, out.Uptime30d, err = s.uptimes.get(ctx, s, string(m.UID)); err != nil {
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

func (u *uptimeCache) get(ctx context.Context, s *Server, uid string) (day, mon *float64, err error) {
	to := store.UptimeWindowEnd(s.clock.Now())
	// The version is read before the store: a change that commits in
	// between gives a newer version at the next request.
	var version uint64
	versioned := false
	if v, ok := s.opts.Store.(uptimeVersioner); ok && !u.off {
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
	ps, err := s.opts.Store.UptimeWindows(ctx, uid, to, 30*24*time.Hour, 24*time.Hour)
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

func nonNil[T any](v []T) []T {
	if v == nil {
		return []T{}
	}
	return v
}

// heartbeatURL is the public ping URL of a cron monitor, or nil before its
// token exists.
func (s *Server) heartbeatURL(m *monv1.Monitor) *string {
	path := monv1.HeartbeatPath(m)
	if path == "" {
		path = m.Status.HeartbeatPath
	}
	if path == "" {
		return nil
	}
	u := strings.TrimSuffix(s.opts.PublicURL, "/") + path
	return &u
}

// --- handlers ---------------------------------------------------------------

// liveMonitors drops monitors being deleted and sorts newest first.
func liveMonitors(items []monv1.Monitor) []monv1.Monitor {
	out := make([]monv1.Monitor, 0, len(items))
	for i := range items {
		if items[i].DeletionTimestamp == nil {
			out = append(out, items[i])
		}
	}
	slices.SortFunc(out, func(a, b monv1.Monitor) int { return newestFirst(&a, &b) })
	return out
}

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
	raw, err := json.Marshal(configOf(credentials.Redact(&m.Spec, m.Name)))
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

func summarize(items []monv1.Monitor) restapi.MonitorSummary {
	sum := restapi.MonitorSummary{Counts: map[string]int{}}
	for _, st := range []monv1.MonitorStatusValue{monv1.StatusUp, monv1.StatusDown, monv1.StatusDegraded, monv1.StatusBlocked,
		monv1.StatusUnknown, monv1.StatusPending, monv1.StatusPaused, monv1.StatusMaintenance} {
		sum.Counts[string(st)] = 0
	}
	var total float64
	n := 0
	for i := range items {
		m := &items[i]
		st := string(m.Status.CurrentStatus)
		switch {
		case m.Spec.Paused:
			st = string(monv1.StatusPaused)
		case st == "" || st == string(monv1.StatusPaused):
			st = string(monv1.StatusPending)
		}
		sum.Total++
		sum.Counts[st]++
		if m.Status.OpenIncident != nil {
			sum.OpenIncidents++
		}
		if p := monitor.ParsePercent(m.Status.Uptime24h); p != nil {
			total += *p
			n++
		}
	}
	if n > 0 {
		avg := total / float64(n)
		sum.Uptime24h = &avg
	}
	return sum
}

func (s *Server) monitorsSummary(w http.ResponseWriter, r *http.Request) {
	c := CallerFrom(r.Context())
	var list monv1.MonitorList
	if err := s.list(r.Context(), &list, c.Namespace); err != nil {
		s.writeErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, summarize(liveMonitors(list.Items)))
}

var slugRE = regexp.MustCompile(`[^a-z0-9]+`)

// objectNamePrefix is a generateName prefix made from a display name.
func objectNamePrefix(name, fallback string) string {
	slug := strings.Trim(slugRE.ReplaceAllString(strings.ToLower(name), "-"), "-")
	if len(slug) > 40 {
		slug = strings.TrimRight(slug[:40], "-")
	}
	if slug == "" || slug[0] < 'a' || slug[0] > 'z' {
		slug = strings.Trim(fallback+"-"+slug, "-")
	}
	return slug + "-"
}

// newMonitor builds an unsaved Monitor of ns from a create body.
func (s *Server) newMonitor(ctx context.Context, ns string, b *monitorBody) (*monv1.Monitor, error) {
	m := &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Namespace: ns}}
	if _, err := s.applyMonitorBody(ctx, m, b, modeCreate); err != nil {
		return nil, err
	}
	m.GenerateName = objectNamePrefix(m.Spec.Name, "monitor")
	if err := s.validateMonitor(ctx, m); err != nil {
		return nil, err
	}
	return m, nil
}

func (s *Server) createMonitor(w http.ResponseWriter, r *http.Request) {
	ctx, c := r.Context(), CallerFrom(r.Context())
	var b monitorBody
	if err := decodeJSON(r, &b, false); err != nil {
		s.writeErr(w, r, err)
		return
	}
	m, err := s.newMonitor(ctx, c.Namespace, &b)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	if _, err := s.createKeyed(ctx, m); err != nil {
		s.writeErr(w, r, err)
		return
	}
	s.writeMonitor(w, r, m, http.StatusCreated, false)
}

// writeMonitor answers with the monitor object of m; warnings say what the
// write dropped (see applyMonitorBody).
func (s *Server) writeMonitor(w http.ResponseWriter, r *http.Request, m *monv1.Monitor, code int, uptime bool, warnings ...string) {
	o, err := s.monitorObject(r.Context(), m, s.refs(m.Namespace), uptime)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	o.Warnings = warnings
	httpjson.Write(w, code, o)
}

// pathMonitor finds the monitor named by the {id} path value; it writes the
// 404 and returns nil when there is none in the caller's workspace.
func (s *Server) pathMonitor(w http.ResponseWriter, r *http.Request) *monv1.Monitor {
	return s.pathMonitorBy(w, r, s.monitorByID)
}

// pathSharedMonitor is pathMonitor for a handler that does not modify the
// monitor: it gets the cache's object, not a deep copy (sharedMonitorByID).
func (s *Server) pathSharedMonitor(w http.ResponseWriter, r *http.Request) *monv1.Monitor {
	return s.pathMonitorBy(w, r, s.sharedMonitorByID)
}

func (s *Server) pathMonitorBy(w http.ResponseWriter, r *http.Request, lookup func(ctx context.Context, ns, id string) (*monv1.Monitor, error)) *monv1.Monitor {
	m, err := lookup(r.Context(), CallerFrom(r.Context()).Namespace, chi.URLParam(r, "id"))
	if errors.Is(err, errNotFound) {
		writeNotFound(w, "Monitor")
		return nil
	}
	if err != nil {
		s.writeErr(w, r, err)
		return nil
	}
	return m
}

// getMonitor answers GET /monitors/:id. The answer is the list item of the
// monitor with the uptimes computed from the store; its bytes are reused
// while the item's key (see listKey) and both uptimes are the same.
func (s *Server) getMonitor(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	m := s.pathSharedMonitor(w, r)
	if m == nil {
		return
	}
	if s.opts.Store == nil || m.UID == "" || m.ResourceVersion == "" {
		s.writeMonitor(w, r, m, http.StatusOK, true)
		return
	}
	x := s.refs(m.Namespace)
	load := x.loadPlan
	if m.Spec.GroupRef != nil || m.Spec.EscalationPolicyRef != nil {
		load = x.load
	}
	if err := load(ctx); err != nil {
		s.writeErr(w, r, err)
		return
	}
	day, mon, err := s.uptimes.get(ctx, s, string(m.UID))
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	k := answerOf{item: s.listKeyOf(ctx, m, x, strings.Join(plans.DefaultRegions(x.plan, x.regions), ",")), day: percentKey(day), mon: percentKey(mon)}
	body := s.items.single(k)
	if body == nil {
		o, err := s.monitorObject(ctx, m, x, false)
		if err != nil {
			s.writeErr(w, r, err)
			return
		}
		o.Uptime24h, o.Uptime30d = day, mon
		raw, err := json.Marshal(o)
		if err != nil {
			s.writeErr(w, r, err)
			return
		}
		body = append(raw, '\n') // as httpjson.Write's encoder ends it
		s.items.storeSingle(k, body)
	}
	h := w.Header()
	h.Set("Content-Type", httpjson.ContentType)
	h.Set("X-Content-Type-Options", "nosniff")
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

func (s *Server) updateMonitor(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	m := s.pathMonitor(w, r)
	if m == nil {
		return
	}
	var b monitorBody
	if err := decodeJSON(r, &b, false); err != nil {
		s.writeErr(w, r, err)
		return
	}
	wasPaused := m.Spec.Paused
	var warnings []string
	err := s.mutate(ctx, m, func() error {
		wasPaused = m.Spec.Paused
		var err error
		if warnings, err = s.applyMonitorBody(ctx, m, &b, modeUpdate); err != nil {
			return err
		}
		if err := s.validateMonitor(ctx, m); err != nil {
			return err
		}
		_, err = s.keepCredentials(ctx, m)
		return err
	})
	if err != nil {
		s.writeErr(w, r, s.writeFailed(ctx, m.Namespace, err, monitorFieldPath))
		return
	}
	s.recordPause(ctx, m, wasPaused)
	s.writeMonitor(w, r, m, http.StatusOK, true, warnings...)
}

// recordPause opens or closes the store's pause window when paused changed.
func (s *Server) recordPause(ctx context.Context, m *monv1.Monitor, wasPaused bool) {
	if s.opts.Store == nil || wasPaused == m.Spec.Paused {
		return
	}
	now := s.clock.Now()
	var err error
	if m.Spec.Paused {
		err = s.opts.Store.PauseMonitor(ctx, string(m.UID), now)
	} else {
		err = s.opts.Store.ResumeMonitor(ctx, string(m.UID), now)
	}
	if err != nil {
		ctrlLog(ctx).Error(err, "unable to record a pause window", "monitor", m.Name)
	}
}

func (s *Server) deleteMonitor(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	m := s.pathMonitor(w, r)
	if m == nil {
		return
	}
	if err := s.deleteObject(ctx, m); err != nil {
		s.writeErr(w, r, err)
		return
	}
	if s.opts.Store != nil {
		if err := s.opts.Store.DeleteMonitorHistory(ctx, string(m.UID)); err != nil {
			ctrlLog(ctx).Error(err, "unable to delete monitor history; it is pruned after the retention", "monitor", m.Name)
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

// setPaused is pause and resume.
func (s *Server) setPaused(paused bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		m := s.pathMonitor(w, r)
		if m == nil {
			return
		}
		wasPaused := m.Spec.Paused
		err := s.mutate(ctx, m, func() error {
			wasPaused = m.Spec.Paused
			m.Spec.Paused = paused
			return nil
		})
		if err != nil {
			s.writeErr(w, r, s.writeFailed(ctx, m.Namespace, err, monitorFieldPath))
			return
		}
		s.recordPause(ctx, m, wasPaused)
		s.writeMonitor(w, r, m, http.StatusOK, false)
	}
}

func (s *Server) resetStats(w http.ResponseWriter, r *http.Request) {
	m := s.pathMonitor(w, r)
	if m == nil {
		return
	}
	if err := s.opts.Store.ResetStats(r.Context(), string(m.UID)); err != nil {
		s.writeErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, restapi.Success{Success: true, Message: "Statistics reset"})
}

// bulkBody is the body of POST /monitors/bulk.
type bulkBody struct {
	Action  string           `json:"action"`
	IDs     []string         `json:"ids"`
	Tags    []string         `json:"tags"`
	GroupID nullable[string] `json:"group_id"`
}

func (s *Server) bulkMonitors(w http.ResponseWriter, r *http.Request) {
	ctx, c := r.Context(), CallerFrom(r.Context())
	var b bulkBody
	if err := decodeJSON(r, &b, false); err != nil {
		s.writeErr(w, r, err)
		return
	}
	var errs []FieldError
	actions := []string{"pause", "resume", "delete", "add_tags", "remove_tags", "move_group"}
	if !slices.Contains(actions, b.Action) {
		errs = append(errs, fieldErr("action", "must be one of %s", strings.Join(actions, ", ")))
	}
	if len(b.IDs) < 1 || len(b.IDs) > 500 {
		errs = append(errs, fieldErr("ids", "must have 1-500 monitor ids"))
	}
	tags := monitor.NormalizeTags(b.Tags)
	if (b.Action == "add_tags" || b.Action == "remove_tags") && len(tags) == 0 {
		errs = append(errs, fieldErr("tags", "is required for %s", b.Action))
	}
	for i, t := range tags {
		if len(t) < 1 || len(t) > 32 {
			errs = append(errs, fieldErr(fmt.Sprintf("tags[%d]", i), "must be 1-32 characters"))
		}
	}
	var group *monv1.LocalObjectReference
	if b.Action == "move_group" {
		switch {
		case !b.GroupID.Set:
			errs = append(errs, fieldErr("group_id", "is required for move_group (null removes from the group)"))
		case !b.GroupID.Null && b.GroupID.value() != "":
			g, err := s.findByUID(ctx, &monv1.MonitorGroupList{}, c.Namespace, b.GroupID.value())
			if err != nil {
				errs = append(errs, fieldErr("group_id", "monitor group not found"))
			} else {
				group = &monv1.LocalObjectReference{Name: g.GetName()}
			}
		}
	}
	if len(errs) > 0 {
		writeValidation(w, errs...)
		return
	}
	updated := 0
	failed := []restapi.BulkFailure{}
	for _, id := range slices.Compact(slices.Clone(b.IDs)) {
		if err := s.bulkOne(ctx, c.Namespace, id, b.Action, tags, group); err != nil {
			msg := "Monitor not found"
			var ae *apiError
			switch {
			case errors.As(err, &ae):
				msg = ae.Body.Error
				if len(ae.Body.Errors) > 0 {
					msg = ae.Body.Errors[0].Field + ": " + ae.Body.Errors[0].Message
				}
			case !errors.Is(err, errNotFound):
				msg = "could not update the monitor"
				ctrlLog(ctx).Error(err, "bulk action failed", "monitor", id, "action", b.Action)
			}
			failed = append(failed, restapi.BulkFailure{ID: id, Error: msg})
			continue
		}
		updated++
	}
	httpjson.Write(w, http.StatusOK, restapi.BulkResult{Updated: updated, Failed: failed})
}

func (s *Server) bulkOne(ctx context.Context, ns, id, action string, tags []string, group *monv1.LocalObjectReference) error {
	m, err := s.monitorByID(ctx, ns, id)
	if err != nil {
		return err
	}
	if action == "delete" {
		if err := s.deleteObject(ctx, m); err != nil {
			return err
		}
		if s.opts.Store != nil {
			_ = s.opts.Store.DeleteMonitorHistory(ctx, string(m.UID))
		}
		return nil
	}
	wasPaused := m.Spec.Paused
	err = s.mutate(ctx, m, func() error {
		wasPaused = m.Spec.Paused
		switch action {
		case "pause":
			m.Spec.Paused = true
		case "resume":
			m.Spec.Paused = false
		case "add_tags":
			m.Spec.Tags = monitor.NormalizeTags(append(slices.Clone(m.Spec.Tags), tags...))
			if len(m.Spec.Tags) > 20 {
				return validationError(fieldErr("tags", "a monitor has at most 20 tags"))
			}
		case "remove_tags":
			m.Spec.Tags = slices.DeleteFunc(slices.Clone(m.Spec.Tags), func(t string) bool { return slices.Contains(tags, t) })
		case "move_group":
			m.Spec.GroupRef = group
		}
		return nil
	})
	if err != nil {
		return s.writeFailed(ctx, ns, err, monitorFieldPath)
	}
	s.recordPause(ctx, m, wasPaused)
	return nil
}

func resultJSON(res probeapi.Result) restapi.CheckResult {
	return restapi.CheckResult{
		Check: restapi.Check{ID: res.ID, CheckedAt: isoTime(store.UTC(res.CheckedAt)), Region: res.Region, Status: string(res.Status),
			StatusCode: res.StatusCode, ResponseTimeMs: res.ResponseTimeMs, ErrorType: strPtr(res.ErrorType), ErrorMessage: strPtr(res.ErrorMessage)},
		Timings: res.Timings, TLS: res.TLS, Details: res.Details,
	}
}

func (s *Server) testMonitor(w http.ResponseWriter, r *http.Request) {
	ctx, c := r.Context(), CallerFrom(r.Context())
	var b monitorBody
	if err := decodeJSON(r, &b, false); err != nil {
		s.writeErr(w, r, err)
		return
	}
	m, err := s.newMonitor(ctx, c.Namespace, &b)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	// A name no Monitor has: an unsaved definition has no credentials
	// Secret of its own, so it must not match one by name.
	m.Name, m.GenerateName = m.GenerateName+"test-"+utilrand.String(8), ""
	s.runCheck(w, r, m, r.URL.Query().Get("region"), false)
}

func (s *Server) runCheckSaved(w http.ResponseWriter, r *http.Request) {
	m := s.pathMonitor(w, r)
	if m == nil {
		return
	}
	var b struct {
		Region string `json:"region"`
	}
	if err := decodeJSON(r, &b, false); err != nil {
		s.writeErr(w, r, err)
		return
	}
	if b.Region == "" {
		b.Region = r.URL.Query().Get("region")
	}
	s.runCheck(w, r, m, b.Region, true)
}

func (s *Server) runCheck(w http.ResponseWriter, r *http.Request, m *monv1.Monitor, region string, save bool) {
	if s.opts.Engine == nil {
		writeError(w, http.StatusServiceUnavailable, CodeInternal, "checks cannot run right now")
		return
	}
	if m.Spec.Type == monv1.MonitorCron {
		writeValidation(w, fieldErr("type", "cron monitors are checked by their heartbeats, not run on demand"))
		return
	}
	res, err := s.opts.Engine.RunCheck(r.Context(), m, region, save)
	var regionErr *engine.RegionError
	var noAgent *engine.NoAgentError
	var notAllowed *credentials.NotAllowedError
	switch {
	case errors.As(err, &notAllowed):
		writeValidation(w, fieldErr("config.headers", "%v", notAllowed))
		return
	case errors.As(err, &regionErr):
		writeValidation(w, fieldErr("region", "must be one of the monitor's regions: %s", strings.Join(regionErr.Regions, ", ")))
		return
	case errors.As(err, &noAgent):
		// Briefly unavailable: the monitor's agents are starting or away.
		w.Header().Set("Retry-After", "10")
		httpjson.Write(w, http.StatusServiceUnavailable, ErrorBody{
			Error: "No probe agent of the monitor's regions (" + strings.Join(noAgent.Regions, ", ") +
				") is online to run the check; try again shortly", Code: CodeRegionUnavailable,
			Details: map[string]any{"regions": nonNil(noAgent.Regions)}})
		return
	case err != nil:
		s.writeErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, resultJSON(res))
}

// regionsJSON is the answer of the regions endpoints. Regions lists the
// regions the monitor is checked from (its own list, or the plan's default
// regions when it has none), EffectiveRegions the same list under the name
// the monitor object uses, and IsDefault says whether the list is the plan's
// default rather than one set for the monitor.
type regionsJSON struct {
	Regions          []string `json:"regions"`
	EffectiveRegions []string `json:"effective_regions"`
	IsDefault        bool     `json:"is_default"`
}

// monitorRegions answers the regions endpoints for m.
func (s *Server) monitorRegions(w http.ResponseWriter, r *http.Request, m *monv1.Monitor) {
	o, err := s.monitorObject(r.Context(), m, s.refs(m.Namespace), false)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	effective := o.EffectiveRegions
	if len(m.Spec.Regions) > 0 {
		// Just set: the status may still name the previous regions.
		effective = slices.Clone(m.Spec.Regions)
	}
	httpjson.Write(w, http.StatusOK, regionsJSON{Regions: effective, EffectiveRegions: effective, IsDefault: len(m.Spec.Regions) == 0})
}

func (s *Server) getRegions(w http.ResponseWriter, r *http.Request) {
	if m := s.pathMonitor(w, r); m != nil {
		s.monitorRegions(w, r, m)
	}
}

func (s *Server) putRegions(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	m := s.pathMonitor(w, r)
	if m == nil {
		return
	}
	var b struct {
		Regions []string `json:"regions"`
	}
	if err := decodeJSON(r, &b, false); err != nil {
		s.writeErr(w, r, err)
		return
	}
	codes := slices.Compact(slices.Clone(b.Regions))
	if len(codes) < 1 || len(codes) > 50 {
		writeValidation(w, fieldErr("regions", "must have 1-50 region codes"))
		return
	}
	if err := s.mutate(ctx, m, func() error { m.Spec.Regions = codes; return nil }); err != nil {
		s.writeErr(w, r, s.writeFailed(ctx, m.Namespace, err, monitorFieldPath))
		return
	}
	s.monitorRegions(w, r, m)
}

func (s *Server) monitorExplanation(w http.ResponseWriter, r *http.Request) {
	m := s.pathMonitor(w, r)
	if m == nil {
		return
	}
	if s.opts.Engine == nil {
		writeError(w, http.StatusServiceUnavailable, CodeInternal, "the engine is not available")
		return
	}
	ex, err := s.opts.Engine.ExplainMonitor(r.Context(), m)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, ex)
}

func (s *Server) rotateHeartbeat(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	m := s.pathMonitor(w, r)
	if m == nil {
		return
	}
	if m.Spec.Type != monv1.MonitorCron {
		writeValidation(w, fieldErr("type", "only cron monitors have a heartbeat URL"))
		return
	}
	tok := monv1.NewHeartbeatToken()
	err := s.mutate(ctx, m, func() error {
		if m.Annotations == nil {
			m.Annotations = map[string]string{}
		}
		m.Annotations[monv1.HeartbeatTokenAnnotation] = tok
		return nil
	})
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, restapi.HeartbeatURL{HeartbeatURL: s.heartbeatURL(m)})
}

// cronHeartbeatBody is the body of POST /monitors/:id/cron-heartbeat.
type cronHeartbeatBody struct {
	Status          *string `json:"status"`
	ExecutionTimeMs *int64  `json:"execution_time_ms"`
	ExecutionCount  *int64  `json:"execution_count"`
	StatusCode      *int    `json:"status_code"`
}

const maxJobDurationMs = 7 * 24 * 3600 * 1000

func (s *Server) cronHeartbeat(w http.ResponseWriter, r *http.Request) {
	m := s.pathMonitor(w, r)
	if m == nil {
		return
	}
	var b cronHeartbeatBody
	if err := decodeJSON(r, &b, false); err != nil {
		s.writeErr(w, r, err)
		return
	}
	var errs []FieldError
	p := engine.Ping{OK: true, At: s.clock.Now(), DurationMs: b.ExecutionTimeMs, StatusCode: b.StatusCode, ExecutionCount: b.ExecutionCount}
	if b.Status != nil {
		switch strings.ToLower(*b.Status) {
		case "success", "ok", "up":
		case "fail", "failure", "down", "error":
			p.OK = false
		default:
			errs = append(errs, fieldErr("status", "must be one of success, ok, up, fail, failure, down, error"))
		}
	}
	if b.ExecutionTimeMs != nil && (*b.ExecutionTimeMs < 0 || *b.ExecutionTimeMs > maxJobDurationMs) {
		errs = append(errs, fieldErr("execution_time_ms", "must be between 0 and %d (7 days)", maxJobDurationMs))
	}
	if b.StatusCode != nil && (*b.StatusCode < 0 || *b.StatusCode > 999) {
		errs = append(errs, fieldErr("status_code", "must be between 0 and 999"))
	}
	if m.Spec.Type != monv1.MonitorCron {
		errs = append(errs, fieldErr("type", "only cron monitors accept heartbeats"))
	}
	if len(errs) > 0 {
		writeValidation(w, errs...)
		return
	}
	if s.opts.Engine == nil {
		writeError(w, http.StatusServiceUnavailable, CodeInternal, "the engine is not available")
		return
	}
	if err := s.opts.Engine.Heartbeat(r.Context(), m, p); err != nil {
		s.writeErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, restapi.HeartbeatRecorded{Success: true, Paused: m.Spec.Paused})
}

func dnsRecords(rs []store.DNSRecord) []restapi.DNSObservation {
	out := make([]restapi.DNSObservation, 0, len(rs))
	for _, r := range rs {
		out = append(out, restapi.DNSObservation{ObservedAt: isoTime(r.ObservedAt), RecordType: r.RecordType, Answers: nonNil(r.Answers), Changed: r.Changed})
	}
	return out
}

func (s *Server) dnsRecords(w http.ResponseWriter, r *http.Request) {
	m := s.pathMonitor(w, r)
	if m == nil {
		return
	}
	limit, fe := intParam(r, "limit", 50, 1, 1000)
	if fe != nil {
		writeValidation(w, *fe)
		return
	}
	if m.Spec.Type != monv1.MonitorDNS {
		writeValidation(w, fieldErr("type", "only dns monitors have DNS records"))
		return
	}
	ctx := r.Context()
	recs, err := s.opts.Store.ListDNSRecords(ctx, string(m.UID), false, limit)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	changes, err := s.opts.Store.ListDNSRecords(ctx, string(m.UID), true, limit)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	var expected []string
	if m.Spec.DNS != nil {
		expected = m.Spec.DNS.ExpectedValues
	}
	httpjson.Write(w, http.StatusOK, restapi.DNSRecords{Records: dnsRecords(recs), Changes: dnsRecords(changes), ExpectedValues: nonNil(expected)})
}

// routes reports whether ch's routing selects m.
func routes(ch *monv1.AlertChannel, m *monv1.Monitor) bool {
	rt := ch.Spec.Routing
	if rt == nil {
		return true
	}
	switch rt.Scope {
	case "groups":
		return m.Spec.GroupRef != nil && slices.ContainsFunc(rt.Groups, func(g monv1.LocalObjectReference) bool { return g.Name == m.Spec.GroupRef.Name })
	case "monitors":
		return slices.ContainsFunc(rt.Monitors, func(x monv1.LocalObjectReference) bool { return x.Name == m.Name })
	}
	return true
}

// intParam reads an integer query parameter within [lo, hi].
func intParam(r *http.Request, name string, def, lo, hi int) (int, *FieldError) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		fe := fieldErr(name, "must be an integer between %d and %d", lo, hi)
		return 0, &fe
	}
	return n, nil
}
