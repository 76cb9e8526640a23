package controllers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/manager"
	"github.com/uptime-operator/uptime-operator/internal/plans"
	"github.com/uptime-operator/uptime-operator/internal/testenv"
)

// argoHealthScript is the health check docs/gitops.md tells Argo CD users
// to install for the group.
const argoHealthScript = "../charts/uptime-operator/files/argocd-health.lua"

// argoHealth runs the health check on obj the way Argo CD does
// (util/lua in argo-cd): gopher-lua without the standard libraries but
// package, base and table, the object as the global obj, numbers as Lua
// numbers, and the returned table's status and message.
func argoHealth(t *testing.T, obj map[string]any) (string, string) {
	t.Helper()
	script, err := os.ReadFile(argoHealthScript)
	if err != nil {
		t.Fatal(err)
	}
	l := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer l.Close()
	for name, open := range map[string]lua.LGFunction{lua.LoadLibName: lua.OpenPackage, lua.BaseLibName: lua.OpenBase, lua.TabLibName: lua.OpenTable} {
		l.Push(l.NewFunction(open))
		l.Push(lua.LString(name))
		l.Call(1, 0)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	l.SetContext(ctx)
	l.SetGlobal("obj", luaValue(l, obj))
	if err := l.DoString(string(script)); err != nil {
		t.Fatalf("health check failed on %v: %v", obj["metadata"], err)
	}
	hs, ok := l.Get(-1).(*lua.LTable)
	if !ok {
		t.Fatalf("health check returned %s, want a table", l.Get(-1).Type())
	}
	return lua.LVAsString(hs.RawGetString("status")), lua.LVAsString(hs.RawGetString("message"))
}

// luaValue converts a JSON value to Lua as Argo CD's decodeValue does.
func luaValue(l *lua.LState, v any) lua.LValue {
	switch v := v.(type) {
	case map[string]any:
		t := l.NewTable()
		for k, e := range v {
			t.RawSetString(k, luaValue(l, e))
		}
		return t
	case []any:
		t := l.NewTable()
		for _, e := range v {
			t.Append(luaValue(l, e))
		}
		return t
	case string:
		return lua.LString(v)
	case bool:
		return lua.LBool(v)
	case int64:
		return lua.LNumber(v)
	case float64:
		return lua.LNumber(v)
	case nil:
		return lua.LNil
	}
	panic(fmt.Sprintf("unexpected JSON value %T", v))
}

// argoFor is the Argo CD health that matches a kstatus status: the
// script must say what Flux and `kubectl wait` say.
var argoFor = map[status.Status]string{
	status.CurrentStatus: "Healthy", status.InProgressStatus: "Progressing", status.FailedStatus: "Degraded",
}

// checkGitOps computes obj's kstatus and Argo CD health and compares them
// with want (and the Stalled reason with reason, when want is Failed).
func checkGitOps(t *testing.T, name string, obj map[string]any, want status.Status, reason string) error {
	t.Helper()
	res, err := status.Compute(&unstructured.Unstructured{Object: obj})
	if err != nil {
		return err
	}
	health, msg := argoHealth(t, obj)
	switch {
	case res.Status != want:
		return fmt.Errorf("%s: kstatus %s (%s), want %s", name, res.Status, res.Message, want)
	case want == status.FailedStatus && (len(res.Conditions) == 0 || res.Conditions[0].Reason != reason):
		return fmt.Errorf("%s: kstatus Failed with %+v, want reason %s", name, res.Conditions, reason)
	case health != argoFor[want]:
		return fmt.Errorf("%s: Argo CD health %s (%s), want %s", name, health, msg, argoFor[want])
	case want == status.FailedStatus && !strings.HasPrefix(msg, reason+": "):
		return fmt.Errorf("%s: Argo CD message %q does not start with %s", name, msg, reason)
	}
	return nil
}

// TestArgoHealthScript runs the Argo CD health check on hand-made objects
// at the edges the controllers do not produce on their own (no status at
// all, conditions without messages) and checks it agrees with kstatus.
func TestArgoHealthScript(t *testing.T) {
	obj := func(gen int64, st map[string]any) map[string]any {
		o := map[string]any{"apiVersion": "monitoring.uptime-operator.io/v1alpha1", "kind": "Monitor",
			"metadata": map[string]any{"name": "m", "generation": gen}}
		if st != nil {
			o["status"] = st
		}
		return o
	}
	cond := func(typ, st, reason string) map[string]any {
		return map[string]any{"type": typ, "status": st, "reason": reason}
	}
	for _, tc := range []struct {
		name   string
		obj    map[string]any
		want   status.Status
		reason string
	}{
		{"plan: no status", obj(1, nil), status.CurrentStatus, ""},
		{"created, defaulted status", obj(1, map[string]any{"observedGeneration": int64(-1)}), status.InProgressStatus, ""},
		{"spec changed", obj(3, map[string]any{"observedGeneration": int64(2),
			"conditions": []any{cond("Ready", "True", "Reconciled")}}), status.InProgressStatus, ""},
		{"ready", obj(2, map[string]any{"observedGeneration": int64(2),
			"conditions": []any{cond("Ready", "True", "Reconciled")}}), status.CurrentStatus, ""},
		{"not ready, no progress conditions", obj(2, map[string]any{"observedGeneration": int64(2),
			"conditions": []any{cond("Ready", "False", "AwaitingAgents")}}), status.InProgressStatus, ""},
		{"stalled without a message", obj(2, map[string]any{"observedGeneration": int64(2),
			"conditions": []any{cond("Ready", "False", "SlugTaken"), cond("Stalled", "True", "SlugTaken")}}), status.FailedStatus, "SlugTaken"},
		{"reconciling", obj(2, map[string]any{"observedGeneration": int64(2),
			"conditions": []any{cond("Reconciling", "True", "ReconcileError"), cond("Ready", "False", "ReconcileError")}}), status.InProgressStatus, ""},
		{"stalled False is ignored", obj(2, map[string]any{"observedGeneration": int64(2),
			"conditions": []any{cond("Stalled", "False", "Fixed"), cond("Ready", "True", "Reconciled")}}), status.CurrentStatus, ""},
	} {
		if err := checkGitOps(t, tc.name, tc.obj, tc.want, tc.reason); err != nil {
			t.Error(err)
		}
	}
}

// TestArgoHealthDocumented checks that the argocd-cm snippet in
// docs/gitops.md installs the script file byte for byte, so the two
// cannot drift.
func TestArgoHealthDocumented(t *testing.T) {
	script, err := os.ReadFile(argoHealthScript)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../docs/gitops.md")
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)```yaml\n(apiVersion: v1\nkind: ConfigMap\n.*?)```").FindSubmatch(doc)
	if block == nil {
		t.Fatal("docs/gitops.md has no argocd-cm ConfigMap block")
	}
	var cm corev1.ConfigMap
	if err := yaml.Unmarshal(block[1], &cm); err != nil {
		t.Fatal(err)
	}
	var customizations map[string]map[string]string
	if err := yaml.Unmarshal([]byte(cm.Data["resource.customizations"]), &customizations); err != nil {
		t.Fatal(err)
	}
	if got := customizations["monitoring.uptime-operator.io/*"]["health.lua"]; got != string(script) {
		t.Errorf("docs/gitops.md installs a different script than %s:\n%s", argoHealthScript, got)
	}
}

// TestGitOpsStatus runs the real manager on envtest and checks, for every
// kind the controllers reconcile and every reason they stall for, what
// kstatus (sigs.k8s.io/cli-utils v0.37.2, as Flux and `kubectl wait` use
// it) and the Argo CD health check compute on the object exactly as the
// API server returns it: InProgress/Progressing as created (before any
// controller wrote status), then Current/Healthy, InProgress/Progressing
// or Failed/Degraded; and that each stall is also a Warning Event.
func TestGitOpsStatus(t *testing.T) {
	env := testenv.Use(t, env)
	const sys = probeNS
	ctx := context.Background()
	c := env.Client
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}

	// An admission policy refuses the probe Deployment of region
	// "refused", as Kyverno, Gatekeeper or Pod Security tooling would.
	must(c.Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "no-refused-probes"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}},
				},
			}}},
			Validations: []admissionregistrationv1.Validation{{
				Expression: "!object.metadata.name.endsWith('-refused')", Message: "probe Deployments of region refused are not allowed here",
			}},
		},
	}))
	must(c.Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "no-refused-probes"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "no-refused-probes",
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}},
	}))
	settle(t, "the admission policy to refuse a probe Deployment", time.Minute, func() error {
		if err := c.Create(ctx, refusedDeployment(sys), client.DryRunAll); err == nil {
			return fmt.Errorf("a dry-run create passed")
		}
		return nil
	})

	// Workspaces: one with every feature, one whose plan allows only a
	// region that does not exist (its monitors have no regions).
	must(c.Create(ctx, &monv1.Plan{ObjectMeta: metav1.ObjectMeta{Name: "gitops"}, Spec: monv1.PlanSpec{Features: plans.AllFeatures()}}))
	must(c.Create(ctx, &monv1.Plan{ObjectMeta: metav1.ObjectMeta{Name: "mars-only"}, Spec: monv1.PlanSpec{Regions: []string{"mars"}}}))
	ns := env.Namespace(t, map[string]string{monv1.PlanLabel: "gitops"})
	bare := env.Namespace(t, map[string]string{monv1.PlanLabel: "mars-only"})

	meta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: ns, Name: name} }
	monitor := func(name string, regions ...string) *monv1.Monitor {
		return &monv1.Monitor{ObjectMeta: meta(name), Spec: monv1.MonitorSpec{URL: "https://example.com/" + name, Regions: regions}}
	}
	withSecretHeader := monitor("secret-missing", "eu-west")
	withSecretHeader.Spec.HTTP = &monv1.HTTPConfig{Headers: []monv1.HTTPHeader{{Name: "Authorization",
		ValueFrom: &monv1.SecretKeySelector{Name: "api-token", Key: "token"}}}}
	noRegions := &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Namespace: bare, Name: "no-regions"},
		Spec: monv1.MonitorSpec{URL: "https://example.com/"}}
	now := time.Now()

	type tcase struct {
		name   string
		obj    client.Object
		want   status.Status
		reason string // the Stalled reason, and the reason of a Warning Event
	}
	cases := []tcase{
		{"plan", &monv1.Plan{ObjectMeta: metav1.ObjectMeta{Name: "empty"}}, status.CurrentStatus, ""},
		{"region idle", &monv1.ProbeRegion{ObjectMeta: metav1.ObjectMeta{Name: "idle"}}, status.CurrentStatus, ""},
		{"region awaiting agents", &monv1.ProbeRegion{ObjectMeta: metav1.ObjectMeta{Name: "eu-west"}}, status.InProgressStatus, ""},
		{"region refused", &monv1.ProbeRegion{ObjectMeta: metav1.ObjectMeta{Name: "refused"}}, status.FailedStatus, monv1.ReasonProbeDeploymentRejected},
		{"monitor", monitor("web", "eu-west"), status.CurrentStatus, ""},
		{"monitor of refused region", monitor("refused-user", "refused"), status.CurrentStatus, ""},
		{"monitor secret missing", withSecretHeader, status.FailedStatus, monv1.ReasonSecretNotFound},
		{"monitor no regions", noRegions, status.FailedStatus, monv1.ReasonNoRegions},
		{"group", &monv1.MonitorGroup{ObjectMeta: meta("frontend")}, status.CurrentStatus, ""},
		{"channel", &monv1.AlertChannel{ObjectMeta: meta("pager"),
			Spec: monv1.AlertChannelSpec{Type: monv1.ChannelEmail, Emails: []string{"pager@example.com"}}}, status.CurrentStatus, ""},
		{"channel secret missing", &monv1.AlertChannel{ObjectMeta: meta("hook"), Spec: monv1.AlertChannelSpec{Type: monv1.ChannelWebhook,
			WebhookURLFrom: &monv1.SecretKeySelector{Name: "hook-url", Key: "url"}}}, status.FailedStatus, monv1.ReasonSecretNotFound},
		{"policy", &monv1.EscalationPolicy{ObjectMeta: meta("oncall"), Spec: monv1.EscalationPolicySpec{Steps: []monv1.EscalationStep{
			{DelayMinutes: 5, Channels: []monv1.LocalObjectReference{{Name: "pager"}}}}}}, status.CurrentStatus, ""},
		{"policy channel missing", &monv1.EscalationPolicy{ObjectMeta: meta("nobody"), Spec: monv1.EscalationPolicySpec{Steps: []monv1.EscalationStep{
			{DelayMinutes: 5, Channels: []monv1.LocalObjectReference{{Name: "gone"}}}}}}, status.FailedStatus, monv1.ReasonReferenceNotFound},
		{"slo", &monv1.SLO{ObjectMeta: meta("web-availability"), Spec: monv1.SLOSpec{MonitorRef: monv1.LocalObjectReference{Name: "web"},
			TargetPercentage: 99.9, WindowMinutes: 43200}}, status.CurrentStatus, ""},
		{"monitor deleted later", monitor("doomed", "eu-west"), status.CurrentStatus, ""},
		{"slo monitor missing", &monv1.SLO{ObjectMeta: meta("doomed-availability"), Spec: monv1.SLOSpec{MonitorRef: monv1.LocalObjectReference{Name: "doomed"},
			TargetPercentage: 99.9, WindowMinutes: 43200}}, status.FailedStatus, monv1.ReasonReferenceNotFound},
		{"maintenance", &monv1.MaintenanceWindow{ObjectMeta: meta("upgrade"), Spec: monv1.MaintenanceWindowSpec{Title: "Upgrade",
			StartsAt: metav1.NewTime(now.Add(time.Hour)), EndsAt: metav1.NewTime(now.Add(2 * time.Hour)), Scope: "all"}}, status.CurrentStatus, ""},
		{"on-call", &monv1.OnCallSchedule{ObjectMeta: meta("primary"), Spec: monv1.OnCallScheduleSpec{ShiftHours: 24, StartsAt: metav1.NewTime(now.Add(-time.Hour)),
			Participants: []monv1.OnCallParticipant{{Name: "Ann", Email: "ann@example.com"}}}}, status.CurrentStatus, ""},
		{"page", &monv1.StatusPage{ObjectMeta: meta("status"), Spec: monv1.StatusPageSpec{Title: "Status", Slug: "acme",
			Monitors: []monv1.StatusPageMonitor{{MonitorRef: monv1.LocalObjectReference{Name: "web"}}}}}, status.CurrentStatus, ""},
		{"page monitor missing", &monv1.StatusPage{ObjectMeta: meta("partial"), Spec: monv1.StatusPageSpec{Title: "Partial", Slug: "partial",
			Monitors: []monv1.StatusPageMonitor{{MonitorRef: monv1.LocalObjectReference{Name: "gone"}}}}}, status.FailedStatus, monv1.ReasonReferenceNotFound},
	}
	for _, tc := range cases {
		// Admission reads references (regions, an SLO's monitor) from the
		// manager's cache, which may not have the previous objects yet.
		settle(t, "admission of "+tc.name, time.Minute, func() error { return c.Create(ctx, tc.obj) })
		// The create response is the object as stored, before any
		// controller has seen it: never Current yet, except for a Plan,
		// which no controller reconciles.
		fresh := status.InProgressStatus
		if _, ok := tc.obj.(*monv1.Plan); ok {
			fresh = status.CurrentStatus
		}
		if err := checkGitOps(t, tc.name+" (as created)", asMap(t, tc.obj), fresh, ""); err != nil {
			t.Error(err)
		}
	}

	// A second page with a taken slug gets past admission only while the
	// webhook is off (failurePolicy Ignore during an outage, or webhooks
	// disabled): let it through for pages labelled so. The older page keeps
	// the slug (within the same second, the first name in order).
	var hooks admissionregistrationv1.ValidatingWebhookConfigurationList
	must(c.List(ctx, &hooks))
	bypass := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "gitops-test/no-admission", Operator: metav1.LabelSelectorOpDoesNotExist}}}
	for i := range hooks.Items {
		for j := range hooks.Items[i].Webhooks {
			if hooks.Items[i].Webhooks[j].Name == "vstatuspage.uptime-operator.io" {
				hooks.Items[i].Webhooks[j].ObjectSelector = bypass
				must(c.Update(ctx, &hooks.Items[i]))
			}
		}
	}
	taken := &monv1.StatusPage{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "status-copy", Labels: map[string]string{"gitops-test/no-admission": "true"}},
		Spec: monv1.StatusPageSpec{Title: "Copy", Slug: "acme"}}
	settle(t, "the duplicate page to pass admission", time.Minute, func() error { return c.Create(ctx, taken.DeepCopy()) })
	must(c.Get(ctx, client.ObjectKeyFromObject(taken), taken))
	cases = append(cases, tcase{"page slug taken", taken, status.FailedStatus, monv1.ReasonSlugTaken})
	// An SLO's monitor must exist when the SLO is admitted; it goes
	// missing when the Monitor is deleted later, noticed at the SLO's next
	// evaluation (every minute).
	must(c.Delete(ctx, monitor("doomed")))
	for i := range cases {
		if cases[i].name == "monitor deleted later" {
			cases = append(cases[:i], cases[i+1:]...)
			break
		}
	}

	for _, tc := range cases {
		settle(t, tc.name+" to settle as "+string(tc.want), 2*time.Minute, func() error {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(gvk(t, tc.obj))
			if err := c.Get(ctx, client.ObjectKeyFromObject(tc.obj), u); err != nil {
				return err
			}
			return checkGitOps(t, tc.name, u.Object, tc.want, tc.reason)
		})
		if tc.reason == "" {
			continue
		}
		settle(t, "a "+tc.reason+" Event on "+tc.name, time.Minute, func() error {
			var events corev1.EventList
			if err := c.List(ctx, &events, client.InNamespace(eventNamespace(tc.obj))); err != nil {
				return err
			}
			for _, e := range events.Items {
				if e.InvolvedObject.Name == tc.obj.GetName() && e.InvolvedObject.Kind == gvk(t, tc.obj).Kind &&
					e.Type == corev1.EventTypeWarning && e.Reason == tc.reason {
					return nil
				}
			}
			return fmt.Errorf("none among %d Events", len(events.Items))
		})
	}

	// Stalled objects recover by themselves once the cause is gone:
	// Monitors and AlertChannels look for Secrets and regions again.
	// The Secret opts in to being referenced by Monitors (docs/security.md, Credentials).
	token := meta("api-token")
	token.Labels = map[string]string{monv1.CredentialsLabel: monv1.CredentialsLabelValue}
	must(c.Create(ctx, &corev1.Secret{ObjectMeta: token, StringData: map[string]string{"token": "t"}}))
	hookSecret := meta("hook-url")
	// An AlertChannel reads only its own Secrets or opted-in ones.
	hookSecret.Labels = map[string]string{monv1.CredentialsLabel: monv1.CredentialsLabelValue}
	must(c.Create(ctx, &corev1.Secret{ObjectMeta: hookSecret, StringData: map[string]string{"url": "https://example.com/hook"}}))
	must(c.Create(ctx, &monv1.ProbeRegion{ObjectMeta: metav1.ObjectMeta{Name: "mars"}}))
	for _, obj := range []client.Object{withSecretHeader, noRegions, &monv1.AlertChannel{ObjectMeta: meta("hook")}} {
		settle(t, obj.GetName()+" to recover", 2*time.Minute, func() error {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(gvk(t, obj))
			if err := c.Get(ctx, client.ObjectKeyFromObject(obj), u); err != nil {
				return err
			}
			return checkGitOps(t, obj.GetName()+" recovered", u.Object, status.CurrentStatus, "")
		})
	}
}

// refusedDeployment is a Deployment the test's admission policy refuses.
func refusedDeployment(ns string) client.Object {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"namespace": ns, "name": "policy-check-refused"},
		"spec": map[string]any{
			"selector": map[string]any{"matchLabels": map[string]any{"app": "x"}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "x"}},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "x", "image": "x"}}},
			},
		},
	}}
	return u
}

// eventNamespace is where Events about obj go: its namespace, or default
// for cluster-scoped objects.
func eventNamespace(obj client.Object) string {
	if obj.GetNamespace() == "" {
		return metav1.NamespaceDefault
	}
	return obj.GetNamespace()
}

// settle waits up to timeout for ok to return nil, and fails the test
// with its last error otherwise.
func settle(t *testing.T, what string, timeout time.Duration, ok func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := ok()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s: %v", what, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func gvk(t *testing.T, obj client.Object) schema.GroupVersionKind {
	t.Helper()
	kinds, _, err := manager.Scheme().ObjectKinds(obj)
	if err != nil {
		t.Fatal(err)
	}
	return kinds[0]
}

// asMap is obj as JSON, the way kstatus and Argo CD see it.
func asMap(t *testing.T, obj runtime.Object) map[string]any {
	t.Helper()
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return normaliseNumbers(m).(map[string]any)
}

// normaliseNumbers turns the float64 numbers of encoding/json into int64
// where they are whole, as the API machinery's decoder does.
func normaliseNumbers(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = normaliseNumbers(e)
		}
	case []any:
		for i, e := range v {
			v[i] = normaliseNumbers(e)
		}
	case float64:
		if v == float64(int64(v)) {
			return int64(v)
		}
	}
	return v
}
