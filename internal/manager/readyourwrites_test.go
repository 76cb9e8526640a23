package manager_test

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/alertevent"
	"github.com/uptime-operator/uptime-operator/internal/alerting"
	"github.com/uptime-operator/uptime-operator/internal/apikeys"
	"github.com/uptime-operator/uptime-operator/internal/manager"
	"github.com/uptime-operator/uptime-operator/internal/plans"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/testenv"
	"github.com/uptime-operator/uptime-operator/internal/trust"
)

// rywIterations is how often each test writes and reads back at once. The
// informer usually lags a write by a few milliseconds, so before the
// overlay a few of 50 immediate reads saw the old object.
const rywIterations = 50

// ReplicaBound is the read-your-writes bound across replicas that
// docs/architecture.md ("Read-your-writes") states: another replica sees a
// write once its informer receives the watch event.
const ReplicaBound = 2 * time.Second

// rywWorkspace prepares namespace ns with a plan of every feature, a probe
// region and an automation key, and returns the key.
func rywWorkspace(t *testing.T, env *testenv.Env, ns string) string {
	t.Helper()
	ctx := context.Background()
	objs := []client.Object{
		&monv1.ProbeRegion{ObjectMeta: metav1.ObjectMeta{Name: ns + "-1"}},
		&monv1.Plan{ObjectMeta: metav1.ObjectMeta{Name: ns + "-all"},
			Spec: monv1.PlanSpec{Features: plans.AllFeatures(), Regions: []string{ns + "-1"}}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{monv1.PlanLabel: ns + "-all"}}},
	}
	for _, o := range objs {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	key, _, err := apikeys.Create(ctx, env.Client, ns, "ryw", apikeys.Automation)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for call(t, env.Manager.Handler(), "GET", "/automation/whoami", key, nil).Code != http.StatusOK {
		if time.Now().After(deadline) {
			t.Fatal("the API never accepted the new key")
		}
		time.Sleep(100 * time.Millisecond)
	}
	return key
}

var rywAddr atomic.Int64

// call sends one request to h, each from its own address so that per-IP
// limits stay out of the way.
func call(t *testing.T, h http.Handler, method, path, key string, body any) *httptest.ResponseRecorder {
	t.Helper()
	var rd *bytes.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	} else {
		rd = bytes.NewReader(nil)
	}
	req := httptest.NewRequest(method, path, rd)
	n := rywAddr.Add(1)
	req.RemoteAddr = fmt.Sprintf("198.18.%d.%d:40000", n/250%250, n%250+1)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func field(t *testing.T, rec *httptest.ResponseRecorder, name string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
		t.Fatalf("answer %d is not a JSON object: %s", rec.Code, rec.Body)
	}
	s, _ := m[name].(string)
	if s == "" {
		t.Fatalf("answer %d has no %s: %s", rec.Code, name, rec.Body)
	}
	return s
}

// TestReadYourWrites: once a write through the REST API answered 2xx, what
// the same manager does next follows it, with no pause between the write
// and the read (issue 29 rows 3 and 4).
func TestReadYourWrites(t *testing.T) {
	env := testenv.Use(t, env)
	key := rywWorkspace(t, env, "ryw")
	h := env.Manager.Handler()
	ctx := context.Background()

	// Row 3: an incident event of monitor B right after routing was set to
	// [A] goes nowhere near the connection, and the reverse.
	t.Run("webhook routing", func(t *testing.T) {
		receiver := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		defer receiver.Close()
		pool := x509.NewCertPool()
		pool.AddCert(receiver.Certificate())
		defer trust.Use(pool)()

		ids := map[string]string{}
		for _, name := range []string{"a", "b"} {
			rec := call(t, h, "POST", "/monitors", key, map[string]any{"name": "ryw-" + name, "url": "https://example.com/" + name})
			if rec.Code != http.StatusCreated {
				t.Fatalf("create monitor: %d %s", rec.Code, rec.Body)
			}
			ids[name] = field(t, rec, "id")
		}
		rec := call(t, h, "POST", "/integrations/webhook/connections", key, map[string]any{"webhook_url": receiver.URL + "/hook"})
		if rec.Code != http.StatusCreated {
			t.Fatalf("create connection: %d %s", rec.Code, rec.Body)
		}
		conn := field(t, rec, "connection_id")
		monitors := map[string]*monv1.Monitor{}
		var list monv1.MonitorList
		if err := env.Client.List(ctx, &list, client.InNamespace("ryw")); err != nil {
			t.Fatal(err)
		}
		for i := range list.Items {
			for name, id := range ids {
				if string(list.Items[i].UID) == id {
					monitors[name] = &list.Items[i]
				}
			}
		}
		// The engine's router, reading what the engine reads.
		router := &alerting.Router{Reader: env.Manager.GetClient()}
		var stale []string
		for i := range rywIterations {
			routed := []string{"a", "b"}[i%2]
			rec := call(t, h, "PUT", "/integrations/connections/"+conn+"/routing", key,
				map[string]any{"scope": "monitors", "monitor_ids": []string{ids[routed]}})
			if rec.Code != http.StatusOK {
				t.Fatalf("put routing: %d %s", rec.Code, rec.Body)
			}
			for _, name := range []string{"a", "b"} {
				ev, err := router.IncidentEvent(ctx, alertevent.MonitorDown, monitors[name], store.Incident{ID: "ryw"}, alerting.EventOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if got := slices.Contains(ev.Channels, conn); got != (name == routed) {
					var cached monv1.AlertChannelList
					_ = env.Manager.GetClient().List(ctx, &cached, client.InNamespace("ryw"))
					seen := ""
					for _, c := range cached.Items {
						seen += fmt.Sprintf(" %s@%s %+v", c.Name, c.ResourceVersion, c.Spec.Routing)
					}
					stale = append(stale, fmt.Sprintf("iteration %d: routing [%s], a down event of %s delivered=%v (PUT answered %s; the cache reads%s)",
						i, routed, name, got, rec.Body.String(), seen))
				}
			}
		}
		if len(stale) > 0 {
			t.Fatalf("%d of %d events followed an old routing, the first: %v", len(stale), 2*rywIterations, stale[:min(len(stale), 3)])
		}
	})

	// Row 4: a page hidden with PATCH is_public:false is 404 at once, and
	// published again is served at once.
	t.Run("status page visibility", func(t *testing.T) {
		slug := "ryw-page"
		rec := call(t, h, "POST", "/status/pages", key, map[string]any{"title": "RYW", "slug": slug, "is_public": true})
		if rec.Code != http.StatusCreated {
			t.Fatalf("create page: %d %s", rec.Code, rec.Body)
		}
		id := field(t, rec, "id")
		var stale []string
		for i := range rywIterations {
			public := i%2 == 1
			rec := call(t, h, "PATCH", "/status/pages/"+id, key, map[string]any{"is_public": public})
			if rec.Code != http.StatusOK {
				t.Fatalf("patch page: %d %s", rec.Code, rec.Body)
			}
			want := http.StatusNotFound
			if public {
				want = http.StatusOK
			}
			if got := call(t, h, "GET", "/status/"+slug, "", nil).Code; got != want {
				stale = append(stale, fmt.Sprintf("iteration %d: is_public=%v, GET /status/%s = %d", i, public, slug, got))
			}
		}
		if len(stale) > 0 {
			t.Fatalf("%d of %d reads saw an old page, the first: %v", len(stale), rywIterations, stale[:min(len(stale), 3)])
		}
	})

	// The monitor list is answered from kept answers (by the informer's
	// version, or by item); a rename shows in the next list and get.
	t.Run("monitor list", func(t *testing.T) {
		rec := call(t, h, "POST", "/monitors", key, map[string]any{"name": "ryw-list-0", "url": "https://example.com/list"})
		if rec.Code != http.StatusCreated {
			t.Fatalf("create monitor: %d %s", rec.Code, rec.Body)
		}
		mon := field(t, rec, "id")
		var stale []string
		for i := range rywIterations {
			name := fmt.Sprintf("ryw-list-%d", i+1)
			if rec := call(t, h, "PUT", "/monitors/"+mon, key, map[string]any{"name": name}); rec.Code != http.StatusOK {
				t.Fatalf("rename monitor: %d %s", rec.Code, rec.Body)
			}
			for _, path := range []string{"/monitors", "/monitors/" + mon} {
				rec := call(t, h, "GET", path, key, nil)
				if rec.Code != http.StatusOK || !bytes.Contains(rec.Body.Bytes(), []byte(`"`+name+`"`)) {
					stale = append(stale, fmt.Sprintf("iteration %d: GET %s = %d without %q", i, path, rec.Code, name))
				}
			}
		}
		if len(stale) > 0 {
			t.Fatalf("%d of %d reads showed an old name, the first: %v", len(stale), 2*rywIterations, stale[:min(len(stale), 3)])
		}
	})

	// The same pattern in the page's kept data: a monitor renamed through
	// the API shows on the page at the next request, not after the page
	// cache's 5 s.
	t.Run("status page content", func(t *testing.T) {
		rec := call(t, h, "POST", "/monitors", key, map[string]any{"name": "ryw-page-0", "url": "https://example.com/page"})
		if rec.Code != http.StatusCreated {
			t.Fatalf("create monitor: %d %s", rec.Code, rec.Body)
		}
		mon := field(t, rec, "id")
		slug := "ryw-content"
		rec = call(t, h, "POST", "/status/pages", key, map[string]any{"title": "RYW content", "slug": slug, "is_public": true})
		if rec.Code != http.StatusCreated {
			t.Fatalf("create page: %d %s", rec.Code, rec.Body)
		}
		page := field(t, rec, "id")
		rec = call(t, h, "PUT", "/status/pages/"+page+"/monitors", key, map[string]any{"monitors": []map[string]any{{"monitor_id": mon}}})
		if rec.Code != http.StatusOK {
			t.Fatalf("put page monitors: %d %s", rec.Code, rec.Body)
		}
		var stale []string
		for i := range rywIterations {
			name := fmt.Sprintf("ryw-page-%d", i+1)
			if rec := call(t, h, "PUT", "/monitors/"+mon, key, map[string]any{"name": name}); rec.Code != http.StatusOK {
				t.Fatalf("rename monitor: %d %s", rec.Code, rec.Body)
			}
			rec := call(t, h, "GET", "/status/"+slug, "", nil)
			if rec.Code != http.StatusOK || !bytes.Contains(rec.Body.Bytes(), []byte(`"`+name+`"`)) {
				stale = append(stale, fmt.Sprintf("iteration %d: GET /status/%s = %d without %q", i, slug, rec.Code, name))
			}
		}
		if len(stale) > 0 {
			t.Fatalf("%d of %d reads showed an old monitor name, the first: %v", len(stale), rywIterations, stale[:min(len(stale), 3)])
		}
	})
}

// TestReadYourWritesAcrossReplicas measures how long a second replica
// takes to follow a write the first one answered: the bound of
// docs/architecture.md ("Read-your-writes"), ReplicaBound.
func TestReadYourWritesAcrossReplicas(t *testing.T) {
	// The first replica is the package's manager; its subject, the second,
	// starts here.
	env := testenv.Use(t, env)
	key := rywWorkspace(t, env, "ryw-ha")

	replica := manager.Options{AllowPrivateTargets: true, Store: filepath.Join(t.TempDir(), "second.db"),
		WebhookHost: "127.0.0.1", WebhookCertDir: env.WebhookCertDir(), WebhookPort: freePort(t),
		HealthAddr: "0", MetricsAddr: "0", SkipNameValidation: true}
	second, err := manager.New(env.Config, replica)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- second.Start(runCtx) }()
	defer func() { stop(); <-done }()

	first, other := env.Manager.Handler(), second.Handler()
	slug := "ryw-ha-page"
	rec := call(t, first, "POST", "/status/pages", key, map[string]any{"title": "RYW HA", "slug": slug, "is_public": true})
	if rec.Code != http.StatusCreated {
		t.Fatalf("create page: %d %s", rec.Code, rec.Body)
	}
	id := field(t, rec, "id")
	// Wait until the second replica serves the page at all (its cache synced).
	deadline := time.Now().Add(60 * time.Second)
	for call(t, other, "GET", "/status/"+slug, "", nil).Code != http.StatusOK {
		if time.Now().After(deadline) {
			t.Fatal("the second replica never served the page")
		}
		time.Sleep(50 * time.Millisecond)
	}
	const n = 20
	lags := make([]time.Duration, 0, n)
	for i := range n {
		public := i%2 == 1
		if rec := call(t, first, "PATCH", "/status/pages/"+id, key, map[string]any{"is_public": public}); rec.Code != http.StatusOK {
			t.Fatalf("patch page: %d %s", rec.Code, rec.Body)
		}
		answered := time.Now()
		want := http.StatusNotFound
		if public {
			want = http.StatusOK
		}
		for call(t, other, "GET", "/status/"+slug, "", nil).Code != want {
			if time.Since(answered) > ReplicaBound {
				t.Fatalf("iteration %d: the second replica still served the old page %v after the write answered (bound %v)",
					i, time.Since(answered), ReplicaBound)
			}
			time.Sleep(time.Millisecond)
		}
		lags = append(lags, time.Since(answered))
	}
	sort.Slice(lags, func(i, j int) bool { return lags[i] < lags[j] })
	t.Logf("second replica followed %d writes: p50 %v, max %v (bound %v)", n, lags[n/2], lags[n-1], ReplicaBound)
}
