package automation

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/uuid"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apikeys"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core/coretest"
	"github.com/uptime-operator/uptime-operator/internal/httpjson"
	"github.com/uptime-operator/uptime-operator/internal/monitor"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
)

// fixtureMonitors writes monitors into the fixture's fake client the way
// the monitor handlers do in outline: the sent fields applied, the plan's
// defaults (package monitor, as admission), a 30-second minimum interval
// and a create that fails for a monitor named "refused". The monitor
// handlers' own writes are tested in package monitors and, assembled with
// this package, in internal/apiserver's envtest suite.
type fixtureMonitors struct {
	d       *core.Deps
	deleted []string
}

func (f *fixtureMonitors) Apply(ctx context.Context, m *monv1.Monitor, b *core.MonitorBody) error {
	if b.Name.Set {
		m.Spec.Name = b.Name.Value()
	}
	if b.Type.Set {
		m.Spec.Type = monv1.MonitorType(b.Type.Value())
	}
	if b.URL.Set {
		m.Spec.URL = b.URL.Value()
	}
	if b.IntervalSeconds.Set {
		m.Spec.IntervalSeconds = b.IntervalSeconds.Value()
	}
	if b.Paused.Set {
		m.Spec.Paused = b.Paused.Value()
	}
	if b.Key.Set {
		m.Spec.Key = b.Key.Value()
	}
	plan, err := f.d.Plans.ForNamespace(ctx, m.Namespace)
	if err != nil {
		return err
	}
	monitor.DefaultMonitor(m, plan)
	if m.Spec.IntervalSeconds < 30 {
		return core.ValidationError(core.FieldErr("interval_seconds", "must be at least 30"))
	}
	return nil
}

func (f *fixtureMonitors) Inline(_ context.Context, m *monv1.Monitor) (*monv1.MonitorSpec, error) {
	return &m.Spec, nil
}

func (f *fixtureMonitors) Create(ctx context.Context, m *monv1.Monitor) (*monv1.Monitor, error) {
	if m.Spec.Name == "refused" {
		return nil, core.ValidationError(core.FieldErr("name", "is refused by the fixture"))
	}
	if m.Name == "" {
		m.Name, m.GenerateName = m.GenerateName+string(uuid.NewUUID())[:5], ""
	}
	m.UID = uuid.NewUUID()
	return m, f.d.Client.Create(ctx, m)
}

func (f *fixtureMonitors) Update(ctx context.Context, cur *monv1.Monitor, b *core.MonitorBody) (*monv1.Monitor, error) {
	m := cur.DeepCopy()
	err := f.d.Mutate(ctx, m, func() error { return f.Apply(ctx, m, b) })
	return m, err
}

func (f *fixtureMonitors) Delete(ctx context.Context, m *monv1.Monitor) error {
	f.deleted = append(f.deleted, m.Spec.Key)
	return f.d.DeleteObject(ctx, m)
}

func (f *fixtureMonitors) Respond(w http.ResponseWriter, _ *http.Request, m *monv1.Monitor, code int, _ bool) {
	httpjson.Write(w, code, restapi.Monitor{ID: string(m.UID), Name: m.Spec.Name, Type: string(core.TypeOrDefault(m.Spec.Type)),
		URL: core.StrPtr(m.Spec.URL), IntervalSeconds: m.Spec.IntervalSeconds, IsActive: !m.Spec.Paused, Tags: []string{},
		Regions: core.NonNil(m.Spec.Regions), Config: []byte("{}"), Key: core.StrPtr(m.Spec.Key),
		CreatedAt: core.ISOTime(m.CreationTimestamp.Time), CurrentStatus: string(monv1.StatusPending), EffectiveRegions: []string{}})
}

func newFixture(t *testing.T, objs ...client.Object) (*coretest.Fixture, *fixtureMonitors) {
	f := coretest.New(t, objs...)
	mon := &fixtureMonitors{d: f.Deps}
	New(f.Deps, mon).Routes(f.Router)
	return f, mon
}

// keyedMonitors are the monitors of ns by key.
func keyedMonitors(t *testing.T, f *coretest.Fixture, ns string) map[string]monv1.Monitor {
	t.Helper()
	var list monv1.MonitorList
	if err := f.K8s.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	out := map[string]monv1.Monitor{}
	for _, m := range list.Items {
		out[m.Spec.Key] = m
	}
	return out
}

func spec(key, name string, interval int) map[string]any {
	return map[string]any{"key": key, "name": name, "type": "http", "url": "https://" + name + ".example.com", "interval_seconds": interval}
}

func fieldsOf(body map[string]any) []string {
	var out []string
	for _, e := range body["errors"].([]any) {
		out = append(out, e.(map[string]any)["field"].(string))
	}
	return out
}

// TestPlanAndApply drives plan and apply: a plan writes nothing and a
// read-only key may ask for it, apply creates what the plan showed, a
// second plan of the same list changes nothing, and a changed field is an
// update whose diff names it.
func TestPlanAndApply(t *testing.T) {
	f, _ := newFixture(t)
	list := map[string]any{"monitors": []any{spec("web", "web", 60), spec("team/api", "api", 60)}}

	p := coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "POST", "/automation/monitors/plan", list), 200, "plan")
	if sum := p["summary"].(map[string]any); sum["create"] != float64(2) || sum["total"] != float64(2) {
		t.Fatalf("plan summary = %v", sum)
	}
	if fp, _ := p["plan_fingerprint"].(string); !strings.HasPrefix(fp, "sha256:") {
		t.Fatalf("plan_fingerprint = %v", p["plan_fingerprint"])
	}
	if n := len(keyedMonitors(t, f, "team")); n != 0 {
		t.Fatalf("a plan wrote %d monitors", n)
	}
	ro := coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "POST", "/automation/monitors/apply", list), 403, "read-only apply")
	if ro["code"] != core.CodeReadOnly {
		t.Fatalf("read-only apply = %v", ro)
	}

	res := coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", "/automation/monitors/apply", list), 200, "apply")
	if res["ok"] != true || res["summary"].(map[string]any)["applied"] != float64(2) {
		t.Fatalf("apply = %v", res)
	}
	got := keyedMonitors(t, f, "team")
	if got["web"].Spec.Name != "web" || got["team/api"].Spec.URL != "https://api.example.com" {
		t.Fatalf("applied monitors = %v", got)
	}
	for _, r := range res["results"].([]any) {
		r := r.(map[string]any)
		if r["status"] != "applied" || r["monitor_id"] != string(got[r["key"].(string)].UID) {
			t.Fatalf("result = %v", r)
		}
	}

	again := coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "POST", "/automation/monitors/plan", list), 200, "plan again")
	if again["summary"].(map[string]any)["noop"] != float64(2) {
		t.Fatalf("second plan = %v", again["summary"])
	}
	changed := map[string]any{"monitors": []any{spec("web", "web", 120), spec("team/api", "api", 60)}}
	up := coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "POST", "/automation/monitors/plan", changed), 200, "plan update")
	ch := up["changes"].([]any)[0].(map[string]any)
	diff := ch["diff"].([]any)
	if ch["action"] != "update" || len(diff) != 1 || diff[0].(map[string]any)["field"] != "interval_seconds" ||
		diff[0].(map[string]any)["from"] != float64(60) || diff[0].(map[string]any)["to"] != float64(120) {
		t.Fatalf("update change = %v", ch)
	}
	if up["plan_fingerprint"] == again["plan_fingerprint"] {
		t.Fatal("a different plan has the same fingerprint")
	}
}

// TestPlanRefusesBadSpecs: a list with bad specs fails whole with 400 and
// the spec's index in each field.
func TestPlanRefusesBadSpecs(t *testing.T) {
	f, _ := newFixture(t)
	bad := map[string]any{"monitors": []any{
		map[string]any{"name": "no key"},
		spec("dup", "a", 60), spec("dup", "b", 60),
		map[string]any{"key": "grouped", "name": "g", "group_id": "x"},
		spec("fast", "fast", 5),
	}}
	body := coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", "/automation/monitors/plan", bad), 400, "bad specs")
	if body["code"] != core.CodeValidation {
		t.Fatalf("bad specs = %v", body)
	}
	fields := strings.Join(fieldsOf(body), " ")
	for _, want := range []string{"monitors[0].key", "monitors[2].key", "monitors[3].group_id"} {
		if !strings.Contains(fields, want) {
			t.Errorf("errors %q lack %s", fields, want)
		}
	}
	// Specs that decode are then checked like admission, with their index.
	slow := coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", "/automation/monitors/plan",
		map[string]any{"monitors": []any{spec("ok", "ok", 60), spec("fast", "fast", 5)}}), 400, "too fast")
	if got := fieldsOf(slow); len(got) != 1 || got[0] != "monitors[1].interval_seconds" {
		t.Fatalf("too fast = %v", got)
	}
	missing := coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", "/automation/monitors/plan", map[string]any{}), 400, "no list")
	if got := fieldsOf(missing); len(got) != 1 || got[0] != "monitors" {
		t.Fatalf("no list = %v", got)
	}
	if n := len(keyedMonitors(t, f, "team")); n != 0 {
		t.Fatalf("refused plans wrote %d monitors", n)
	}
}

// TestPruneNeedsTheReviewedPlan: an apply that deletes needs the plan's
// fingerprint (428 without, 409 for a stale one, nothing deleted either
// time), and the apply of the reviewed plan deletes.
func TestPruneNeedsTheReviewedPlan(t *testing.T) {
	f, mon := newFixture(t)
	two := map[string]any{"monitors": []any{spec("web", "web", 60), spec("db", "db", 60)}}
	coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", "/automation/monitors/apply", two), 200, "apply two")

	one := map[string]any{"monitors": []any{spec("web", "web", 60)}, "prune": true}
	p := coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", "/automation/monitors/plan", one), 200, "plan prune")
	if p["summary"].(map[string]any)["delete"] != float64(1) {
		t.Fatalf("prune plan = %v", p["summary"])
	}
	need := coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", "/automation/monitors/apply", one), 428, "prune without fingerprint")
	if need["code"] != core.CodePruneConfirmation || need["details"].(map[string]any)["plan_fingerprint"] != p["plan_fingerprint"] {
		t.Fatalf("428 = %v", need)
	}
	stale := map[string]any{"monitors": one["monitors"], "prune": true, "expected_fingerprint": "sha256:0"}
	if body := coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", "/automation/monitors/apply", stale), 409, "stale fingerprint"); body["code"] != core.CodePlanChanged {
		t.Fatalf("409 = %v", body)
	}
	if len(mon.deleted) != 0 || len(keyedMonitors(t, f, "team")) != 2 {
		t.Fatalf("refused applies deleted %v", mon.deleted)
	}
	reviewed := map[string]any{"monitors": one["monitors"], "prune": true, "expected_fingerprint": p["plan_fingerprint"]}
	coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", "/automation/monitors/apply", reviewed), 200, "reviewed prune")
	if got := keyedMonitors(t, f, "team"); len(got) != 1 || got["web"].Name == "" || len(mon.deleted) != 1 || mon.deleted[0] != "db" {
		t.Fatalf("after prune: %v, deleted %v", got, mon.deleted)
	}
	// Without prune the orphan is kept, and the plan says so.
	keep := coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", "/automation/monitors/plan",
		map[string]any{"monitors": []any{spec("other", "other", 60)}}), 200, "plan without prune")
	if w := keep["warnings"].([]any); len(w) != 1 || !strings.Contains(w[0].(map[string]any)["message"].(string), "kept") {
		t.Fatalf("warnings = %v", keep["warnings"])
	}
}

// TestApplyFailures: a failed change answers 207; without
// continue_on_error the changes after it are skipped, with it they apply.
func TestApplyFailures(t *testing.T) {
	f, _ := newFixture(t)
	list := []any{spec("a", "refused", 60), spec("b", "b", 60)}
	res := coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", "/automation/monitors/apply", map[string]any{"monitors": list}), 207, "stop at failure")
	results := res["results"].([]any)
	if res["ok"] != false || results[0].(map[string]any)["status"] != "failed" || results[1].(map[string]any)["status"] != "skipped" {
		t.Fatalf("apply = %v", res)
	}
	if e := results[0].(map[string]any)["error"].(map[string]any); e["code"] != core.CodeValidation {
		t.Fatalf("failure = %v", e)
	}
	if n := len(keyedMonitors(t, f, "team")); n != 0 {
		t.Fatalf("skipped change wrote %d monitors", n)
	}
	res = coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", "/automation/monitors/apply",
		map[string]any{"monitors": list, "continue_on_error": true}), 207, "continue")
	if sum := res["summary"].(map[string]any); sum["failed"] != float64(1) || sum["applied"] != float64(1) {
		t.Fatalf("continue summary = %v", sum)
	}
	if _, ok := keyedMonitors(t, f, "team")["b"]; !ok {
		t.Fatal("the change after the failure was not applied")
	}
}

// TestAlertRoutingNeedsAnAutomationKey: notification_emails through code
// is for Automation keys only.
func TestAlertRoutingNeedsAnAutomationKey(t *testing.T) {
	f, _ := newFixture(t)
	s := spec("web", "web", 60)
	s["config"] = map[string]any{"notification_emails": []string{"ops@example.com"}}
	list := map[string]any{"monitors": []any{s}}
	body := coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", "/automation/monitors/apply", list), 403, "standard key")
	if body["code"] != core.CodeAlertRouting {
		t.Fatalf("standard key = %v", body)
	}
	put := coretest.Expect(t, f.Call("team", apikeys.Standard, "PUT", "/automation/monitors/web", s), 403, "standard key put")
	if put["code"] != core.CodeAlertRouting {
		t.Fatalf("standard key put = %v", put)
	}
	p := coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", "/automation/monitors/plan", list), 200, "plan")
	if w := p["warnings"].([]any); len(w) != 1 || !strings.Contains(w[0].(map[string]any)["message"].(string), "Automation API key") {
		t.Fatalf("plan warnings = %v", p["warnings"])
	}
	coretest.Expect(t, f.Call("team", apikeys.Automation, "POST", "/automation/monitors/apply", list), 200, "automation key")
}

// TestKeyedMonitors drives /automation/monitors/{key}: keys with "/"
// (sent encoded), create then update, another workspace's key unknown,
// and delete.
func TestKeyedMonitors(t *testing.T) {
	f, mon := newFixture(t)
	path := "/automation/monitors/" + url.PathEscape("team/api")
	created := coretest.Expect(t, f.Call("team", apikeys.Standard, "PUT", path, map[string]any{"name": "api", "url": "https://api.example.com"}), 201, "create")
	if created["key"] != "team/api" || created["name"] != "api" {
		t.Fatalf("created = %v", created)
	}
	updated := coretest.Expect(t, f.Call("team", apikeys.Standard, "PUT", path, map[string]any{"interval_seconds": 300}), 200, "update")
	if updated["id"] != created["id"] || updated["interval_seconds"] != float64(300) {
		t.Fatalf("updated = %v", updated)
	}
	if got := coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "GET", path, nil), 200, "get"); got["id"] != created["id"] {
		t.Fatalf("get = %v", got)
	}
	coretest.Expect(t, f.Call("other", apikeys.ReadOnly, "GET", path, nil), 404, "another workspace")
	mismatch := coretest.Expect(t, f.Call("team", apikeys.Standard, "PUT", path, map[string]any{"key": "else", "name": "x"}), 400, "key mismatch")
	if got := fieldsOf(mismatch); len(got) != 1 || got[0] != "key" {
		t.Fatalf("key mismatch = %v", mismatch)
	}
	if body := coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "GET", "/automation/monitors/-bad", nil), 400, "bad key"); body["code"] != core.CodeValidation {
		t.Fatalf("bad key = %v", body)
	}
	coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "DELETE", path, nil), 403, "read-only delete")
	if rec := f.Call("team", apikeys.Standard, "DELETE", path, nil); rec.Code != http.StatusNoContent {
		t.Fatalf("delete: %d %s", rec.Code, rec.Body)
	}
	if len(mon.deleted) != 1 || mon.deleted[0] != "team/api" {
		t.Fatalf("deleted %v", mon.deleted)
	}
	coretest.Expect(t, f.Call("team", apikeys.Standard, "DELETE", path, nil), 404, "delete again")
}

// TestPutMonitorKey: a key is assigned and removed by monitor id; a key
// another monitor has is 409 and names it.
func TestPutMonitorKey(t *testing.T) {
	f, _ := newFixture(t)
	coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", "/automation/monitors/apply",
		map[string]any{"monitors": []any{spec("web", "web", 60)}}), 200, "apply")
	plain := &monv1.Monitor{}
	plain.Namespace, plain.GenerateName, plain.Spec.Name, plain.Spec.URL = "team", "plain-", "plain", "https://plain.example.com"
	if _, err := (&fixtureMonitors{d: f.Deps}).Create(context.Background(), plain); err != nil {
		t.Fatal(err)
	}
	keyPath := "/automation/monitors/by-id/" + string(plain.UID) + "/key"
	taken := coretest.Expect(t, f.Call("team", apikeys.Standard, "PUT", keyPath, map[string]any{"key": "web"}), 409, "taken key")
	if taken["code"] != core.CodeConflict || taken["details"].(map[string]any)["monitor_id"] != string(keyedMonitors(t, f, "team")["web"].UID) {
		t.Fatalf("taken = %v", taken)
	}
	coretest.Expect(t, f.Call("team", apikeys.Standard, "PUT", keyPath, map[string]any{}), 400, "no key")
	if got := coretest.Expect(t, f.Call("team", apikeys.Standard, "PUT", keyPath, map[string]any{"key": "plain"}), 200, "assign"); got["key"] != "plain" {
		t.Fatalf("assigned = %v", got)
	}
	if _, ok := keyedMonitors(t, f, "team")["plain"]; !ok {
		t.Fatal("the key was not stored")
	}
	if got := coretest.Expect(t, f.Call("team", apikeys.Standard, "PUT", keyPath, map[string]any{"key": nil}), 200, "remove"); got["key"] != nil {
		t.Fatalf("removed = %v", got)
	}
	coretest.Expect(t, f.Call("team", apikeys.Standard, "PUT", "/automation/monitors/by-id/"+string(uuid.NewUUID())+"/key", map[string]any{"key": "x"}), 404, "unknown monitor")
}

// The plan's adopt_by_name takes over the one un-keyed monitor of a name.
func TestAdoptByName(t *testing.T) {
	f, _ := newFixture(t)
	plain := &monv1.Monitor{}
	plain.Namespace, plain.GenerateName, plain.Spec.Name, plain.Spec.URL = "team", "web-", "web", "https://web.example.com"
	if _, err := (&fixtureMonitors{d: f.Deps}).Create(context.Background(), plain); err != nil {
		t.Fatal(err)
	}
	list := map[string]any{"monitors": []any{spec("web", "web", 60)}, "adopt_by_name": true}
	p := coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", "/automation/monitors/plan", list), 200, "plan adopt")
	ch := p["changes"].([]any)[0].(map[string]any)
	if ch["adopted"] != true || ch["monitor_id"] != string(plain.UID) {
		t.Fatalf("adopt change = %v", ch)
	}
	coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", "/automation/monitors/apply", list), 200, "apply adopt")
	got := keyedMonitors(t, f, "team")
	if len(got) != 1 || got["web"].UID != plain.UID {
		t.Fatalf("after adopt: %v", got)
	}
}
