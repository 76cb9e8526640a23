package alerting

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/uptime-operator/uptime-operator/internal/alertevent"
	"github.com/uptime-operator/uptime-operator/internal/netguard"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/store/sqlite"
)

// Environment of the child process of TestKillNineWorkerDrains.
const (
	killChildEnv = "UPTIME_ALERTING_KILL_CHILD"
	killDBEnv    = "UPTIME_ALERTING_KILL_DB"
	killURLEnv   = "UPTIME_ALERTING_KILL_URL"
	killChannels = 4
)

// killChannelObjects are the webhook channels both processes know.
func killChannelObjects(url string) []client.Object {
	var objs []client.Object
	for i := range killChannels {
		ch, s := webhookChannel(fmt.Sprintf("hook%d", i), url)
		objs = append(objs, ch, s)
	}
	return objs
}

// TestKillNineChild is the worker process that TestKillNineWorkerDrains
// SIGKILLs mid-way; it does nothing unless started by that test.
func TestKillNineChild(t *testing.T) {
	if os.Getenv(killChildEnv) != "1" {
		t.Skip("runs only as the child of TestKillNineWorkerDrains")
	}
	st, err := sqlite.Open(context.Background(), os.Getenv(killDBEnv), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The child marks its requests, so the receiver can tell them from the
	// restarted worker's even when they arrive after the kill.
	tr := NewTransport(netguard.Guard{AllowPrivate: true})
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		r.Header.Set(killSenderHeader, "child")
		return tr.RoundTrip(r)
	})}
	w := &Worker{Store: st, Client: fakeClient(killChannelObjects(os.Getenv(killURLEnv))...), Owner: "child",
		HTTPClient: hc, PollInterval: 5 * time.Millisecond, BatchSize: 8,
		AttemptTimeout: 500 * time.Millisecond, LeaseFor: time.Second}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_ = w.Run(ctx) // until SIGKILL
}

// killSenderHeader marks the child's requests.
const killSenderHeader = "X-Test-Sender"

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// killReceiver acknowledges every delivery and counts, per delivery id, the
// requests of the killed child and of the restarted worker.
type killReceiver struct {
	*httptest.Server
	mu          sync.Mutex
	before      map[string]int
	after       map[string]int
	total       int
	verifyFails int
}

func TestKillNineWorkerDrains(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	rc := &killReceiver{before: map[string]int{}, after: map[string]int{}}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		time.Sleep(3 * time.Millisecond) // slow enough to be killed mid-way
		rc.mu.Lock()
		defer rc.mu.Unlock()
		if err := verifyDelivery(r, raw, testSecret, time.Now()); err != nil {
			rc.verifyFails++
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		id := r.Header.Get(alertevent.HeaderDelivery)
		if r.Header.Get(killSenderHeader) == "child" {
			rc.before[id]++
		} else {
			rc.after[id]++
		}
		rc.total++
		w.WriteHeader(http.StatusOK)
	}))
	defer rc.Close()
	received := func() int {
		rc.mu.Lock()
		defer rc.mu.Unlock()
		return rc.total
	}

	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "store.db")
	st, err := sqlite.Open(ctx, db, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, st: st, k8s: fakeClient(killChannelObjects(rc.URL)...)}
	var chans []string
	for i := range killChannels {
		chans = append(chans, fmt.Sprintf("uid-hook%d", i))
	}
	var ids []string
	for range 60 {
		ids = append(ids, h.enqueue(chans...)...)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	var out bytes.Buffer
	cmd := exec.Command(os.Args[0], "-test.run=^TestKillNineChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), killChildEnv+"=1", killDBEnv+"="+db, killURLEnv+"="+rc.URL)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for received() < len(ids)/4 {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("the child delivered %d in 30s:\n%s", received(), out.String())
		}
		time.Sleep(time.Millisecond)
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	_ = cmd.Wait()
	time.Sleep(50 * time.Millisecond) // requests the child had written are answered
	rc.mu.Lock()
	sentBefore := len(rc.before)
	rc.mu.Unlock()

	st, err = sqlite.Open(ctx, db, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	h.st = st
	recorded := map[string]bool{} // acknowledged and recorded before the kill
	pending := 0
	for _, id := range ids {
		d, err := st.GetDelivery(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if d.Status == store.DeliveryDelivered {
			recorded[id] = true
		} else {
			pending++
		}
	}
	if len(recorded) == 0 || pending == 0 {
		t.Fatalf("the kill did not land mid-way: %d recorded, %d pending", len(recorded), pending)
	}

	w := h.worker("restarted")
	w.BatchSize = 8
	stop := h.run(w)
	ds := h.wait(ids...)
	stop()

	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.verifyFails > 0 {
		t.Errorf("%d deliveries failed signature verification", rc.verifyFails)
	}
	resent := 0
	for _, d := range ds {
		if d.Status != store.DeliveryDelivered {
			t.Errorf("delivery %s is %s (%s)", d.ID, d.Status, d.LastError)
		}
		b, a := rc.before[d.ID], rc.after[d.ID]
		if b+a == 0 {
			t.Errorf("delivery %s never reached the receiver", d.ID)
		}
		if b > 1 || a > 1 {
			t.Errorf("delivery %s sent %d times before and %d after the kill", d.ID, b, a)
		}
		if a > 0 && recorded[d.ID] {
			t.Errorf("delivery %s was acknowledged and recorded before the kill, and sent again", d.ID)
		}
		if a > 0 && b > 0 {
			resent++
		}
	}
	// Only deliveries in flight when the process died (sent, maybe answered,
	// not yet recorded) go out twice; the receiver de-duplicates them on the
	// id.
	if resent > w.BatchSize {
		t.Errorf("%d deliveries were sent again, more than one batch in flight", resent)
	}
	t.Logf("%d deliveries; before the kill %d reached the receiver and %d were recorded; %d in flight were sent again",
		len(ids), sentBefore, len(recorded), resent)
}
