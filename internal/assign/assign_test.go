package assign_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/assign"
	"github.com/uptime-operator/uptime-operator/internal/credentials"
	"github.com/uptime-operator/uptime-operator/internal/monitor"
	"github.com/uptime-operator/uptime-operator/internal/plans"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

// TestForRegionBeforeStatus: a Monitor that names no regions is assigned
// to its plan's default regions while its status is still empty (the
// Monitor controller's writes are paced and nothing waits for them), and to
// the regions its status names once written.
func TestForRegionBeforeStatus(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = monv1.AddToScheme(scheme)
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team", Labels: map[string]string{monv1.PlanLabel: "pro"}}},
		&monv1.Plan{ObjectMeta: metav1.ObjectMeta{Name: "pro"}, Spec: monv1.PlanSpec{DefaultRegions: []string{"eu"}}},
		&monv1.ProbeRegion{ObjectMeta: metav1.ObjectMeta{Name: "eu"}},
		&monv1.ProbeRegion{ObjectMeta: metav1.ObjectMeta{Name: "us"}},
	).Build()
	fresh := monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Name: "new", Namespace: "team", UID: "a"},
		Spec: monv1.MonitorSpec{Type: monv1.MonitorHTTP, URL: "https://example.com/", IntervalSeconds: 60}}
	written := *fresh.DeepCopy()
	written.Name, written.UID = "written", "b"
	written.Status.EffectiveRegions = []string{"us"}
	monitors := []monv1.Monitor{fresh, written}
	ctx := context.Background()
	ids := func(as []probeapi.Assignment) []string {
		var out []string
		for _, a := range as {
			out = append(out, a.ID+"@"+a.Regions[0])
		}
		return out
	}
	resolver := &monitor.RegionResolver{Reader: c, Plans: &plans.Resolver{Reader: c}}
	if got := ids(assign.ForRegion(ctx, nil, monitors, "eu", resolver, nil)); !slices.Equal(got, []string{"a@eu"}) {
		t.Errorf("eu assigned %v, want the monitor without status, from its plan's default", got)
	}
	if got := ids(assign.ForRegion(ctx, nil, monitors, "us", resolver, nil)); !slices.Equal(got, []string{"b@us"}) {
		t.Errorf("us assigned %v, want the monitor whose status names us", got)
	}
}

// TestToAssignmentRefusesSecretsNotAllowed: the resolver reads only the
// Secrets a Monitor may read (credentials.Referable), whatever admission
// let through: a Secret that does not opt in, and an operator-made one
// even when labelled, are refused with a *credentials.NotAllowedError and
// their value is not in the assignment.
func TestToAssignmentRefusesSecretsNotAllowed(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	optIn := map[string]string{monv1.CredentialsLabel: monv1.CredentialsLabelValue}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "app-db"}, Data: map[string][]byte{"password": []byte("db-password-1")}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "stripe-signing", Labels: optIn,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: monv1.GroupVersion.String(), Kind: "AlertChannel", Name: "stripe", UID: "c"}}},
			Data: map[string][]byte{"signing-secret": []byte("whsec_1")}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "api-token", Labels: optIn}, Data: map[string][]byte{"token": []byte("tok-1")}},
	).Build()
	mon := func(secret, key string) *monv1.Monitor {
		return &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: "team", UID: "m"},
			Spec: monv1.MonitorSpec{Type: monv1.MonitorHTTP, URL: "https://example.com/", HTTP: &monv1.HTTPConfig{
				Headers: []monv1.HTTPHeader{{Name: "Authorization", ValueFrom: &monv1.SecretKeySelector{Name: secret, Key: key}}}}}}
	}
	ctx := context.Background()
	for _, secret := range [][2]string{{"app-db", "password"}, {"stripe-signing", "signing-secret"}} {
		a, err := assign.ToAssignment(ctx, c, mon(secret[0], secret[1]))
		var na *credentials.NotAllowedError
		if !errors.As(err, &na) || na.Secret != secret[0] {
			t.Errorf("%s: err = %v, want a NotAllowedError", secret[0], err)
		}
		if v := probeapi.HeaderText(a.Config.HTTP.Headers)["Authorization"]; v != "" {
			t.Errorf("%s: the assignment carries %q", secret[0], v)
		}
	}
	a, err := assign.ToAssignment(ctx, c, mon("api-token", "token"))
	if err != nil || probeapi.HeaderText(a.Config.HTTP.Headers)["Authorization"] != "tok-1" {
		t.Fatalf("a Secret that opts in: %v, %+v", err, a.Config.HTTP.Headers)
	}
}
