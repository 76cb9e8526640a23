package probeserver

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/assign"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

// TestAssignmentListSettles: a region's list is built again only after a
// change, and no sooner than a second after the previous build, so a burst
// of creates costs one build, not one per create; an unchanged list is the
// one built before.
func TestAssignmentListSettles(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = monv1.AddToScheme(scheme)
	mon := func(name string) *monv1.Monitor {
		return &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name)},
			Spec: monv1.MonitorSpec{Type: monv1.MonitorHTTP, URL: "https://example.com/", IntervalSeconds: 60, Regions: []string{"eu"}}}
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(mon("a")).Build()
	s := New(Options{Client: c})
	ctx := context.Background()
	first, err := s.AssignmentList(ctx, "eu")
	if err != nil || len(first.Assignments) != 1 {
		t.Fatalf("first list: %v, %v", first, err)
	}
	again, err := s.AssignmentList(ctx, "eu")
	if err != nil || &again.Assignments[0] != &first.Assignments[0] {
		t.Fatalf("an unchanged list was built again (%v)", err)
	}
	start := time.Now()
	for _, n := range []string{"b", "c", "d"} {
		if err := c.Create(ctx, mon(n)); err != nil {
			t.Fatal(err)
		}
		s.AssignmentsChanged()
	}
	list, err := s.AssignmentList(ctx, "eu")
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Assignments) != 4 || list.Revision == first.Revision {
		t.Fatalf("after the creates: %d assignments, revision changed %v; want 4 and a new revision", len(list.Assignments), list.Revision != first.Revision)
	}
	if took := time.Since(start); took < 900*time.Millisecond {
		t.Fatalf("the list was built again %s after the previous build; want a second's settling", took)
	}
}

// TestAssignmentListCredentialsAge: a list whose build read no Secret is
// not built again when assign.CredentialsTTL has passed without a change
// (at 100,000 Monitors each build is seconds of CPU), while a list that
// resolved a Secret is, so a rotated credential reaches the agents.
func TestAssignmentListCredentialsAge(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = monv1.AddToScheme(scheme)
	plain := &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Name: "plain", Namespace: "ns", UID: "uid-plain"},
		Spec: monv1.MonitorSpec{Type: monv1.MonitorHTTP, URL: "https://example.com/", IntervalSeconds: 60, Regions: []string{"eu"}}}
	keyed := &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Name: "keyed", Namespace: "ns", UID: "uid-keyed"},
		Spec: monv1.MonitorSpec{Type: monv1.MonitorHTTP, URL: "https://example.com/", IntervalSeconds: 60, Regions: []string{"us"},
			HTTP: &monv1.HTTPConfig{Headers: []monv1.HTTPHeader{{Name: "Authorization",
				ValueFrom: &monv1.SecretKeySelector{Name: "creds", Key: "token"}}}}}}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: "ns",
		Labels: map[string]string{monv1.CredentialsLabel: monv1.CredentialsLabelValue}}, Data: map[string][]byte{"token": []byte("one")}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(plain, keyed, secret).Build()
	now := time.Now()
	s := New(Options{Client: c, Secrets: c, Now: func() time.Time { return now }})
	ctx := context.Background()
	eu, err := s.AssignmentList(ctx, "eu")
	if err != nil || len(eu.Assignments) != 1 {
		t.Fatalf("eu list: %v, %v", eu, err)
	}
	us, err := s.AssignmentList(ctx, "us")
	if err != nil || len(us.Assignments) != 1 || probeapi.HeaderText(us.Assignments[0].Config.HTTP.Headers)["Authorization"] != "one" {
		t.Fatalf("us list: %+v, %v", us, err)
	}
	secret.Data["token"] = []byte("two")
	if err := c.Update(ctx, secret); err != nil {
		t.Fatal(err)
	}
	now = now.Add(assign.CredentialsTTL + time.Second)
	again, err := s.AssignmentList(ctx, "eu")
	if err != nil || &again.Assignments[0] != &eu.Assignments[0] {
		t.Fatalf("a list that read no Secret was built again after the credentials TTL (%v)", err)
	}
	rotated, err := s.AssignmentList(ctx, "us")
	if err != nil || len(rotated.Assignments) != 1 || probeapi.HeaderText(rotated.Assignments[0].Config.HTTP.Headers)["Authorization"] != "two" {
		t.Fatalf("the rotated credential did not reach the list after the TTL: %+v, %v", rotated, err)
	}
}

// TestAssignmentListCarriesRegionBrowser: a region's browser settings reach
// its agents with the list (the default concurrency filled in), and a
// change of them is a new revision.
func TestAssignmentListCarriesRegionBrowser(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = monv1.AddToScheme(scheme)
	pr := &monv1.ProbeRegion{ObjectMeta: metav1.ObjectMeta{Name: "region-eu"}, Spec: monv1.ProbeRegionSpec{Code: "eu",
		Browser: &monv1.ProbeRegionBrowser{Endpoint: "ws://browser.probes:9222/devtools/browser/x"}}}
	other := &monv1.ProbeRegion{ObjectMeta: metav1.ObjectMeta{Name: "us"}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(pr, other).Build()
	s := New(Options{Client: c})
	ctx := context.Background()
	list, err := s.AssignmentList(ctx, "eu")
	if err != nil {
		t.Fatal(err)
	}
	if b := list.Browser; b == nil || b.Endpoint != pr.Spec.Browser.Endpoint || b.MaxConcurrent != monv1.DefaultBrowserConcurrency {
		t.Fatalf("browser settings %+v", list.Browser)
	}
	if us, err := s.AssignmentList(ctx, "us"); err != nil || us.Browser != nil {
		t.Fatalf("a region without settings got %+v (%v)", us.Browser, err)
	}
	pr.Spec.Browser.MaxConcurrent = 5
	if err := c.Update(ctx, pr); err != nil {
		t.Fatal(err)
	}
	s.AssignmentsChanged()
	again, err := s.AssignmentList(ctx, "eu")
	if err != nil || again.Browser.MaxConcurrent != 5 || again.Revision == list.Revision {
		t.Fatalf("after the change: %+v, revision changed %v (%v)", again.Browser, again.Revision != list.Revision, err)
	}
}
