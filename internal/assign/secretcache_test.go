package assign

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

// countingReader counts the reads that reach the API server.
type countingReader struct {
	client.Client
	gets int
}

func (c *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.gets++
	return c.Client.Get(ctx, key, obj, opts...)
}

func TestSecretCacheResolvesAssignmentsCheaply(t *testing.T) {
	ctx := context.Background()
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "api-creds",
		Labels: map[string]string{monv1.CredentialsLabel: monv1.CredentialsLabelValue}},
		Data: map[string][]byte{"token": []byte("Bearer one")}}
	api := &countingReader{Client: fake.NewClientBuilder().WithObjects(sec).Build()}
	now := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	cache := NewSecretCache(api, CredentialsTTL, func() time.Time { return now })

	m := &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "api", UID: "u1"}}
	m.Spec.Type, m.Spec.URL = monv1.MonitorHTTP, "https://api.example.com/"
	m.Spec.HTTP = &monv1.HTTPConfig{Headers: []monv1.HTTPHeader{
		{Name: "Authorization", ValueFrom: &monv1.SecretKeySelector{Name: "api-creds", Key: "token"}},
		{Name: "X-Plain", Value: ptr.To("v")},
	}}
	for range 3 {
		a, err := ToAssignment(ctx, cache, m)
		if err != nil {
			t.Fatal(err)
		}
		if probeapi.HeaderText(a.Config.HTTP.Headers)["Authorization"] != "Bearer one" || probeapi.HeaderText(a.Config.HTTP.Headers)["X-Plain"] != "v" {
			t.Fatalf("headers: %v", probeapi.HeaderText(a.Config.HTTP.Headers))
		}
	}
	if api.gets != 1 {
		t.Fatalf("three assignments read the Secret %d times, want once", api.gets)
	}

	// A rotated value is seen once the TTL has passed.
	sec.Data["token"] = []byte("Bearer two")
	if err := api.Update(ctx, sec); err != nil {
		t.Fatal(err)
	}
	now = now.Add(CredentialsTTL)
	a, err := ToAssignment(ctx, cache, m)
	if err != nil || probeapi.HeaderText(a.Config.HTTP.Headers)["Authorization"] != "Bearer two" {
		t.Fatalf("after the TTL: %v %v", probeapi.HeaderText(a.Config.HTTP.Headers), err)
	}

	// A missing Secret is not remembered.
	m.Spec.HTTP.Headers[0].ValueFrom.Name = "later"
	if _, err := ToAssignment(ctx, cache, m); err == nil {
		t.Fatal("a missing Secret resolved")
	}
	if err := api.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "later", Labels: sec.Labels},
		Data: map[string][]byte{"token": []byte("Bearer late")}}); err != nil {
		t.Fatal(err)
	}
	if a, err := ToAssignment(ctx, cache, m); err != nil || probeapi.HeaderText(a.Config.HTTP.Headers)["Authorization"] != "Bearer late" {
		t.Fatalf("a Secret created later: %v %v", probeapi.HeaderText(a.Config.HTTP.Headers), err)
	}
}
