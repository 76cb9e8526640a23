package bootstrap

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/webhooks"
)

const file = `
apiVersion: monitoring.uptime-operator.io/v1alpha1
kind: ProbeRegion
metadata:
  name: eu-west
spec:
  code: eu-west
  displayName: Dublin
  placement: {mode: managed, replicas: 1}
---
apiVersion: monitoring.uptime-operator.io/v1alpha1
kind: Plan
metadata:
  name: starter
spec:
  displayName: Starter
  regions: [eu-west]
---
`

func TestParseRefusesWhatIsNotARegionOrPlan(t *testing.T) {
	for name, doc := range map[string]string{
		"another kind":    "apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: default}\n",
		"another group":   "apiVersion: example.com/v1\nkind: Plan\nmetadata: {name: p}\n",
		"no name":         "apiVersion: monitoring.uptime-operator.io/v1alpha1\nkind: Plan\nmetadata: {}\n",
		"a namespace":     "apiVersion: monitoring.uptime-operator.io/v1alpha1\nkind: Plan\nmetadata: {name: p, namespace: x}\n",
		"declared twice":  "apiVersion: monitoring.uptime-operator.io/v1alpha1\nkind: Plan\nmetadata: {name: p}\n---\napiVersion: monitoring.uptime-operator.io/v1alpha1\nkind: Plan\nmetadata: {name: p}\n",
		"not yaml at all": "{{",
	} {
		if _, err := Parse(strings.NewReader(doc), "r"); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
	if _, err := Parse(strings.NewReader(file), ""); err == nil {
		t.Error("parsed without a release name")
	}
	objs, err := Parse(strings.NewReader(file), "rel")
	if err != nil || len(objs) != 2 {
		t.Fatalf("Parse: %d objects, %v", len(objs), err)
	}
	for _, u := range objs {
		if u.GetLabels()[Label] != "rel" {
			t.Errorf("%s %s: labels %v", u.GetKind(), u.GetName(), u.GetLabels())
		}
	}
}

// TestAppliesOnTheAPIServer runs the applier against one control plane:
// first a first install, whose subject needs the CRDs not served yet (a
// deleted CRD stayed served for over a minute at times, so the install
// goes first rather than each case starting from a clean control plane),
// then the refusals, once the CRDs are served.
func TestAppliesOnTheAPIServer(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run the tests with `make test` (it builds the envtest binaries)")
	}
	env := &envtest.Environment{}
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	t.Run("applies once the CRDs are served", func(t *testing.T) { appliesOnceTheCRDsAreServed(t, cfg) })
	t.Run("refuses what admission refuses", func(t *testing.T) { refusesWhatAdmissionRefuses(t, cfg) })
}

// installCRDs installs the CRDs and waits until they are served.
func installCRDs(t *testing.T, cfg *rest.Config) {
	t.Helper()
	if _, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{Paths: []string{filepath.Join("..", "..", "config", "crd", "bases")}}); err != nil {
		t.Fatal(err)
	}
}

// appliesOnceTheCRDsAreServed is a first install: the manager starts while
// the CRDs are not served yet; the applier waits for them, then creates what
// the file declares, updates it from a changed file, deletes what the file
// dropped and never touches objects without its label.
func appliesOnceTheCRDsAreServed(t *testing.T, cfg *rest.Config) {
	scheme := runtime.NewScheme()
	if err := admissionregistrationv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := monv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "objects.yaml")
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	a := &Applier{Client: c, File: path, Release: "rel", OwnerWebhook: "rel-validating", Log: logr.Discard(), Retry: 100 * time.Millisecond}
	done := make(chan error, 1)
	go func() { done <- a.Start(ctx) }()

	select {
	case err := <-done:
		t.Fatalf("the applier finished before the CRDs were served: %v", err)
	case <-time.After(500 * time.Millisecond):
	}
	// The owner comes with the release, at about the time of the CRDs.
	owner := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	owner.Name = "rel-validating"
	if err := c.Create(ctx, owner); err != nil {
		t.Fatal(err)
	}
	installCRDs(t, cfg)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var region monv1.ProbeRegion
	if err := c.Get(ctx, types.NamespacedName{Name: "eu-west"}, &region); err != nil {
		t.Fatal(err)
	}
	if region.Spec.DisplayName != "Dublin" || region.Labels[Label] != "rel" {
		t.Errorf("region: display name %q, labels %v", region.Spec.DisplayName, region.Labels)
	}
	// envtest runs no garbage collector: the owner reference is what makes
	// `helm uninstall` remove the region (make e2e sees it go).
	if refs := region.OwnerReferences; len(refs) != 1 || refs[0].UID != owner.UID || refs[0].Kind != "ValidatingWebhookConfiguration" {
		t.Errorf("region owner references: %+v, want the ValidatingWebhookConfiguration %s", refs, owner.UID)
	}
	var plan monv1.Plan
	if err := c.Get(ctx, types.NamespacedName{Name: "starter"}, &plan); err != nil {
		t.Fatal(err)
	}

	// An object of the same kind that the file never declared.
	mine := &monv1.Plan{}
	mine.Name = "hand-made"
	if err := c.Create(ctx, mine); err != nil {
		t.Fatal(err)
	}
	// A changed file: the region is renamed in display, the plan is gone.
	changed := strings.Replace(file, "Dublin", "Dublin, IE", 1)
	changed = changed[:strings.Index(changed, "---\napiVersion: monitoring.uptime-operator.io/v1alpha1\nkind: Plan")]
	objs, err := Parse(strings.NewReader(changed), "rel")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Apply(ctx, objs); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, types.NamespacedName{Name: "eu-west"}, &region); err != nil || region.Spec.DisplayName != "Dublin, IE" {
		t.Errorf("region after the change: %q, %v", region.Spec.DisplayName, err)
	}
	if err := c.Get(ctx, types.NamespacedName{Name: "starter"}, &plan); !apierrors.IsNotFound(err) {
		t.Errorf("the plan dropped from the file is still there: %v", err)
	}
	if err := c.Get(ctx, types.NamespacedName{Name: "hand-made"}, &plan); err != nil {
		t.Errorf("the hand-made plan: %v", err)
	}
}

// refusesWhatAdmissionRefuses (issue 36, row 8): the webhooks skip
// bootstrapped objects, so the applier checks them with the same
// functions (webhooks.BootstrapValidator): a region whose code another
// region holds and a plan admission would refuse are reported and not
// applied; the rest of the file is.
func refusesWhatAdmissionRefuses(t *testing.T, cfg *rest.Config) {
	installCRDs(t, cfg) // served already, unless the first install failed early
	scheme := runtime.NewScheme()
	if err := monv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	theirs := &monv1.ProbeRegion{}
	theirs.Name = "virginia"
	theirs.Spec.Code = "us-east"
	theirs.Spec.Placement.Mode = monv1.PlacementManaged
	if err := c.Create(ctx, theirs); err != nil {
		t.Fatal(err)
	}
	objs, err := Parse(strings.NewReader(file+`
apiVersion: monitoring.uptime-operator.io/v1alpha1
kind: ProbeRegion
metadata:
  name: us-east-copy
spec:
  code: us-east
---
apiVersion: monitoring.uptime-operator.io/v1alpha1
kind: Plan
metadata:
  name: too-fast
spec:
  limits: {minIntervalSeconds: 5}
`), "rel")
	if err != nil {
		t.Fatal(err)
	}
	a := &Applier{Client: c, Release: "rel", Validate: webhooks.BootstrapValidator(c), Log: logr.Discard()}
	err = a.Apply(ctx, objs)
	var refused *RefusedError
	if !errors.As(err, &refused) || len(refused.Errs) != 2 {
		t.Fatalf("Apply: %v, want the two objects refused", err)
	}
	for _, want := range []string{`ProbeRegion "us-east-copy"`, "Duplicate value", `Plan "too-fast"`, "minIntervalSeconds"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not say %q: %v", want, err)
		}
	}
	if err := c.Get(ctx, types.NamespacedName{Name: "us-east-copy"}, &monv1.ProbeRegion{}); !apierrors.IsNotFound(err) {
		t.Errorf("the refused region was applied: %v", err)
	}
	if err := c.Get(ctx, types.NamespacedName{Name: "too-fast"}, &monv1.Plan{}); !apierrors.IsNotFound(err) {
		t.Errorf("the refused plan was applied: %v", err)
	}
	if err := c.Get(ctx, types.NamespacedName{Name: "eu-west"}, &monv1.ProbeRegion{}); err != nil {
		t.Errorf("the valid region: %v", err)
	}
	if err := c.Get(ctx, types.NamespacedName{Name: "starter"}, &monv1.Plan{}); err != nil {
		t.Errorf("the valid plan: %v", err)
	}
}
