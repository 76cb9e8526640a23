package alerting

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/alertevent"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// githubServer is a local code-hosting API: it opens numbered issues and
// records comments and state changes.
type githubServer struct {
	*httptest.Server
	mu     sync.Mutex
	next   int
	calls  []string // "METHOD path"
	bodies []map[string]any
	state  map[int]string
}

func newGitHubServer(t *testing.T) *githubServer {
	gs := &githubServer{next: 41, state: map[int]string{}}
	gs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		gs.mu.Lock()
		defer gs.mu.Unlock()
		gs.calls = append(gs.calls, r.Method+" "+r.URL.Path)
		gs.bodies = append(gs.bodies, body)
		if r.Header.Get("Authorization") != "Bearer ghp_test" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/repos/acme/ops/issues":
			gs.next++
			gs.state[gs.next] = "open"
			w.WriteHeader(http.StatusCreated)
			// A realistic response: long, html_url well past the first 256 bytes.
			_, _ = fmt.Fprintf(w, `{"url": "https://api.github.example/repos/acme/ops/issues/%d", "repository_url": "%s",
 "labels_url": "%s", "number": %d, "title": %q, "html_url": "https://github.example/acme/ops/issues/%d", "state": "open"}`,
				gs.next, strings.Repeat("r", 300), strings.Repeat("l", 300), gs.next, body["title"], gs.next)
		case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/comments"):
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write([]byte(`{"id": 1}`))
		case r.Method == http.MethodPatch:
			var n int
			_, _ = fmt.Sscanf(r.URL.Path, "/repos/acme/ops/issues/%d", &n)
			gs.state[n], _ = body["state"].(string)
			_, _ = w.Write([]byte(`{}`))
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	t.Cleanup(gs.Close)
	return gs
}

func (gs *githubServer) log() []string {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	return append([]string(nil), gs.calls...)
}

func TestCodeHostIssueLifecycle(t *testing.T) {
	gs := newGitHubServer(t)
	tokenSecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "gh", Labels: map[string]string{monv1.CredentialsLabel: monv1.CredentialsLabelValue}},
		Data: map[string][]byte{"token": []byte("ghp_test")}}
	gh := channel("gh", monv1.ChannelGitHub, nil)
	gh.Spec.Repository = "acme/ops"
	gh.Spec.TokenFrom = &monv1.SecretKeySelector{Name: "gh", Key: "token"}
	m := monitor("api", "")
	h := newHarness(t, gh, tokenSecret, m)
	w := h.worker("a")
	w.Endpoints.GitHub = gs.URL
	ctx := context.Background()
	r := &Router{Reader: h.k8s}

	inc, err := h.st.OpenIncident(ctx, store.Incident{ID: "inc-gh", Namespace: "team", MonitorID: string(m.UID), MonitorName: "api",
		StartedAt: time.Now().Add(-time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	process := func(ev store.OutboxEvent) {
		t.Helper()
		if err := h.st.EnqueueEvents(ctx, ev); err != nil {
			t.Fatal(err)
		}
		if _, err := w.ProcessDue(ctx); err != nil {
			t.Fatal(err)
		}
		ds, _ := h.st.ListDeliveries(ctx, store.DeliveryQuery{EventID: ev.ID})
		for _, d := range ds {
			if d.Status != store.DeliveryDelivered {
				t.Fatalf("delivery = %+v", d)
			}
		}
	}

	down, err := r.IncidentEvent(ctx, alertevent.MonitorDown, m, inc, EventOptions{Reason: "timeout"})
	if err != nil || len(down.Channels) != 1 {
		t.Fatalf("down event %+v: %v", down, err)
	}
	process(down)
	got, _ := h.st.GetIncident(ctx, inc.ID)
	if got.IssueURL != "https://github.example/acme/ops/issues/42" {
		t.Fatalf("issue URL = %q", got.IssueURL)
	}
	issue, err := findIssue(ctx, h.st, inc.ID, "uid-gh")
	if err != nil || issue == nil || issue.Number != 42 || issue.Repository != "acme/ops" {
		t.Fatalf("recorded issue = %+v, %v", issue, err)
	}

	// An escalation step comments on the issue instead of opening another.
	esc, _ := r.EscalationEvent(ctx, m, inc, 1, refs("gh"))
	process(esc)
	if l := gs.log(); l[len(l)-1] != "POST /repos/acme/ops/issues/42/comments" {
		t.Fatalf("calls = %v", l)
	}
	if b := gs.bodies[len(gs.bodies)-1]; !strings.Contains(b["body"].(string), "Escalation step 1: still down") {
		t.Errorf("escalation comment = %v", b)
	}

	resolved := inc
	now := time.Now()
	resolved.ResolvedAt = &now
	up, _ := r.IncidentEvent(ctx, alertevent.MonitorUp, m, resolved, EventOptions{})
	process(up)
	l := gs.log()
	want := []string{"POST /repos/acme/ops/issues", "POST /repos/acme/ops/issues/42/comments",
		"POST /repos/acme/ops/issues/42/comments", "PATCH /repos/acme/ops/issues/42"}
	if strings.Join(l, "\n") != strings.Join(want, "\n") {
		t.Errorf("calls:\n%s\nwant:\n%s", strings.Join(l, "\n"), strings.Join(want, "\n"))
	}
	if gs.state[42] != "closed" {
		t.Errorf("issue state = %q", gs.state[42])
	}
	if b := gs.bodies[2]; !strings.Contains(b["body"].(string), "api has RECOVERED") {
		t.Errorf("resolve comment = %v", b)
	}

	// An incident without an issue (opened before the channel existed) has
	// nothing to close.
	other, _ := h.st.OpenIncident(ctx, store.Incident{ID: "inc-none", Namespace: "team", MonitorID: "m-other", StartedAt: now})
	other.ResolvedAt = &now
	up2, _ := r.IncidentEvent(ctx, alertevent.IncidentResolved, m, other, EventOptions{})
	process(up2)
	if len(gs.log()) != len(want) {
		t.Errorf("a resolve without an issue must not call the code host: %v", gs.log())
	}
}
