package automation

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/go-chi/chi/v5"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apikeys"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/credentials"
	"github.com/uptime-operator/uptime-operator/internal/httpjson"
	"github.com/uptime-operator/uptime-operator/internal/monitor"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
)

// Monitoring as code. A keyed monitor is a Monitor CR whose spec.key is set
// (unique per namespace, enforced by admission), so kubectl apply, Helm and
// /automation/monitors manage the same object and each sees the other's
// changes. A monitor spec is the create body without group_id and
// escalation_policy_id, plus key, paused and regions (null resets to the
// plan's default). Omitted fields are not managed.

// Limits of monitoring as code.
const (
	maxCodeSpecs   = 500
	maxCodeBody    = 2 << 20
	maxMonitorKey  = 128
	fingerprintAlg = "sha256:"
)

var monitorKeyRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/-]*$`)

// Plan actions.
const (
	actionCreate  = "create"
	actionUpdate  = "update"
	actionReplace = "replace"
	actionDelete  = "delete"
	actionNoop    = "noop"
)

// validKey reports whether k is a monitoring-as-code key.
func validKey(k string) bool {
	return len(k) >= 1 && len(k) <= maxMonitorKey && monitorKeyRE.MatchString(k)
}

const keyRule = "must be 1-128 characters: letters, digits and . _ : / -, starting with a letter or digit"

// specErrors checks the fields a monitor spec may not or must carry; prefix
// is prepended to field names ("monitors[3].").
func specErrors(b *core.MonitorBody, prefix string, keyRequired bool) []core.FieldError {
	var errs []core.FieldError
	switch {
	case b.Key.Set && !b.Key.Null && !validKey(b.Key.Value()):
		errs = append(errs, core.FieldErr(prefix+"key", keyRule))
	case keyRequired && (!b.Key.Set || b.Key.Null):
		errs = append(errs, core.FieldErr(prefix+"key", "is required"))
	}
	if b.GroupID.Set {
		errs = append(errs, core.FieldErr(prefix+"group_id", "is not part of a monitor spec; set it with PUT /monitors/:id"))
	}
	if b.EscalationPolicyID.Set {
		errs = append(errs, core.FieldErr(prefix+"escalation_policy_id", "is not part of a monitor spec; set it with PUT /monitors/:id"))
	}
	if b.IsActive.Set {
		errs = append(errs, core.FieldErr(prefix+"is_active", "is not part of a monitor spec; use paused"))
	}
	return errs
}

// setsAlertRouting reports whether a spec sets config.notification_emails.
func setsAlertRouting(b *core.MonitorBody) bool {
	if !b.Config.Set || b.Config.Null {
		return false
	}
	_, ok := b.Config.Value()[core.ConfigNotificationEmails]
	return ok
}

var errAlertRouting = core.NewError(http.StatusForbidden, core.CodeAlertRouting,
	"setting config.notification_emails through monitoring as code needs an Automation API key")

// prefixed returns err with prefix prepended to its validation fields.
func prefixed(err error, prefix string) error {
	var ae *core.Error
	if !errors.As(err, &ae) || ae.Body.Code != core.CodeValidation {
		return err
	}
	out := *ae
	out.Body.Errors = make([]core.FieldError, len(ae.Body.Errors))
	for i, fe := range ae.Body.Errors {
		f := prefix + fe.Field
		if fe.Field == "" {
			f = strings.TrimSuffix(prefix, ".")
		}
		out.Body.Errors[i] = core.FieldError{Field: f, Message: fe.Message}
	}
	return &out
}

// desiredMonitor is the monitor that applying spec b to cur (nil: none)
// gives, validated like admission, and whether it replaces cur (the type
// changed). A replacement is a new monitor that keeps cur's name, interval,
// tags, regions, paused state, recipients and references; its config comes
// from the spec alone.
func (h *Handlers) desiredMonitor(ctx context.Context, ns string, b *core.MonitorBody, cur *monv1.Monitor) (*monv1.Monitor, bool, error) {
	var m *monv1.Monitor
	replace := false
	switch {
	case cur == nil:
		if !b.Name.Set || b.Name.Null {
			return nil, false, core.ValidationError(core.FieldErr("name", "is required"))
		}
		m = &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Namespace: ns}}
	case b.Type.Set && core.TypeOrDefault(monv1.MonitorType(strings.ToLower(b.Type.Value()))) != core.TypeOrDefault(cur.Spec.Type):
		replace = true
		old := cur.Spec
		m = &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Namespace: ns}, Spec: monv1.MonitorSpec{
			Name: old.Name, IntervalSeconds: old.IntervalSeconds, Tags: old.Tags, Regions: old.Regions, Paused: old.Paused,
			NotificationEmails: old.NotificationEmails, GroupRef: old.GroupRef, EscalationPolicyRef: old.EscalationPolicyRef,
			Confirmation: old.Confirmation, Key: old.Key,
		}}
		// The new type keeps the url when it checks one (the registry's URL
		// column).
		if info, _ := monv1.LookupMonitorType(monv1.MonitorType(strings.ToLower(b.Type.Value()))); info.URL != monv1.URLNone {
			m.Spec.URL = old.URL
		}
	default:
		m = cur.DeepCopy()
	}
	if err := h.mon.Apply(ctx, m, b); err != nil {
		return nil, false, err
	}
	if m.Name == "" {
		m.GenerateName = core.ObjectNamePrefix(m.Spec.Name, "monitor")
	}
	return m, replace, nil
}

// --- diffs and plans --------------------------------------------------------

// managedView is the managed fields of a spec as JSON values, config keys as
// "config.<key>".
func managedView(sp *monv1.MonitorSpec) map[string]json.RawMessage {
	v := map[string]any{"name": sp.Name, "type": core.TypeOrDefault(sp.Type), "url": core.StrPtr(sp.URL),
		"interval_seconds": sp.IntervalSeconds, "tags": core.NonNil(sp.Tags), "regions": sp.Regions, "paused": sp.Paused,
		"key": core.StrPtr(sp.Key)}
	out := map[string]json.RawMessage{}
	for k, x := range v {
		raw, _ := json.Marshal(x)
		out[k] = raw
	}
	for k, raw := range core.ConfigObject(sp) {
		out["config."+k] = raw
	}
	return out
}

var jsonNull = json.RawMessage("null")

// diffViews lists the fields whose values differ, sorted by name.
func diffViews(from, to map[string]json.RawMessage) []restapi.FieldChange {
	var out []restapi.FieldChange
	seen := map[string]bool{}
	for _, m := range []map[string]json.RawMessage{from, to} {
		for k := range m {
			if seen[k] {
				continue
			}
			seen[k] = true
			a, b := from[k], to[k]
			if a == nil {
				a = jsonNull
			}
			if b == nil {
				b = jsonNull
			}
			if !bytes.Equal(a, b) {
				out = append(out, restapi.FieldChange{Field: k, From: a, To: b})
			}
		}
	}
	slices.SortFunc(out, func(x, y restapi.FieldChange) int { return strings.Compare(x.Field, y.Field) })
	return out
}

// redactDiff shows the changed fields of a plan with credentials redacted:
// a changed credential is listed, its values read [REDACTED].
func redactDiff(diff []restapi.FieldChange, cur, desired *monv1.Monitor) []restapi.FieldChange {
	var from map[string]json.RawMessage
	if cur != nil {
		from = managedView(credentials.Redact(&cur.Spec, cur.Name))
	}
	to := managedView(credentials.Redact(&desired.Spec, desired.Name))
	for i := range diff {
		if v, ok := from[diff[i].Field]; ok {
			diff[i].From = v
		}
		if v, ok := to[diff[i].Field]; ok {
			diff[i].To = v
		}
	}
	return diff
}

// planChange is one entry of a plan: the change as the plan shows it, and
// what applying it needs.
type planChange struct {
	restapi.PlanChange

	spec    *core.MonitorBody
	current *monv1.Monitor
	desired *monv1.Monitor
}

// countAction counts a change of action into p.
func countAction(p *restapi.PlanSummary, action string) {
	p.Total++
	switch action {
	case actionCreate:
		p.Create++
	case actionUpdate:
		p.Update++
	case actionReplace:
		p.Replace++
	case actionDelete:
		p.Delete++
	default:
		p.Noop++
	}
}

// codePlan is a computed plan.
type codePlan struct {
	Changes     []*planChange
	Summary     restapi.PlanSummary
	Warnings    []restapi.PlanWarning
	Fingerprint string
}

// wire is the plan as POST /automation/monitors/plan answers it.
func (p *codePlan) wire() restapi.Plan {
	out := restapi.Plan{Changes: make([]restapi.PlanChange, 0, len(p.Changes)), Summary: p.Summary, Warnings: p.Warnings, PlanFingerprint: p.Fingerprint}
	for _, c := range p.Changes {
		out.Changes = append(out.Changes, c.PlanChange)
	}
	return out
}

// destructive reports whether the plan deletes or replaces a monitor.
func (p *codePlan) destructive() bool { return p.Summary.Delete+p.Summary.Replace > 0 }

// fingerprint is a stable hash of the changes: the same plan always hashes
// the same, and any difference in what would change (an action, a target
// monitor, a field's current or new value) changes it.
func fingerprint(changes []*planChange) string {
	type entry struct {
		A string                `json:"a"`
		K string                `json:"k"`
		M *string               `json:"m"`
		O bool                  `json:"o"`
		D []restapi.FieldChange `json:"d"`
	}
	es := make([]entry, 0, len(changes))
	for _, c := range changes {
		es = append(es, entry{A: c.Action, K: c.Key, M: c.MonitorID, O: c.Adopted, D: c.Diff})
	}
	raw, _ := json.Marshal(es)
	sum := sha256.Sum256(raw)
	return fingerprintAlg + hex.EncodeToString(sum[:])
}

// decodeSpecs decodes and checks the specs of a plan body.
func decodeSpecs(b *restapi.PlanRequest) ([]*core.MonitorBody, error) {
	if !b.Monitors.Set || b.Monitors.Null {
		return nil, core.ValidationError(core.FieldErr("monitors", "is required (an array of monitor specs)"))
	}
	raw := b.Monitors.Value()
	if len(raw) > maxCodeSpecs {
		return nil, core.ValidationError(core.FieldErr("monitors", "must have at most %d specs", maxCodeSpecs))
	}
	var errs []core.FieldError
	specs := make([]*core.MonitorBody, len(raw))
	keys := map[string]int{}
	for i, r := range raw {
		prefix := fmt.Sprintf("monitors[%d].", i)
		var spec restapi.MonitorSpec
		if err := core.DecodeBytes(r, &spec, false, prefix); err != nil {
			var ae *core.Error
			if errors.As(err, &ae) && ae.Body.Code == core.CodeValidation {
				errs = append(errs, ae.Body.Errors...)
				continue
			}
			return nil, core.ValidationError(core.FieldErr(strings.TrimSuffix(prefix, "."), "must be a monitor spec object"))
		}
		mb := core.SpecBody(&spec)
		errs = append(errs, specErrors(mb, prefix, true)...)
		if k := mb.Key.Value(); k != "" {
			if j, dup := keys[k]; dup {
				errs = append(errs, core.FieldErr(prefix+"key", "duplicate of monitors[%d].key", j))
			}
			keys[k] = i
		}
		specs[i] = mb
	}
	if len(errs) > 0 {
		return nil, core.ValidationError(errs...)
	}
	return specs, nil
}

// buildPlan computes what applying specs would change, from the monitors
// the API server holds now. Invalid specs fail the whole plan with 400.
func (h *Handlers) buildPlan(ctx context.Context, ns string, specs []*core.MonitorBody, prune, adopt bool) (*codePlan, error) {
	var list monv1.MonitorList
	if err := h.d.Reader.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil, fmt.Errorf("list monitors: %w", err)
	}
	byKey := map[string]*monv1.Monitor{}
	var unkeyed []*monv1.Monitor
	for i := range list.Items {
		m := &list.Items[i]
		switch {
		case m.DeletionTimestamp != nil:
		case m.Spec.Key != "":
			byKey[m.Spec.Key] = m
		default:
			unkeyed = append(unkeyed, m)
		}
	}
	plan, err := h.d.Plans.ForNamespace(ctx, ns)
	if err != nil {
		return nil, err
	}
	p := &codePlan{Changes: []*planChange{}, Warnings: []restapi.PlanWarning{}}
	adopted := map[*monv1.Monitor]bool{}
	var errs []core.FieldError
	inList := map[string]bool{}
	for i, spec := range specs {
		key := spec.Key.Value()
		inList[key] = true
		ch := &planChange{PlanChange: restapi.PlanChange{Key: key}, spec: spec, current: byKey[key]}
		if ch.current == nil && adopt {
			t := core.TypeOrDefault(monv1.MonitorType(strings.ToLower(spec.Type.Value())))
			var found []*monv1.Monitor
			for _, m := range unkeyed {
				if !adopted[m] && m.Spec.Name == strings.TrimSpace(spec.Name.Value()) && core.TypeOrDefault(m.Spec.Type) == t {
					found = append(found, m)
				}
			}
			switch len(found) {
			case 0:
			case 1:
				ch.current, ch.Adopted = found[0], true
				adopted[found[0]] = true
			default:
				p.Warnings = append(p.Warnings, restapi.PlanWarning{Key: key,
					Message: fmt.Sprintf("%d un-keyed monitors are named %q; none is adopted and a new monitor is created", len(found), spec.Name.Value())})
			}
		}
		desired, replace, err := h.desiredMonitor(ctx, ns, spec, ch.current)
		if err != nil {
			err = prefixed(err, fmt.Sprintf("monitors[%d].", i))
			var ae *core.Error
			if errors.As(err, &ae) && ae.Body.Code == core.CodeValidation {
				errs = append(errs, ae.Body.Errors...)
				continue
			}
			return nil, err
		}
		ch.desired = desired
		ch.Name, ch.Type = desired.Spec.Name, string(core.TypeOrDefault(desired.Spec.Type))
		var before map[string]json.RawMessage
		if ch.current != nil {
			id := string(ch.current.UID)
			ch.MonitorID = &id
			cur := ch.current.DeepCopy()
			monitor.DefaultMonitor(cur, plan)
			inlined, err := h.mon.Inline(ctx, cur)
			if err != nil {
				return nil, err
			}
			before = managedView(inlined)
		}
		ch.Diff = redactDiff(diffViews(before, managedView(&desired.Spec)), ch.current, desired)
		switch {
		case ch.current == nil:
			ch.Action = actionCreate
		case replace:
			ch.Action = actionReplace
			p.Warnings = append(p.Warnings, restapi.PlanWarning{Key: key, Message: fmt.Sprintf(
				"changing type from %s to %s replaces the monitor and deletes its history", core.TypeOrDefault(ch.current.Spec.Type), ch.Type)})
		case len(ch.Diff) > 0:
			ch.Action = actionUpdate
		default:
			ch.Action = actionNoop
		}
		if setsAlertRouting(spec) && ch.Action != actionNoop {
			p.Warnings = append(p.Warnings, restapi.PlanWarning{Key: key, Message: "sets config.notification_emails: applying needs an Automation API key"})
		}
		p.Changes = append(p.Changes, ch)
	}
	if len(errs) > 0 {
		return nil, core.ValidationError(errs...)
	}
	var orphans []*monv1.Monitor
	for k, m := range byKey {
		if !inList[k] {
			orphans = append(orphans, m)
		}
	}
	slices.SortFunc(orphans, func(a, b *monv1.Monitor) int { return strings.Compare(a.Spec.Key, b.Spec.Key) })
	switch {
	case prune:
		for _, m := range orphans {
			id := string(m.UID)
			p.Changes = append(p.Changes, &planChange{PlanChange: restapi.PlanChange{Action: actionDelete, Key: m.Spec.Key, MonitorID: &id,
				Name: m.Spec.Name, Type: string(core.TypeOrDefault(m.Spec.Type))}, current: m})
		}
	case len(orphans) > 0:
		p.Warnings = append(p.Warnings, restapi.PlanWarning{Message: fmt.Sprintf(
			"%d keyed monitors are not in the list and are kept (prune is false)", len(orphans))})
	}
	for _, c := range p.Changes {
		countAction(&p.Summary, c.Action)
	}
	p.Fingerprint = fingerprint(p.Changes)
	return p, nil
}

// decodePlanBody reads and checks the body of plan and apply.
func decodePlanBody(r *http.Request) (*restapi.PlanRequest, []*core.MonitorBody, error) {
	var b restapi.PlanRequest
	if err := core.DecodeJSON(r, &b, false); err != nil {
		return nil, nil, err
	}
	specs, err := decodeSpecs(&b)
	if err != nil {
		return nil, nil, err
	}
	return &b, specs, nil
}

// planMonitors previews an apply; it writes nothing and read-only keys may
// call it.
func (h *Handlers) planMonitors(w http.ResponseWriter, r *http.Request) {
	ctx, c := r.Context(), core.CallerFrom(r.Context())
	b, specs, err := decodePlanBody(r)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	p, err := h.buildPlan(ctx, c.Namespace, specs, b.Prune, b.AdoptByName)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, p.wire())
}

// applyMonitors applies a plan. Deleting or replacing needs the reviewed
// plan's fingerprint or allow_prune_without_fingerprint (else 428 and
// nothing changes); a fingerprint that no longer matches is 409. Each
// monitor is applied on its own; without continue_on_error the first
// failure skips the rest. Any failure answers 207.
func (h *Handlers) applyMonitors(w http.ResponseWriter, r *http.Request) {
	ctx, c := r.Context(), core.CallerFrom(r.Context())
	b, specs, err := decodePlanBody(r)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	if c.Level != apikeys.Automation && slices.ContainsFunc(specs, setsAlertRouting) {
		core.WriteErr(w, r, errAlertRouting)
		return
	}
	p, err := h.buildPlan(ctx, c.Namespace, specs, b.Prune, b.AdoptByName)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	if b.ExpectedFingerprint != "" && b.ExpectedFingerprint != p.Fingerprint {
		httpjson.Write(w, http.StatusConflict, core.ErrorBody{Error: "the plan changed since it was reviewed; plan again", Code: core.CodePlanChanged,
			Details: map[string]any{"expected_fingerprint": b.ExpectedFingerprint, "plan_fingerprint": p.Fingerprint}})
		return
	}
	if p.destructive() && b.ExpectedFingerprint == "" && !b.AllowPruneWithoutFingerprint {
		httpjson.Write(w, http.StatusPreconditionRequired, core.ErrorBody{
			Error: "this apply deletes or replaces monitors; send the reviewed plan's expected_fingerprint or allow_prune_without_fingerprint",
			Code:  core.CodePruneConfirmation, Details: map[string]any{"delete": p.Summary.Delete, "replace": p.Summary.Replace, "plan_fingerprint": p.Fingerprint}})
		return
	}
	sum := restapi.ApplySummary{PlanSummary: p.Summary}
	results := make([]restapi.ApplyChange, 0, len(p.Changes))
	stop := false
	for _, ch := range p.Changes {
		res := restapi.ApplyChange{Key: ch.Key, Action: ch.Action, MonitorID: ch.MonitorID}
		switch {
		case stop:
			res.Status = "skipped"
			sum.Skipped++
		case ch.Action == actionNoop:
			res.Status = "unchanged"
			sum.Unchanged++
		default:
			m, err := h.applyChange(ctx, ch)
			if err != nil {
				res.Status = "failed"
				res.Error = h.resultError(r, err)
				sum.Failed++
				stop = !b.ContinueOnError
				break
			}
			res.Status = "applied"
			sum.Applied++
			if m != nil {
				id := string(m.UID)
				res.MonitorID = &id
			}
		}
		results = append(results, res)
	}
	code := http.StatusOK
	if sum.Failed > 0 {
		code = http.StatusMultiStatus
	}
	httpjson.Write(w, code, restapi.ApplyResult{OK: sum.Failed == 0, Summary: sum, Results: results,
		PlanFingerprint: p.Fingerprint, Warnings: p.Warnings})
}

// resultError renders a failed change's error.
func (h *Handlers) resultError(r *http.Request, err error) *core.ErrorBody {
	var ae *core.Error
	if errors.As(err, &ae) {
		return &ae.Body
	}
	if errors.Is(err, core.ErrNotFound) {
		return &core.ErrorBody{Error: "Monitor not found", Code: core.CodeNotFound}
	}
	core.Log(r).Error(err, "monitoring-as-code change failed")
	return &core.ErrorBody{Error: "internal error", Code: core.CodeInternal}
}

// applyChange carries out one change and returns the resulting monitor (nil
// after a delete).
func (h *Handlers) applyChange(ctx context.Context, ch *planChange) (*monv1.Monitor, error) {
	switch ch.Action {
	case actionCreate:
		return h.mon.Create(ctx, ch.desired)
	case actionUpdate:
		return h.mon.Update(ctx, ch.current, ch.spec)
	case actionReplace:
		return h.replaceKeyed(ctx, ch.current, ch.desired)
	case actionDelete:
		return nil, h.mon.Delete(ctx, ch.current)
	}
	return nil, fmt.Errorf("apply change: unknown action %q", ch.Action)
}

// replaceKeyed replaces cur (whose type changes) by desired: the new monitor
// is created without the key first, so a refusal leaves cur untouched; then
// cur and its history are deleted and the key moves to the new monitor.
func (h *Handlers) replaceKeyed(ctx context.Context, cur, desired *monv1.Monitor) (*monv1.Monitor, error) {
	key := desired.Spec.Key
	m := desired.DeepCopy()
	m.Spec.Key = ""
	if _, err := h.mon.Create(ctx, m); err != nil {
		return nil, err
	}
	if err := h.mon.Delete(ctx, cur); err != nil && !errors.Is(err, core.ErrNotFound) {
		_ = h.d.DeleteObject(ctx, m)
		return nil, err
	}
	if err := h.d.Mutate(ctx, m, func() error { m.Spec.Key = key; return nil }); err != nil {
		return nil, h.d.WriteFailed(ctx, m.Namespace, err, core.MonitorFieldPath)
	}
	return m, nil
}

// --- keyed monitor endpoints --------------------------------------------------

// monitorByKey finds the live monitor of ns with key, asking the API server
// when the cache does not know it yet.
func (h *Handlers) monitorByKey(ctx context.Context, ns, key string) (*monv1.Monitor, error) {
	var list monv1.MonitorList
	if err := h.d.List(ctx, &list, ns); err != nil {
		return nil, err
	}
	find := func() *monv1.Monitor {
		for i := range list.Items {
			if m := &list.Items[i]; m.Spec.Key == key && m.DeletionTimestamp == nil {
				return m
			}
		}
		return nil
	}
	if m := find(); m != nil {
		return m, nil
	}
	if h.d.Reader == h.d.Client {
		return nil, core.ErrNotFound
	}
	if err := h.d.Reader.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil, fmt.Errorf("list monitors: %w", err)
	}
	if m := find(); m != nil {
		return m, nil
	}
	return nil, core.ErrNotFound
}

// pathKey reads the URL-encoded key of /automation/monitors/{key...}; it
// writes the error and returns "" when the key is not valid.
func pathKey(w http.ResponseWriter, r *http.Request) string {
	raw := chi.URLParam(r, "*")
	key, err := url.PathUnescape(raw)
	if err != nil || !validKey(key) {
		core.WriteValidation(w, core.FieldErr("key", keyRule))
		return ""
	}
	return key
}

// keyedMonitor finds the monitor of the path's key; it writes the error and
// returns nil when there is none.
func (h *Handlers) keyedMonitor(w http.ResponseWriter, r *http.Request, key string) *monv1.Monitor {
	m, err := h.monitorByKey(r.Context(), core.CallerFrom(r.Context()).Namespace, key)
	if errors.Is(err, core.ErrNotFound) {
		core.WriteNotFound(w, "Monitor")
		return nil
	}
	if err != nil {
		core.WriteErr(w, r, err)
		return nil
	}
	return m
}

func (h *Handlers) getKeyedMonitor(w http.ResponseWriter, r *http.Request) {
	key := pathKey(w, r)
	if key == "" {
		return
	}
	if m := h.keyedMonitor(w, r, key); m != nil {
		h.mon.Respond(w, r, m, http.StatusOK, true)
	}
}

// putKeyedMonitor creates (201) or updates (200) the monitor with the path's
// key. A changed type replaces the monitor (new id, history deleted).
func (h *Handlers) putKeyedMonitor(w http.ResponseWriter, r *http.Request) {
	ctx, c := r.Context(), core.CallerFrom(r.Context())
	key := pathKey(w, r)
	if key == "" {
		return
	}
	var spec restapi.MonitorSpec
	if err := core.DecodeJSON(r, &spec, false); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	b := core.SpecBody(&spec)
	errs := specErrors(b, "", false)
	if b.Key.Set && b.Key.Value() != key {
		errs = append(errs, core.FieldErr("key", "must match the key in the path"))
	}
	if len(errs) > 0 {
		core.WriteValidation(w, errs...)
		return
	}
	if setsAlertRouting(b) && c.Level != apikeys.Automation {
		core.WriteErr(w, r, errAlertRouting)
		return
	}
	b.Key = core.Nullable[string]{Set: true, V: key}
	cur, err := h.monitorByKey(ctx, c.Namespace, key)
	if err != nil && !errors.Is(err, core.ErrNotFound) {
		core.WriteErr(w, r, err)
		return
	}
	desired, replace, err := h.desiredMonitor(ctx, c.Namespace, b, cur)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	var m *monv1.Monitor
	code := http.StatusOK
	switch {
	case cur == nil:
		m, err = h.mon.Create(ctx, desired)
		code = http.StatusCreated
	case replace:
		m, err = h.replaceKeyed(ctx, cur, desired)
	default:
		m, err = h.mon.Update(ctx, cur, b)
	}
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	h.mon.Respond(w, r, m, code, false)
}

func (h *Handlers) deleteKeyedMonitor(w http.ResponseWriter, r *http.Request) {
	key := pathKey(w, r)
	if key == "" {
		return
	}
	m := h.keyedMonitor(w, r, key)
	if m == nil {
		return
	}
	if err := h.mon.Delete(r.Context(), m); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// putMonitorKey assigns ({key: "..."}) or removes ({key: null}) the key of
// the monitor with the path's id. A key another monitor carries is 409.
func (h *Handlers) putMonitorKey(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	m := h.d.PathMonitor(w, r)
	if m == nil {
		return
	}
	var b restapi.MonitorKeyBody
	if err := core.DecodeJSON(r, &b, true); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	key := b.Key.Value()
	switch {
	case !b.Key.Set:
		core.WriteValidation(w, core.FieldErr("key", "is required (a key, or null to remove it)"))
		return
	case !b.Key.Null && !validKey(key):
		core.WriteValidation(w, core.FieldErr("key", keyRule))
		return
	}
	if key != "" {
		other, err := h.monitorByKey(ctx, m.Namespace, key)
		switch {
		case err == nil && other.UID != m.UID:
			httpjson.Write(w, http.StatusConflict, core.ErrorBody{Error: "another monitor already has this key", Code: core.CodeConflict,
				Details: map[string]any{"monitor_id": string(other.UID)}})
			return
		case err != nil && !errors.Is(err, core.ErrNotFound):
			core.WriteErr(w, r, err)
			return
		}
	}
	err := h.d.Mutate(ctx, m, func() error { m.Spec.Key = key; return nil })
	if err != nil {
		if apierrors.IsInvalid(err) && strings.Contains(err.Error(), "Duplicate value") {
			core.WriteError(w, http.StatusConflict, core.CodeConflict, "another monitor already has this key")
			return
		}
		core.WriteErr(w, r, h.d.WriteFailed(ctx, m.Namespace, err, core.MonitorFieldPath))
		return
	}
	h.mon.Respond(w, r, m, http.StatusOK, false)
}
