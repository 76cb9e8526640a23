package probeserver

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/monitor"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

// TestGoodTokensNotLockedOut: every client of this test reaches the probe
// API over real HTTP from 127.0.0.1, as every agent behind an Ingress
// without trusted proxies shares the proxy's address. A stranger's made-up
// tokens exhaust that address's failure limit; the remote region's token
// and the managed region's ServiceAccount token (verified before) are
// still answered 200, also after their cached answers expired and were
// checked again, while the stranger keeps getting 429 and costs no
// TokenReview. On 6d85b7e the agents got 429 too.
func TestGoodTokensNotLockedOut(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	var calls kubeCalls
	var ingested []probeapi.Result
	s := regionsServerAt(t, &calls, &ingested, clock)
	ts := httptest.NewServer(probeapi.NewHandler(s))
	defer ts.Close()
	ask := func(region, token string) int {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, ts.URL+probeapi.PathAssignments+"?wait=0s&region="+region, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	sa := goodToken(serviceAccountUser(testNS, monitor.RegionServiceAccount("us")), 1)
	if code := ask("us", sa); code != http.StatusOK {
		t.Fatalf("the managed region's agent before the flood: %d", code)
	}
	codes := map[int]int{}
	for i := range 3 * probeapi.FailureLimit {
		codes[ask("eu", fmt.Sprintf("guess-%d", i))]++
	}
	if codes[http.StatusTooManyRequests] != 2*probeapi.FailureLimit {
		t.Fatalf("the stranger's answers: %v, want %d× 429", codes, 2*probeapi.FailureLimit)
	}
	reviews := calls.tokenReviews.Load()
	for _, step := range []time.Duration{0, TokenTTL, RegionTokenTTL, time.Second} {
		advance(step)
		if code := ask("eu", tokenOf("eu")); code != http.StatusOK {
			t.Fatalf("+%v: the remote region's token from the flooded address: %d, want 200", step, code)
		}
		if code := ask("us", sa); code != http.StatusOK {
			t.Fatalf("+%v: the managed region's ServiceAccount token from the flooded address: %d, want 200", step, code)
		}
		if code := ask("eu", "guess-again"); code != http.StatusTooManyRequests {
			t.Fatalf("+%v: the stranger: %d, want 429", step, code)
		}
	}
	// The ServiceAccount token was checked again each time its answer was
	// older than TokenTTL, twice (deleting the ServiceAccount still locks
	// it out); the stranger cost none.
	if n := calls.tokenReviews.Load() - reviews; n != 2 {
		t.Fatalf("TokenReviews after the flood: %d, want 2 (the good token checked again after each TokenTTL)", n)
	}
}

// TestShortRegionTokenRefused: a region token Secret shorter than
// probeapi.MinRegionTokenLength speaks for no region, even presented
// exactly.
func TestShortRegionTokenRefused(t *testing.T) {
	var calls kubeCalls
	var ingested []probeapi.Result
	s := regionsServer(t, &calls, &ingested)
	ctx := context.Background()
	short := "0123456789abcdef0123456789abcde" // 31 characters
	if len(short) != probeapi.MinRegionTokenLength-1 {
		t.Fatal("short is not one under the minimum")
	}
	if err := s.opts.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "token-lab", Namespace: testNS},
		Data: map[string][]byte{RegionTokenKey: []byte(short)}}); err != nil {
		t.Fatal(err)
	}
	if err := s.opts.Client.Create(ctx, &monv1.ProbeRegion{ObjectMeta: metav1.ObjectMeta{Name: "lab"}, Spec: monv1.ProbeRegionSpec{
		Placement: monv1.ProbePlacement{Mode: monv1.PlacementRemote,
			TokenSecretRef: &monv1.SecretKeySelector{Name: "token-lab", Key: RegionTokenKey}}}}); err != nil {
		t.Fatal(err)
	}
	if region, err := s.Recognize(ctx, short); region != "" || err != nil {
		t.Fatalf("Recognize of a short region token: %q, %v", region, err)
	}
	if region, err := s.Authenticate(ctx, short); region != "" || err == nil {
		t.Fatalf("Authenticate of a short region token: %q, %v", region, err)
	}
	if region, err := s.Authenticate(ctx, tokenOf("eu")); region != "eu" || err != nil {
		t.Fatalf("a long one still works: %q, %v", region, err)
	}
}
