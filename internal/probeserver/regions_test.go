package probeserver

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	authv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/metrics"
	"github.com/uptime-operator/uptime-operator/internal/monitor"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

const testNS = "uptime-operator-system"

// refusals reads the refusal counter of one reason.
func refusals(reason string) float64 {
	var m dto.Metric
	_ = metrics.ProbeRefusals.WithLabelValues(reason).Write(&m)
	return m.GetCounter().GetValue()
}

// kubeCalls counts the API calls that authentication may cost.
type kubeCalls struct{ tokenReviews, secretReads atomic.Int32 }

// tokenOf is the region token of region code in regionsServer.
func tokenOf(code string) string { return "token-of-" + code + "-5f0c2d8e41b7a9360e1f4c7d2b8a" }

// regionsServer is a Server over a fake client holding remote regions
// partner and eu (each with its own token Secret), managed region us, and
// monitors web (eu and us) and other (us), in two workspaces.
func regionsServer(t *testing.T, calls *kubeCalls, ingested *[]probeapi.Result) *Server {
	t.Helper()
	return regionsServerAt(t, calls, ingested, nil)
}

// regionsServerAt is regionsServer with the clock now. kube-apiserver
// accepts the ServiceAccount tokens goodToken makes.
func regionsServerAt(t *testing.T, calls *kubeCalls, ingested *[]probeapi.Result, now func() time.Time) *Server {
	t.Helper()
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = monv1.AddToScheme(scheme)
	remote := func(code string) *monv1.ProbeRegion {
		return &monv1.ProbeRegion{ObjectMeta: metav1.ObjectMeta{Name: code}, Spec: monv1.ProbeRegionSpec{Placement: monv1.ProbePlacement{
			Mode: monv1.PlacementRemote, TokenSecretRef: &monv1.SecretKeySelector{Name: "token-" + code, Key: RegionTokenKey}}}}
	}
	secret := func(code string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "token-" + code, Namespace: testNS},
			Data: map[string][]byte{RegionTokenKey: []byte(tokenOf(code))}}
	}
	mon := func(ns, name string, regions ...string) *monv1.Monitor {
		return &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID("uid-" + name)},
			Spec: monv1.MonitorSpec{Type: monv1.MonitorHTTP, URL: "https://example.com/", IntervalSeconds: 60, Regions: regions}}
	}
	c := fake.NewClientBuilder().WithScheme(scheme).
		WithObjects(remote("partner"), remote("eu"), &monv1.ProbeRegion{ObjectMeta: metav1.ObjectMeta{Name: "us"}},
			secret("partner"), secret("eu"), mon("shop", "web", "eu", "us"), mon("bank", "other", "us")).
		WithIndex(&monv1.Monitor{}, monv1.UIDIndex, func(o client.Object) []string { return []string{string(o.GetUID())} }).
		Build()
	counted := interceptor.NewClient(c, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if tr, ok := obj.(*authv1.TokenReview); ok {
				calls.tokenReviews.Add(1)
				if strings.HasSuffix(tr.Spec.Token, goodSignature) {
					tr.Status = authv1.TokenReviewStatus{Authenticated: true, Audiences: tr.Spec.Audiences,
						User: authv1.UserInfo{Username: unverifiedSubject(tr.Spec.Token)}}
					return nil
				}
				// kube-apiserver's answer to a token it did not issue.
				tr.Status = authv1.TokenReviewStatus{Error: "invalid bearer token"}
				return nil
			}
			return c.Create(ctx, obj, opts...)
		},
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*corev1.Secret); ok {
				calls.secretReads.Add(1)
			}
			return c.Get(ctx, key, obj, opts...)
		},
	})
	return New(Options{Client: counted, Secrets: counted, ManagerNamespace: testNS, Now: now,
		Ingest: func(_ context.Context, rs []probeapi.Result) (probeapi.ResultsResponse, error) {
			*ingested = append(*ingested, rs...)
			return probeapi.ResultsResponse{Accepted: len(rs)}, nil
		}})
}

// TestForgedRegionsRefused: with only region partner's token, a batch
// naming other regions, or results that do, is refused whole (403) and
// counted; results of partner for monitors partner does not check, or with
// a made-up status, are left out and counted. Nothing reaches the engine,
// so no incident can open. On main the handler checked only the batch's
// region and stored all of it.
func TestForgedRegionsRefused(t *testing.T) {
	var calls kubeCalls
	var ingested []probeapi.Result
	s := regionsServer(t, &calls, &ingested)
	ts := httptest.NewServer(probeapi.NewHandler(s))
	defer ts.Close()
	c := &probeapi.Client{BaseURL: ts.URL, MaxRetries: -1, Token: func() (string, error) { return tokenOf("partner"), nil }}
	ctx := context.Background()
	down := func(id, monitorID, region string) probeapi.Result {
		return probeapi.Result{ID: id, MonitorID: monitorID, Region: region, Status: probeapi.StatusDown, CheckedAt: time.Now()}
	}
	mismatch := refusals(metrics.RefusedRegionMismatch)
	for _, batch := range []*probeapi.ResultBatch{
		{Region: "eu", Results: []probeapi.Result{down("1", "uid-web", "")}},
		{Region: "partner", Results: []probeapi.Result{down("2", "uid-web", "eu"), down("3", "uid-web", "us"), down("4", "uid-other", "us")}},
	} {
		_, err := c.PushResults(ctx, batch)
		var se *probeapi.StatusError
		if !errors.As(err, &se) || se.StatusCode != http.StatusForbidden {
			t.Fatalf("forged batch %+v: %v, want 403", batch, err)
		}
	}
	if got := refusals(metrics.RefusedRegionMismatch) - mismatch; got != 4 {
		t.Fatalf("region mismatches counted: %v, want 4", got)
	}
	if _, err := c.Assignments(ctx, "eu", "", time.Millisecond); err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("partner polling eu's assignments (and their credentials): %v, want 403", err)
	}

	unassigned := refusals(metrics.RefusedUnassigned)
	resp, err := c.PushResults(ctx, &probeapi.ResultBatch{Region: "partner", Results: []probeapi.Result{
		down("5", "uid-web", ""), down("6", "uid-other", "partner"), down("7", "uid-gone", ""),
		{ID: "8", MonitorID: "uid-web", Status: "pwned"},
	}})
	if err != nil || resp.Refused != 4 || resp.Accepted != 0 {
		t.Fatalf("partner's results for monitors it does not check: %+v, %v; want 4 refused", resp, err)
	}
	if got := refusals(metrics.RefusedUnassigned) - unassigned; got != 3 {
		t.Fatalf("unassigned results counted: %v, want 3", got)
	}
	if len(ingested) != 0 {
		t.Fatalf("forged results reached the engine: %+v", ingested)
	}

	// eu's own token: its result for web is stored, labelled eu.
	c.Token = func() (string, error) { return tokenOf("eu"), nil }
	resp, err = c.PushResults(ctx, &probeapi.ResultBatch{Region: "eu", Results: []probeapi.Result{down("9", "uid-web", "")}})
	if err != nil || resp.Accepted != 1 || len(ingested) != 1 || ingested[0].Region != "eu" {
		t.Fatalf("eu's own result: %+v, %v, ingested %+v", resp, err, ingested)
	}
}

// TestAdHocAnsweredByItsRegionOnly: a one-off check queued for eu is not
// answered by a result partner pushes with the request's id.
func TestAdHocAnsweredByItsRegionOnly(t *testing.T) {
	var calls kubeCalls
	var ingested []probeapi.Result
	s := regionsServer(t, &calls, &ingested)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan probeapi.Result, 1)
	go func() {
		res, _ := s.RunOnAgent(ctx, "eu", probeapi.Assignment{ID: "uid-web", Type: probeapi.TypeHTTP}, false)
		got <- res
	}()
	var id string
	for id == "" {
		list, err := s.AssignmentList(ctx, "eu")
		if err != nil {
			t.Fatal(err)
		}
		if len(list.AdHoc) > 0 {
			id = list.AdHoc[0].RequestID
		}
	}
	if _, err := s.IngestResults(ctx, "partner", &probeapi.ResultBatch{Results: []probeapi.Result{
		{ID: id, MonitorID: "uid-web", Status: probeapi.StatusUp}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.IngestResults(ctx, "eu", &probeapi.ResultBatch{Results: []probeapi.Result{
		{ID: id, MonitorID: "uid-web", Status: probeapi.StatusDown}}}); err != nil {
		t.Fatal(err)
	}
	if res := <-got; res.Region != "eu" || res.Status != probeapi.StatusDown {
		t.Fatalf("the one-off check was answered by %+v", res)
	}
	if len(ingested) != 0 {
		t.Fatalf("a test result was stored: %+v", ingested)
	}
}

// jwtLike is a token with the shape of a ServiceAccount token of user
// (not signed by anyone).
func jwtLike(user string, n int) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"RS256"}`)) + "." + enc([]byte(fmt.Sprintf(`{"sub":%q,"n":%d}`, user, n))) + ".c2ln"
}

// goodSignature ends the ServiceAccount tokens regionsServer's
// kube-apiserver accepts.
const goodSignature = ".Z29vZA"

// goodToken is a ServiceAccount token of user that regionsServer's
// kube-apiserver accepts.
func goodToken(user string, n int) string {
	t := jwtLike(user, n)
	return t[:strings.LastIndexByte(t, '.')] + goodSignature
}

// TestGuessesCostNoAPICalls: 50 made-up tokens from one address cost no
// TokenReview and no Secret read beyond the first read of each region's
// token Secret, and are answered 429 after the failure limit; tokens shaped
// like a region's ServiceAccount token cost at most one TokenReview each
// until the limit, and one repeated costs one. On main each of them cost a
// Secret read and a TokenReview.
func TestGuessesCostNoAPICalls(t *testing.T) {
	var calls kubeCalls
	var ingested []probeapi.Result
	s := regionsServer(t, &calls, &ingested)
	h := probeapi.NewHandler(s)
	ask := func(remote, token string) int {
		r := httptest.NewRequest(http.MethodGet, probeapi.PathAssignments+"?region=eu&wait=0s", nil)
		r.RemoteAddr, r.Header = remote, http.Header{"Authorization": {"Bearer " + token}}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	codes := map[int]int{}
	for i := range 50 {
		codes[ask("203.0.113.5:1000", fmt.Sprintf("guess-%d", i))]++
	}
	if codes[http.StatusUnauthorized] != probeapi.FailureLimit || codes[http.StatusTooManyRequests] != 50-probeapi.FailureLimit {
		t.Fatalf("answers: %v", codes)
	}
	if calls.tokenReviews.Load() != 0 || calls.secretReads.Load() != 2 {
		t.Fatalf("50 guesses cost %d TokenReviews and %d Secret reads; want 0 and 2 (one per region token Secret)",
			calls.tokenReviews.Load(), calls.secretReads.Load())
	}
	sa := serviceAccountUser(testNS, monitor.RegionServiceAccount("us"))
	codes = map[int]int{}
	for i := range 50 {
		codes[ask("203.0.113.6:1000", jwtLike(sa, i))]++
	}
	if calls.tokenReviews.Load() != probeapi.FailureLimit || codes[http.StatusTooManyRequests] != 50-probeapi.FailureLimit {
		t.Fatalf("50 forged ServiceAccount tokens: %d TokenReviews, answers %v; want %d and then 429",
			calls.tokenReviews.Load(), codes, probeapi.FailureLimit)
	}
	before := calls.tokenReviews.Load()
	for i := range 5 {
		ask(fmt.Sprintf("203.0.113.%d:1000", 10+i), jwtLike(sa, -1))
	}
	if n := calls.tokenReviews.Load() - before; n != 1 {
		t.Fatalf("one bad token from five addresses cost %d TokenReviews, want 1 (the refusal is cached)", n)
	}
	if calls.secretReads.Load() != 2 {
		t.Fatalf("Secret reads: %d, want 2", calls.secretReads.Load())
	}
	// A token of no managed region's ServiceAccount is not reviewed at all.
	ask("203.0.113.30:1000", jwtLike(serviceAccountUser(testNS, "uptime-operator-probe"), 0))
	ask("203.0.113.30:1000", jwtLike(serviceAccountUser(testNS, monitor.RegionServiceAccount("eu")), 0))
	if n := calls.tokenReviews.Load() - before; n != 1 {
		t.Fatalf("tokens of the old shared or of a remote region's ServiceAccount were reviewed (%d)", n-1)
	}
}

// TestSharedTokenSpeaksForNoRegion: a token two regions' Secrets hold
// would speak for both, so it speaks for neither.
func TestSharedTokenSpeaksForNoRegion(t *testing.T) {
	var calls kubeCalls
	var ingested []probeapi.Result
	s := regionsServer(t, &calls, &ingested)
	ctx := context.Background()
	if region, err := s.Authenticate(ctx, tokenOf("partner")); err != nil || region != "partner" {
		t.Fatalf("partner's own token: %q, %v", region, err)
	}
	if err := s.opts.Client.Create(ctx, &monv1.ProbeRegion{ObjectMeta: metav1.ObjectMeta{Name: "twin"}, Spec: monv1.ProbeRegionSpec{
		Placement: monv1.ProbePlacement{Mode: monv1.PlacementRemote,
			TokenSecretRef: &monv1.SecretKeySelector{Name: "token-partner", Key: RegionTokenKey}}}}); err != nil {
		t.Fatal(err)
	}
	// A token seen before is remembered for TokenTTL; a fresh server (or
	// the TTL) looks again.
	s = New(Options{Client: s.opts.Client, Secrets: s.opts.Secrets, ManagerNamespace: testNS})
	if region, err := s.Authenticate(ctx, tokenOf("partner")); !errors.Is(err, probeapi.ErrUnauthorized) {
		t.Fatalf("a token two regions hold: %q, %v; want refused", region, err)
	}
}

// TestBacklogAndReplayCounted: a delivered batch's replayed results are
// counted for its region, and the region's backlog gauge sums what each of
// its agents reported last; a refused batch counts nothing.
func TestBacklogAndReplayCounted(t *testing.T) {
	var calls kubeCalls
	var ingested []probeapi.Result
	s := regionsServer(t, &calls, &ingested)
	ctx := context.Background()
	value := func(c interface{ Write(*dto.Metric) error }) float64 {
		var m dto.Metric
		_ = c.Write(&m)
		return m.GetCounter().GetValue() + m.GetGauge().GetValue()
	}
	// What the engine shares with the other replicas: every accepted
	// push's report, none of a refused one.
	type report struct {
		agent             string
		backlog, replayed int
	}
	var reports []report
	s.opts.Report = func(region, agent string, _ time.Time, backlog, replayed int) {
		if region != "eu" {
			t.Errorf("a report for region %s", region)
		}
		reports = append(reports, report{agent, backlog, replayed})
	}
	replayedBefore := value(metrics.ProbeReplayed.WithLabelValues("eu"))
	push := func(region, agent string, replayed, backlog int) error {
		_, err := s.IngestResults(ctx, "eu", &probeapi.ResultBatch{Region: region, AgentID: agent, Replayed: replayed, Backlog: backlog,
			Results: []probeapi.Result{{ID: fmt.Sprint(agent, replayed, backlog), MonitorID: "uid-web", Status: probeapi.StatusUp}}})
		return err
	}
	if err := push("eu", "a1", 3, 40); err != nil {
		t.Fatal(err)
	}
	if err := push("eu", "a2", 0, 2); err != nil {
		t.Fatal(err)
	}
	// eu's token, a batch claiming partner's results.
	if err := push("partner", "a1", 0, 7); err == nil {
		t.Fatal("a batch naming another region was accepted")
	}
	if got := value(metrics.ProbeReplayed.WithLabelValues("eu")) - replayedBefore; got != 3 {
		t.Fatalf("replayed %v, want 3", got)
	}
	if got := value(metrics.ProbeBacklog.WithLabelValues("eu")); got != 42 {
		t.Fatalf("backlog %v, want 42 (40 + 2)", got)
	}
	if err := push("eu", "a1", 0, 0); err != nil {
		t.Fatal(err)
	}
	if got := value(metrics.ProbeBacklog.WithLabelValues("eu")); got != 2 {
		t.Fatalf("backlog %v after a1 drained, want 2", got)
	}
	if want := []report{{"a1", 40, 3}, {"a2", 2, 0}, {"a1", 0, 0}}; !slices.Equal(reports, want) {
		t.Fatalf("reports %+v, want %+v", reports, want)
	}
}
