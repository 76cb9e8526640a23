package manager_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apikeys"
	"github.com/uptime-operator/uptime-operator/internal/manager"
	"github.com/uptime-operator/uptime-operator/internal/plans"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
	"github.com/uptime-operator/uptime-operator/internal/testenv"
	"github.com/uptime-operator/uptime-operator/internal/testutil"
)

// The manifests a GitOps repository holds: applied, deleted and applied
// again unchanged.
const (
	webManifest = `
apiVersion: monitoring.uptime-operator.io/v1alpha1
kind: Monitor
metadata:
  name: web
  namespace: team
spec:
  type: http
  url: http://127.0.0.1:9/health
  intervalSeconds: 60
  regions: [eu-1]
`
	webSLOManifest = `
apiVersion: monitoring.uptime-operator.io/v1alpha1
kind: SLO
metadata:
  name: web-availability
  namespace: team
spec:
  monitorRef: {name: web}
  targetPercentage: 95
  windowMinutes: 1440
`
)

// TestHistorySurvivesRecreate: a Monitor and its SLO deleted and applied
// again from the same manifests (a GitOps re-sync, a Velero restore) keep
// their history, with the real controllers, engine and store (SQLite, then
// PostgreSQL): the REST API shows the same 24 h and 30 d uptime under the
// monitor's new id, the same incidents now referencing the new id, the SLO
// the same SLI and error budget, and Monitor status the same uptime and
// recent incidents. Before, the history finalizer deleted it all and the
// re-created monitor started empty.
func TestHistorySurvivesRecreate(t *testing.T) {
	// Its subject includes the manager's restart on another store: it runs
	// managers of its own instead of the package's.
	env := testenv.Use(t, env)
	opts := manager.Options{AllowPrivateTargets: true, DefaultPlan: "pro"}
	env.RunManager(t, opts)
	ctx := context.Background()
	for _, o := range []client.Object{
		&monv1.ProbeRegion{ObjectMeta: metav1.ObjectMeta{Name: "eu-1"}},
		&monv1.Plan{ObjectMeta: metav1.ObjectMeta{Name: "pro"}, Spec: monv1.PlanSpec{Features: plans.AllFeatures()}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}},
	} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	key, _, err := apikeys.Create(ctx, env.Client, "team", "ci", apikeys.Standard)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("sqlite", func(t *testing.T) {
		recreateKeepsHistory(t, env, key)
		vanishedMonitorIsRetired(t, env, key)
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := pgSchemaDSN(t, testutil.PostgresDSN(t))
		opts.Store = dsn
		env.RunManager(t, opts)
		recreateKeepsHistory(t, env, key)
		vanishedMonitorIsRetired(t, env, key)
	})
}

// vanishedMonitorIsRetired: a Monitor whose finalizer is removed by hand
// vanishes without retiring its history; the leader's housekeeping
// (Engine.RetireVanished) retires it, ending its open incident, and a
// re-created Monitor of that name adopts it.
func vanishedMonitorIsRetired(t *testing.T, env *testenv.Env, key string) {
	ctx := context.Background()
	api := restClient{t: t, h: env.Manager.Handler(), key: key}
	gone := apply[*monv1.Monitor](t, env, strings.ReplaceAll(webManifest, "name: web", "name: gone"))
	eventually(t, "the monitor is claimed", func() error {
		gens, err := env.Manager.Store.UnretiredGenerations(ctx)
		if err != nil {
			return err
		}
		for _, g := range gens {
			if g.UID == string(gone.UID) {
				return nil
			}
		}
		return fmt.Errorf("%s not claimed", gone.UID)
	})
	code, body := api.do(http.MethodPost, "/incidents", map[string]string{"monitor_id": string(gone.UID)})
	if code != http.StatusCreated {
		t.Fatalf("open incident: %d %v", code, body)
	}
	incID, _ := body["id"].(string)
	patch := client.MergeFrom(gone.DeepCopy())
	gone.Finalizers = nil
	if err := env.Client.Patch(ctx, gone, patch); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(ctx, gone); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the monitor vanishes and is retired", func() error {
		if _, err := env.Manager.Engine.RetireVanished(ctx); err != nil {
			return err
		}
		inc, err := env.Manager.Store.GetIncident(ctx, incID)
		if err != nil {
			return err
		}
		if inc.ResolvedAt == nil {
			return fmt.Errorf("incident %s still open", incID)
		}
		return nil
	})
	again := apply[*monv1.Monitor](t, env, strings.ReplaceAll(webManifest, "name: web", "name: gone"))
	eventually(t, "the re-created monitor adopts the history", func() error {
		inc, err := env.Manager.Store.GetIncident(ctx, incID)
		if err != nil {
			return err
		}
		if inc.MonitorID != string(again.UID) {
			return fmt.Errorf("incident under %s, want %s", inc.MonitorID, again.UID)
		}
		return nil
	})
	if code, _ := api.do(http.MethodDelete, "/monitors/"+string(again.UID), nil); code != http.StatusNoContent {
		t.Fatalf("delete monitor: %d", code)
	}
}

// historySnapshot is what the REST API and Monitor status tell of a
// monitor's history.
type historySnapshot struct {
	uptime24h, uptime30d       any
	incidents                  []string
	statusUptime24h            string
	statusUptime30d            string
	statusRecent               []string
	sli, budgetPct, budgetMins any
}

func recreateKeepsHistory(t *testing.T, env *testenv.Env, key string) {
	ctx := context.Background()
	t.Cleanup(func() {
		if t.Failed() {
			clearNamespace(env, "team")
		}
	})
	api := restClient{t: t, h: env.Manager.Handler(), key: key}
	eventually(t, "the API key authenticates", func() error {
		if code, _ := api.do(http.MethodGet, "/automation/whoami", nil); code != http.StatusOK {
			return fmt.Errorf("whoami: %d", code)
		}
		return nil
	})

	web := apply[*monv1.Monitor](t, env, webManifest)
	oldID := string(web.UID)
	// Two hours of results from eu-1, one in forty down (97.5% uptime; the
	// latest up, so the engine opens no incident), ingested as a probe
	// agent's batch.
	now := time.Now().UTC()
	var results []probeapi.Result
	for i := range 120 {
		status := probeapi.Status("up")
		if i%40 == 5 {
			status = "down"
		}
		results = append(results, probeapi.Result{ID: uuid.NewString(), MonitorID: oldID, Region: "eu-1",
			CheckedAt: now.Add(-2*time.Hour + time.Duration(i)*time.Minute), Status: status, ResponseTimeMs: 40})
	}
	eventually(t, "the engine ingests the results", func() error {
		// The engine drops results of a monitor its cache does not know
		// yet; result ids make the retry idempotent.
		if _, err := env.Manager.Engine.Ingest(ctx, results); err != nil {
			return err
		}
		if !ingested(api, oldID) {
			return fmt.Errorf("no checks of %s yet", oldID)
		}
		return nil
	})
	code, body := api.do(http.MethodPost, "/incidents", map[string]string{"monitor_id": oldID})
	if code != http.StatusCreated {
		t.Fatalf("open incident: %d %s", code, body)
	}
	incID, _ := body["id"].(string)
	if code, body := api.do(http.MethodPost, "/incidents/"+incID+"/resolve", map[string]string{"note": "fixed"}); code != http.StatusOK {
		t.Fatalf("resolve incident: %d %v", code, body)
	}
	slo := apply[*monv1.SLO](t, env, webSLOManifest)

	var before historySnapshot
	eventually(t, "history is visible", func() error {
		var err error
		before, err = snapshot(ctx, env, api, oldID)
		if err != nil {
			return err
		}
		if fmt.Sprint(before.uptime24h) != "97.5" || len(before.incidents) != 1 || before.incidents[0] != incID ||
			before.statusUptime24h == "" || !slices.Contains(before.statusRecent, incID) || before.sli == nil {
			return fmt.Errorf("not yet: %+v", before)
		}
		return nil
	})

	// kubectl delete -f; kubectl apply -f, unchanged.
	for _, o := range []client.Object{slo, web} {
		if err := env.Client.Delete(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "the monitor is gone", func() error {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(web), &monv1.Monitor{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there: %v", err)
		}
		return nil
	})
	again := apply[*monv1.Monitor](t, env, webManifest)
	newID := string(again.UID)
	if newID == oldID {
		t.Fatal("the re-created monitor kept its uid")
	}
	var after historySnapshot
	eventually(t, "the re-created monitor shows the history", func() error {
		var err error
		after, err = snapshot(ctx, env, api, newID)
		if err != nil {
			return err
		}
		if fmt.Sprint(after.uptime24h) != fmt.Sprint(before.uptime24h) || fmt.Sprint(after.uptime30d) != fmt.Sprint(before.uptime30d) ||
			!slices.Equal(after.incidents, before.incidents) || after.statusUptime24h != before.statusUptime24h ||
			after.statusUptime30d != before.statusUptime30d || !slices.Contains(after.statusRecent, incID) {
			return fmt.Errorf("history of the re-created monitor: %+v, before the delete: %+v", after, before)
		}
		return nil
	})
	t.Logf("history before the delete: %+v; after the re-create: %+v", before, after)
	code, body = api.do(http.MethodGet, "/incidents/"+incID, nil)
	if code != http.StatusOK || body["monitor_id"] != newID {
		t.Fatalf("the incident after the re-create: %d, monitor_id %v, want %s", code, body["monitor_id"], newID)
	}
	if _, err := snapshot(ctx, env, api, oldID); err == nil {
		t.Fatal("the old id still answers")
	}

	apply[*monv1.SLO](t, env, webSLOManifest)
	eventually(t, "the re-created SLO has the same budget", func() error {
		s, err := snapshot(ctx, env, api, newID)
		if err != nil {
			return err
		}
		if s.sli == nil || fmt.Sprint(s.sli) != fmt.Sprint(before.sli) || fmt.Sprint(s.budgetPct) != fmt.Sprint(before.budgetPct) ||
			fmt.Sprint(s.budgetMins) != fmt.Sprint(before.budgetMins) {
			return fmt.Errorf("SLO of the re-created monitor: sli %v, budget %v%% %v min; before: sli %v, budget %v%% %v min",
				s.sli, s.budgetPct, s.budgetMins, before.sli, before.budgetPct, before.budgetMins)
		}
		return nil
	})

	// Clean up for the next backend: REST delete removes the history too.
	if code, _ := api.do(http.MethodDelete, "/monitors/"+newID, nil); code != http.StatusNoContent {
		t.Fatalf("delete monitor: %d", code)
	}
	var sloList monv1.SLOList
	if err := env.Client.List(ctx, &sloList, client.InNamespace("team")); err != nil {
		t.Fatal(err)
	}
	for i := range sloList.Items {
		_ = env.Client.Delete(ctx, &sloList.Items[i])
	}
	eventually(t, "the monitor is deleted", func() error {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(web), &monv1.Monitor{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there: %v", err)
		}
		return nil
	})
}

// clearNamespace deletes the Monitors (finalizers and all) and SLOs of ns,
// so a failed backend's objects do not fail the next one.
func clearNamespace(env *testenv.Env, ns string) {
	ctx := context.Background()
	var mons monv1.MonitorList
	_ = env.Client.List(ctx, &mons, client.InNamespace(ns))
	for i := range mons.Items {
		m := &mons.Items[i]
		patch := client.MergeFrom(m.DeepCopy())
		m.Finalizers = nil
		_ = env.Client.Patch(ctx, m, patch)
		_ = env.Client.Delete(ctx, m)
	}
	_ = env.Client.DeleteAllOf(ctx, &monv1.SLO{}, client.InNamespace(ns))
}

// ingested reports whether the monitor has checks.
func ingested(api restClient, id string) bool {
	code, body := api.do(http.MethodGet, "/monitors/"+id+"/checks?limit=1", nil)
	items, _ := body["items"].([]any)
	return code == http.StatusOK && len(items) == 1
}

// snapshot reads the monitor's history through REST and its status.
func snapshot(ctx context.Context, env *testenv.Env, api restClient, id string) (historySnapshot, error) {
	var s historySnapshot
	code, m := api.do(http.MethodGet, "/monitors/"+id, nil)
	if code != http.StatusOK {
		return s, fmt.Errorf("GET /monitors/%s: %d", id, code)
	}
	s.uptime24h, s.uptime30d = m["uptime_24h"], m["uptime_30d"]
	code, list := api.do(http.MethodGet, "/incidents?monitor_id="+url.QueryEscape(id), nil)
	if code != http.StatusOK {
		return s, fmt.Errorf("GET /incidents: %d", code)
	}
	items, _ := list["items"].([]any)
	for _, it := range items {
		inc, _ := it.(map[string]any)
		if inc["monitor_id"] != id {
			return s, fmt.Errorf("incident %v lists monitor %v, want %s", inc["id"], inc["monitor_id"], id)
		}
		s.incidents = append(s.incidents, fmt.Sprint(inc["id"]))
	}
	var mons monv1.MonitorList
	if err := env.Client.List(ctx, &mons, client.InNamespace("team")); err != nil {
		return s, err
	}
	for _, mon := range mons.Items {
		if string(mon.UID) != id {
			continue
		}
		s.statusUptime24h, s.statusUptime30d = mon.Status.Uptime24h, mon.Status.Uptime30d
		for _, r := range mon.Status.RecentIncidents {
			s.statusRecent = append(s.statusRecent, r.ID)
		}
	}
	code, slos := api.doList(http.MethodGet, "/reliability/slo-targets")
	if code != http.StatusOK {
		return s, fmt.Errorf("GET /reliability/slo-targets: %d", code)
	}
	for _, o := range slos {
		if o["monitor_id"] == id {
			s.sli, s.budgetPct, s.budgetMins = o["current_sli"], o["error_budget_remaining_percent"], o["error_budget_remaining_minutes"]
		}
	}
	return s, nil
}

// apply creates the object of a manifest, as kubectl apply does the first
// time.
func apply[T client.Object](t *testing.T, env *testenv.Env, manifest string) T {
	t.Helper()
	var o T
	o = newObject(o).(T)
	if err := yaml.UnmarshalStrict([]byte(manifest), o); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	return o
}

func newObject(o client.Object) client.Object {
	switch o.(type) {
	case *monv1.Monitor:
		return &monv1.Monitor{}
	case *monv1.SLO:
		return &monv1.SLO{}
	}
	panic(fmt.Sprintf("no constructor for %T", o))
}

// restClient calls the manager's REST API in process.
type restClient struct {
	t   *testing.T
	h   http.Handler
	key string
}

func (c restClient) send(method, path string, body any) *httptest.ResponseRecorder {
	c.t.Helper()
	var rd bytes.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			c.t.Fatal(err)
		}
		rd = *bytes.NewReader(b)
	}
	r := httptest.NewRequest(method, path, &rd)
	r.RemoteAddr = "127.0.0.1:40000"
	r.Header.Set("Authorization", "Bearer "+c.key)
	if body != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	w := httptest.NewRecorder()
	c.h.ServeHTTP(w, r)
	return w
}

func (c restClient) do(method, path string, body any) (int, map[string]any) {
	c.t.Helper()
	w := c.send(method, path, body)
	var out map[string]any
	_ = json.Unmarshal(w.Body.Bytes(), &out)
	return w.Code, out
}

func (c restClient) doList(method, path string) (int, []map[string]any) {
	c.t.Helper()
	w := c.send(method, path, nil)
	var out []map[string]any
	_ = json.Unmarshal(w.Body.Bytes(), &out)
	return w.Code, out
}

// eventually retries fn until it succeeds, failing the test after a minute.
func eventually(t *testing.T, what string, fn func() error) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		err := fn()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// pgSchemaDSN returns dsn with a fresh schema as its search_path, dropped
// when the test ends.
func pgSchemaDSN(t *testing.T, dsn string) string {
	t.Helper()
	ctx := context.Background()
	schema := "h_" + strings.ReplaceAll(uuid.NewString(), "-", "")
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			return
		}
		defer conn.Close(ctx)
		_, _ = conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+schema+" CASCADE")
	})
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	return dsn + sep + "search_path=" + schema
}
