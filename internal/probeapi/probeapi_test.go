package probeapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

func newTestClient(url string) *Client {
	return &Client{BaseURL: url, Token: func() (string, error) { return "secret", nil }, Backoff: time.Millisecond}
}

// TestContract runs the Client against NewHandler backed by MemoryServer:
// the one contract both sides of the probe API share.
func TestContract(t *testing.T) {
	mem := &MemoryServer{Region: "eu1", Token: "secret"}
	mem.SetAssignments("eu1", []Assignment{{ID: "m1", Type: TypeHTTP, URL: "http://x", IntervalSeconds: 30}})
	ts := httptest.NewServer(NewHandler(mem))
	defer ts.Close()
	c := newTestClient(ts.URL)
	ctx := context.Background()

	list, err := c.Assignments(ctx, "eu1", "", time.Second)
	if err != nil || list == nil || len(list.Assignments) != 1 || list.Revision != "1" {
		t.Fatalf("first poll: %+v, %v", list, err)
	}
	// Unchanged revision: 304 after the wait.
	start := time.Now()
	list2, err := c.Assignments(ctx, "eu1", list.Revision, 100*time.Millisecond)
	if err != nil || list2 != nil {
		t.Fatalf("unchanged poll: %+v, %v", list2, err)
	}
	if time.Since(start) < 90*time.Millisecond {
		t.Fatalf("long poll returned early")
	}
	// A change wakes a waiting poll.
	go func() {
		time.Sleep(50 * time.Millisecond)
		mem.SetAssignments("eu1", nil)
	}()
	list3, err := c.Assignments(ctx, "eu1", list.Revision, 5*time.Second)
	if err != nil || list3 == nil || list3.Revision != "2" {
		t.Fatalf("woken poll: %+v, %v", list3, err)
	}

	code := 200
	batch := &ResultBatch{Region: "eu1", AgentID: "a", Results: []Result{
		{ID: "r1", MonitorID: "m1", CheckedAt: time.Now().UTC(), Status: StatusUp, StatusCode: &code},
		{ID: "r2", MonitorID: "m1", Status: StatusDown},
	}}
	resp, err := c.PushResults(ctx, batch)
	if err != nil || resp.Accepted != 2 {
		t.Fatalf("push: %+v, %v", resp, err)
	}
	resp, err = c.PushResults(ctx, batch)
	if err != nil || resp.Accepted != 0 || resp.Duplicates != 2 {
		t.Fatalf("repush: %+v, %v", resp, err)
	}
	if got := mem.Results(); len(got) != 2 || got[0].Region != "eu1" || *got[0].StatusCode != 200 {
		t.Fatalf("stored: %+v", got)
	}
}

func TestAuthNotRetried(t *testing.T) {
	mem := &MemoryServer{Region: "eu1", Token: "other"}
	var calls atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		NewHandler(mem).ServeHTTP(w, r)
	}))
	defer ts.Close()
	_, err := newTestClient(ts.URL).Assignments(context.Background(), "eu1", "", time.Second)
	var se *StatusError
	if !errors.As(err, &se) || se.StatusCode != http.StatusUnauthorized {
		t.Fatalf("want 401, got %v", err)
	}
	if calls.Load() != 1 {
		t.Fatalf("4xx retried: %d calls", calls.Load())
	}
}

// TestRetryAfterLostAnswer stores a batch but fails the answer; the client
// retries and the server applies the batch once.
func TestRetryAfterLostAnswer(t *testing.T) {
	mem := &MemoryServer{Region: "eu1"}
	h := NewHandler(mem)
	var calls atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			h.ServeHTTP(httptest.NewRecorder(), r) // stored, answer lost
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	batch := &ResultBatch{Region: "eu1", Results: []Result{{ID: "r1", MonitorID: "m1", Status: StatusUp}}}
	resp, err := newTestClient(ts.URL).PushResults(context.Background(), batch)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Duplicates != 1 || len(mem.Results()) != 1 || calls.Load() != 2 {
		t.Fatalf("resp %+v results %d calls %d", resp, len(mem.Results()), calls.Load())
	}
}

func TestBadRequests(t *testing.T) {
	ts := httptest.NewServer(NewHandler(&MemoryServer{Region: "eu1"}))
	defer ts.Close()
	c := newTestClient(ts.URL)
	_, err := c.PushResults(context.Background(), &ResultBatch{Region: "eu1", Results: []Result{{ID: ""}}})
	var se *StatusError
	if !errors.As(err, &se) || se.StatusCode != 400 {
		t.Fatalf("want 400, got %v", err)
	}
	_, err = c.Assignments(context.Background(), "", "", time.Second)
	if !errors.As(err, &se) || se.StatusCode != 400 {
		t.Fatalf("want 400, got %v", err)
	}
}

func TestEffectiveTimeout(t *testing.T) {
	cases := []struct {
		a    Assignment
		want time.Duration
	}{
		{Assignment{Type: TypeHTTP}, 30 * time.Second},
		{Assignment{Type: TypePort}, 10 * time.Second},
		{Assignment{Type: TypePort, Config: monv1.MonitorSpec{Port: &monv1.PortConfig{TimeoutSeconds: 5}}}, 5 * time.Second},
		{Assignment{Type: TypeHTTP, Config: monv1.MonitorSpec{HTTP: &monv1.HTTPConfig{TimeoutMs: 5000}}}, 5 * time.Second},
		{Assignment{Type: TypeHTTP, TimeoutMs: 1500, Config: monv1.MonitorSpec{HTTP: &monv1.HTTPConfig{TimeoutMs: 5000}}}, 1500 * time.Millisecond},
		// The documented defaults, and dns counting seconds like the REST key.
		{Assignment{Type: TypeUDP}, 5 * time.Second},
		{Assignment{Type: TypeDNS}, 5 * time.Second},
		{Assignment{Type: TypeDNS, Config: monv1.MonitorSpec{DNS: &monv1.DNSConfig{TimeoutSeconds: 3}}}, 3 * time.Second},
		{Assignment{Type: TypeMultistep}, 60 * time.Second},
		{Assignment{Type: TypeMCP}, 30 * time.Second},
	}
	for _, c := range cases {
		if got := EffectiveTimeout(&c.a); got != c.want {
			t.Errorf("%+v: got %v want %v", c.a, got, c.want)
		}
	}
}

// TestConfigIsFlat: the assignment's config is the REST config object of
// its type, decoded into the type's CRD struct; keys this agent does not
// know (a newer manager's) are skipped.
func TestConfigIsFlat(t *testing.T) {
	in := `{"id":"m","type":"api","config":{"method":"post","headers":{"A":"b"},"timeout":5000,"future_key":1,
	"assertions":[{"source":"status_code","operator":"equals","target":200,"future":true}]}}`
	var a Assignment
	if err := json.Unmarshal([]byte(in), &a); err != nil {
		t.Fatal(err)
	}
	c := a.Config.HTTP
	if c == nil || c.Method != "POST" || HeaderText(c.Headers)["A"] != "b" || c.TimeoutMs != 5000 || c.Assertions[0].Target != "200" {
		t.Fatalf("decoded %+v", c)
	}
	out, _ := json.Marshal(a)
	var m struct{ Config map[string]any }
	_ = json.Unmarshal(out, &m)
	if m.Config["method"] != "POST" || m.Config["timeout"] != 5000.0 {
		t.Fatalf("encoded not flat: %s", out)
	}
}

func FuzzAssignmentDecode(f *testing.F) {
	f.Add([]byte(`{"id":"m","type":"http","url":"https://example.com","interval_seconds":60,"config":{"method":"GET","max_redirects":2}}`))
	f.Add([]byte(`{"config":{"assertions":[{"source":"json_body","property":"$.a[0]","operator":"equals","target":true}]}}`))
	f.Add([]byte(`{"config":{"tool_call":{"name":"x","arguments":{"a":1}},"steps":[{"extract":[{"variable":"v"}]}]}}`))
	f.Add([]byte(`{"config":{"assertions":[{"target":null},{"target":1e9}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var a Assignment
		if json.Unmarshal(data, &a) != nil {
			return
		}
		out, err := json.Marshal(&a)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		var b Assignment
		if err := json.Unmarshal(out, &b); err != nil {
			t.Fatalf("decode of own encoding %s: %v", out, err)
		}
		_ = EffectiveTimeout(&b)
	})
}

// agentSeen records the agent id of each long poll it answers.
type agentSeen struct {
	MemoryServer
	agents []string
}

func (s *agentSeen) Assignments(ctx context.Context, region, known string) (*AssignmentList, error) {
	s.agents = append(s.agents, AgentFrom(ctx))
	return s.MemoryServer.Assignments(ctx, region, known)
}

// TestLongPollNamesTheAgent: a long poll carries the agent id that result
// batches carry, so the manager counts one agent, not an anonymous poller
// beside a named pusher.
func TestLongPollNamesTheAgent(t *testing.T) {
	srv := &agentSeen{MemoryServer: MemoryServer{Region: "eu-1"}}
	ts := httptest.NewServer(NewHandler(srv))
	defer ts.Close()
	for _, id := range []string{"probe-7f9c", ""} {
		c := &Client{BaseURL: ts.URL, AgentID: id}
		if _, err := c.Assignments(context.Background(), "eu-1", "", time.Second); err != nil {
			t.Fatal(err)
		}
	}
	if len(srv.agents) != 2 || srv.agents[0] != "probe-7f9c" || srv.agents[1] != "" {
		t.Fatalf("agents seen by the server: %q, want [probe-7f9c \"\"]", srv.agents)
	}
}
