package aggregated_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/expr-lang/expr"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/jsonpath"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apikeys"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/store/sqlite"
)

// TestRolloutGate drives the rollout gate end to end: the manager's own SLO
// controller evaluates SLOs over a day of results recorded in the
// manager's SQLite store, and the answers are read the three ways
// docs/gitops.md documents: the AnalysisTemplate of the page (its URL,
// header, jsonPath, successCondition and failureCondition, evaluated with
// expr as Argo Rollouts' web provider does) against the REST API with a
// read-only key; the aggregated API as a user holding only the view rules;
// and the Flagger webhook's command, run with kubectl as that user.
func TestRolloutGate(t *testing.T) {
	storePath := filepath.Join(t.TempDir(), "uptime.db")
	env, _, _, _ := startAggregatedWith(t, storePath)
	ctx := context.Background()
	c := env.Client
	const ns = "shop"
	must(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	dir := t.TempDir()
	kubeconfig := func(name string) string {
		path, err := env.Kubeconfig(dir, name)
		must(t, err)
		return path
	}
	// The local control plane installed the aggregate roles
	// (uptime-operator-crd-view among them).
	must(t, c.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "crd-view-carol", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "uptime-operator-crd-view"},
		Subjects:   []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: "carol"}},
	}))
	carolKC, malloryKC := kubeconfig("carol"), kubeconfig("mallory")

	// Three monitors: checkout is healthy, search fails its latest ten
	// minutes, cart is healthy but has an open incident.
	st, err := sqlite.Open(ctx, storePath, sqlite.Options{})
	must(t, err)
	defer st.Close()
	now := time.Now().UTC()
	ids := map[string]string{}
	for _, name := range []string{"checkout", "search", "cart"} {
		m := &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: monv1.MonitorSpec{Name: strings.ToUpper(name[:1]) + name[1:], URL: "http://127.0.0.1:9/" + name}}
		must(t, c.Create(ctx, m))
		ids[name] = string(m.UID)
		var checks []store.Check
		for i := range 24 * 60 {
			status := store.StatusUp
			if name == "search" && i < 10 {
				status = store.StatusDown
			}
			checks = append(checks, store.Check{ID: fmt.Sprintf("gate-%s-%d", name, i), MonitorID: ids[name], Namespace: ns, Region: "eu-1",
				CheckedAt: now.Add(-time.Duration(i+1) * time.Minute), Status: status, ResponseTimeMs: 40})
		}
		_, err := st.InsertChecks(ctx, checks)
		must(t, err)
	}
	inc, err := st.OpenIncident(ctx, store.Incident{Namespace: ns, MonitorID: ids["cart"], MonitorName: "Cart", StartedAt: now.Add(-2 * time.Minute),
		Confirmations: 1, ConfirmingRegions: []string{"eu-1"}, RegionsTotal: 1})
	must(t, err)
	// One SLO per monitor, 99% over a day: search's ten failures leave
	// 31% of the budget but burn it 16.7 times too fast over the last hour
	// and 100 times over the last 5 minutes.
	for _, name := range []string{"checkout", "search", "cart"} {
		must(t, c.Create(ctx, &monv1.SLO{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: monv1.SLOSpec{MonitorRef: monv1.LocalObjectReference{Name: name}, TargetPercentage: 99, WindowMinutes: 1440}}))
	}
	for _, name := range []string{"checkout", "search", "cart"} {
		eventually(t, func() error {
			var o monv1.SLO
			if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &o); err != nil {
				return err
			}
			if o.Status.LastEvaluatedAt == nil {
				return fmt.Errorf("SLO %s not evaluated yet", name)
			}
			return nil
		})
	}

	tpl := analysisTemplate(t)
	key, _, err := apikeys.Create(ctx, c, ns, "rollouts", apikeys.ReadOnly)
	must(t, err)
	apiAddr, err := env.Manager.APIAddr(ctx)
	must(t, err)
	// The AnalysisTemplate's request, with its arguments filled in as the
	// rollouts controller would.
	argo := func(monitorID string) (string, map[string]any) {
		t.Helper()
		args := map[string]string{"base-url": "http://" + apiAddr, "monitor-id": monitorID, "api-key": key}
		// The template's values are defaults; the Rollout's args win.
		for _, a := range tpl.Spec.Args {
			if _, set := args[a.Name]; !set && a.Value != "" {
				args[a.Name] = a.Value
			}
		}
		fill := func(s string) string {
			return regexp.MustCompile(`\{\{\s*args\.([a-z-]+)\s*\}\}`).ReplaceAllStringFunc(s, func(m string) string {
				return args[regexp.MustCompile(`args\.([a-z-]+)`).FindStringSubmatch(m)[1]]
			})
		}
		m := tpl.Spec.Metrics[0]
		req, err := http.NewRequest(http.MethodGet, fill(m.Provider.Web.URL), nil)
		must(t, err)
		for _, h := range m.Provider.Web.Headers {
			req.Header.Set(h.Key, fill(h.Value))
		}
		var body []byte
		eventually(t, func() error { // until the cache serves the key
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			body, _ = io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("%s: %d %s", req.URL, resp.StatusCode, body)
			}
			return nil
		})
		var answer map[string]any
		must(t, json.Unmarshal(body, &answer))
		return argoPhase(t, body, m.Provider.Web.JSONPath, m.SuccessCondition, m.FailureCondition), answer
	}
	stopping := func(answer map[string]any) []string {
		var out []string
		for _, r := range answer["reasons"].([]any) {
			if r := r.(map[string]any); r["ok"] == false {
				out = append(out, r["code"].(string))
			}
		}
		return out
	}

	// Healthy: go.
	phase, answer := argo(ids["checkout"])
	slo := answer["slo"].(map[string]any)
	if phase != "Successful" || answer["decision"] != "go" || slo["error_budget_remaining"] != 100.0 || slo["min_error_budget_remaining"] != 10.0 {
		t.Fatalf("checkout: phase %s, answer %v", phase, answer)
	}
	// Burning fast: stop, because of the burn rate only.
	phase, answer = argo(ids["search"])
	slo = answer["slo"].(map[string]any)
	if phase != "Failed" || answer["decision"] != "stop" || fmt.Sprint(stopping(answer)) != "[burn_rate]" || answer["open_incident"] != false ||
		slo["state"] != "burning_fast" || slo["burn_rate_fast"].(float64) <= 14.4 || slo["error_budget_remaining"].(float64) <= 10 {
		t.Fatalf("search: phase %s, answer %v", phase, answer)
	}
	// An open incident: stop, because of the incident only.
	phase, answer = argo(ids["cart"])
	if phase != "Failed" || fmt.Sprint(stopping(answer)) != "[open_incident]" || answer["open_incident_id"] != inc.ID {
		t.Fatalf("cart: phase %s, answer %v", phase, answer)
	}

	// The aggregated API, as carol (view rules only), by the Monitor's
	// name: the same fields, so the same jsonPath and conditions.
	gates := "/apis/api.uptime-operator.io/v1/namespaces/" + ns + "/rolloutgates/"
	m := tpl.Spec.Metrics[0]
	for name, want := range map[string]string{"checkout": "Successful", "search": "Failed", "cart": "Failed"} {
		raw := kubectl(t, carolKC, "get", "--raw", gates+name+"?windows=1h,5m")
		if got := argoPhase(t, []byte(raw), m.Provider.Web.JSONPath, m.SuccessCondition, m.FailureCondition); got != want {
			t.Fatalf("rolloutgates/%s: %s, want %s\n%s", name, got, want, raw)
		}
		var obj map[string]any
		must(t, json.Unmarshal([]byte(raw), &obj))
		if obj["kind"] != "RolloutGate" || obj["metadata"].(map[string]any)["name"] != name || obj["monitor_id"] != ids[name] {
			t.Fatalf("rolloutgates/%s: %v", name, obj)
		}
	}
	// By id too, and as a table.
	if raw := kubectl(t, carolKC, "get", "--raw", gates+ids["search"]); !strings.Contains(raw, `"decision":"stop"`) {
		t.Fatalf("rolloutgates by id: %s", raw)
	}
	out := kubectl(t, carolKC, "get", "rolloutgate", "search", "-n", ns)
	for _, want := range []string{"DECISION", "STOPPED BY", "stop", "burn_rate", "Search"} {
		if !strings.Contains(out, want) {
			t.Fatalf("kubectl get rolloutgate lacks %q:\n%s", want, out)
		}
	}
	// A bad parameter is a BadRequest Status with the REST message; an
	// unknown name is NotFound; no role at all is forbidden.
	if out, err := kubectlErr(carolKC, "get", "--raw", gates+"checkout?windows=2h"); err == nil || !strings.Contains(out, "BadRequest") && !strings.Contains(out, "windows") {
		t.Fatalf("bad windows: %v\n%s", err, out)
	}
	if out, err := kubectlErr(carolKC, "get", "rolloutgate", "nope", "-n", ns); err == nil || !strings.Contains(out, "not found") {
		t.Fatalf("unknown gate: %v\n%s", err, out)
	}
	if out, err := kubectlErr(malloryKC, "get", "--raw", gates+"checkout"); err == nil || !strings.Contains(strings.ToLower(out), "forbidden") {
		t.Fatalf("no role: %v\n%s", err, out)
	}

	// Flagger's rollout webhook command, run as carol: it fails exactly
	// when the gate stops.
	cmd := flaggerCommand(t)
	for name, wantOK := range map[string]bool{"checkout": true, "search": false, "cart": false} {
		run := exec.Command("bash", "-c", strings.ReplaceAll(cmd, "/rolloutgates/checkout", "/rolloutgates/"+name))
		run.Env = append(os.Environ(), "KUBECONFIG="+carolKC, "PATH="+os.Getenv("KUBEBUILDER_ASSETS")+":"+os.Getenv("PATH"))
		out, err := run.CombinedOutput()
		if (err == nil) != wantOK {
			t.Fatalf("flagger command for %s: %v, want ok %v\n%s", name, err, wantOK, out)
		}
	}
}

// analysisTemplateDoc is what the test reads of the AnalysisTemplate.
type analysisTemplateDoc struct {
	Kind string
	Spec struct {
		Args []struct {
			Name, Value string
		}
		Metrics []struct {
			SuccessCondition string `json:"successCondition"`
			FailureCondition string `json:"failureCondition"`
			Provider         struct {
				Web struct {
					URL      string
					JSONPath string `json:"jsonPath"`
					Headers  []struct{ Key, Value string }
				}
			}
		}
	}
}

// gitopsBlocks are the fenced YAML blocks of docs/gitops.md.
func gitopsBlocks(t *testing.T) []string {
	raw, err := os.ReadFile("../../docs/gitops.md")
	must(t, err)
	var out []string
	for _, m := range regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(raw), -1) {
		out = append(out, m[1])
	}
	return out
}

// analysisTemplate is the AnalysisTemplate of docs/gitops.md.
func analysisTemplate(t *testing.T) analysisTemplateDoc {
	for _, b := range gitopsBlocks(t) {
		var doc analysisTemplateDoc
		if yaml.Unmarshal([]byte(b), &doc) == nil && doc.Kind == "AnalysisTemplate" {
			if len(doc.Spec.Metrics) != 1 || doc.Spec.Metrics[0].Provider.Web.URL == "" {
				t.Fatalf("the AnalysisTemplate of docs/gitops.md has no web metric: %+v", doc)
			}
			return doc
		}
	}
	t.Fatal("docs/gitops.md has no AnalysisTemplate")
	return analysisTemplateDoc{}
}

// flaggerCommand is the command of the Flagger rollout webhook of
// docs/gitops.md.
func flaggerCommand(t *testing.T) string {
	for _, b := range gitopsBlocks(t) {
		var doc struct {
			Analysis struct {
				Webhooks []struct {
					Metadata struct{ Type, Cmd string }
				}
			}
		}
		if yaml.Unmarshal([]byte(b), &doc) == nil && len(doc.Analysis.Webhooks) > 0 && doc.Analysis.Webhooks[0].Metadata.Cmd != "" {
			cmd := doc.Analysis.Webhooks[0].Metadata.Cmd
			if !strings.Contains(cmd, "/namespaces/shop/rolloutgates/checkout") {
				t.Fatalf("the Flagger command names another gate: %s", cmd)
			}
			return cmd
		}
	}
	t.Fatal("docs/gitops.md has no Flagger rollout webhook")
	return ""
}

// argoPhase evaluates a web metric's answer the way Argo Rollouts does
// (metricproviders/webmetric and utils/evaluate): the body decoded as JSON,
// the first value jsonPath (k8s.io/client-go/util/jsonpath) finds is
// `result`, each condition an expr program that must return a bool; without
// a failure condition a false success condition fails, and neither true is
// Inconclusive.
func argoPhase(t *testing.T, body []byte, jsonPath, success, failure string) string {
	t.Helper()
	var data any
	must(t, json.Unmarshal(body, &data))
	if jsonPath == "" {
		jsonPath = "{$}"
	}
	jp := jsonpath.New("metrics")
	must(t, jp.Parse(jsonPath))
	results, err := jp.FindResults(data)
	must(t, err)
	var result any
	found := false
	for _, rs := range results {
		if len(rs) > 0 {
			result, found = rs[0].Interface(), true
			break
		}
	}
	if !found {
		t.Fatalf("jsonPath %s found nothing in %s", jsonPath, body)
	}
	eval := func(cond string) bool {
		env := map[string]any{"result": result}
		prog, err := expr.Compile(cond, expr.Env(env))
		must(t, err)
		out, err := expr.Run(prog, env)
		must(t, err)
		b, ok := out.(bool)
		if !ok {
			t.Fatalf("condition %q returned %T", cond, out)
		}
		return b
	}
	ok, failed := false, false
	if success != "" {
		ok = eval(success)
	}
	if failure != "" {
		failed = eval(failure)
	}
	switch {
	case success != "" && failure == "":
		failed = !ok
	case success == "" && failure != "":
		ok = !failed
	}
	switch {
	case failed:
		return "Failed"
	case ok:
		return "Successful"
	}
	return "Inconclusive"
}
