package alerting

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/tools/record"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/alertevent"
	"github.com/uptime-operator/uptime-operator/internal/conditions"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/store/sqlite"
)

const testSecret = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// verifyDelivery applies the receiver rules of spec/webhooks.md to a request:
// raw body bytes, constant-time comparison with a length check first, and a
// timestamp within 5 minutes.
func verifyDelivery(r *http.Request, raw []byte, secret string, now time.Time) error {
	if r.Method != http.MethodPost {
		return fmt.Errorf("method %s", r.Method)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		return fmt.Errorf("content type %q", ct)
	}
	if ua := r.Header.Get("User-Agent"); ua != "Service-Webhooks/1.0" {
		return fmt.Errorf("user agent %q", ua)
	}
	if _, err := uuid.Parse(r.Header.Get("X-Service-Delivery")); err != nil {
		return fmt.Errorf("delivery id %q is not a UUID", r.Header.Get("X-Service-Delivery"))
	}
	var body struct{ Event string }
	if err := json.Unmarshal(raw, &body); err != nil || body.Event != r.Header.Get("X-Service-Event") {
		return fmt.Errorf("event header %q does not match body %q", r.Header.Get("X-Service-Event"), body.Event)
	}
	ts := r.Header.Get("X-Service-Timestamp")
	secs, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("timestamp %q", ts)
	}
	if d := now.Sub(time.Unix(secs, 0)); d > 5*time.Minute || d < -5*time.Minute {
		return fmt.Errorf("timestamp %s is %s away", ts, d)
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts + "." + string(raw)))
	want := []byte("sha256=" + hex.EncodeToString(mac.Sum(nil)))
	got := []byte(r.Header.Get("X-Service-Signature"))
	if len(got) != len(want) || subtle.ConstantTimeCompare(got, want) != 1 {
		return errors.New("signature mismatch")
	}
	return nil
}

// receiver is a webhook endpoint that verifies every request and answers
// with respond (200 when nil).
type receiver struct {
	*httptest.Server
	secret  string
	mu      sync.Mutex
	total   int
	hits    map[string]int
	reqs    []*recorded
	errs    []error
	respond func(n int, w http.ResponseWriter) // n counts from 1
}

type recorded struct {
	header http.Header
	body   []byte
	path   string
}

func newReceiver(t *testing.T, respond func(n int, w http.ResponseWriter)) *receiver {
	rc := &receiver{secret: testSecret, hits: map[string]int{}, respond: respond}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.total++
		n := rc.total
		rc.hits[r.Header.Get("X-Service-Delivery")]++
		rc.reqs = append(rc.reqs, &recorded{header: r.Header.Clone(), body: raw, path: r.URL.RequestURI()})
		if rc.secret != "" {
			if err := verifyDelivery(r, raw, rc.secret, time.Now()); err != nil {
				rc.errs = append(rc.errs, err)
			}
		}
		rc.mu.Unlock()
		if rc.respond != nil {
			rc.respond(n, w)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.total
}

func (rc *receiver) checkVerified(t *testing.T) {
	t.Helper()
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, err := range rc.errs {
		t.Errorf("receiver rejected a delivery: %v", err)
	}
}

type harness struct {
	t   *testing.T
	st  store.Store
	k8s client.Client
}

func newHarness(t *testing.T, objs ...client.Object) *harness {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "store.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return &harness{t: t, st: st, k8s: fakeClient(objs...)}
}

func (h *harness) worker(owner string) *Worker {
	return &Worker{
		Store: h.st, Client: h.k8s, Owner: owner, AllowPrivateTargets: true,
		PollInterval: 10 * time.Millisecond, AttemptTimeout: 2 * time.Second,
		Backoff: func(int) time.Duration { return 20 * time.Millisecond },
	}
}

func (h *harness) run(w *Worker) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = w.Run(ctx); close(done) }()
	return func() { cancel(); <-done }
}

// enqueue stores a down event for the channels and returns its delivery ids.
func (h *harness) enqueue(channels ...string) []string {
	h.t.Helper()
	p, _ := alertevent.NewIncidentPayload(alertevent.MonitorDown, alertevent.IncidentFacts{MonitorName: "API", IncidentID: uuid.NewString(), StartedAt: time.Now()})
	ev, err := newEvent("team", alertevent.MonitorDown, p, channels)
	if err != nil {
		h.t.Fatal(err)
	}
	if err := h.st.EnqueueEvents(context.Background(), ev); err != nil {
		h.t.Fatal(err)
	}
	ds, err := h.st.ListDeliveries(context.Background(), store.DeliveryQuery{EventID: ev.ID})
	if err != nil {
		h.t.Fatal(err)
	}
	var ids []string
	for _, d := range ds {
		ids = append(ids, d.ID)
	}
	return ids
}

// wait polls until every delivery is finished and returns them.
func (h *harness) wait(ids ...string) []store.Delivery {
	h.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		var out []store.Delivery
		for _, id := range ids {
			d, err := h.st.GetDelivery(context.Background(), id)
			if err != nil {
				h.t.Fatal(err)
			}
			if d.Status != store.DeliveryPending {
				out = append(out, d)
			}
		}
		if len(out) == len(ids) {
			return out
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("deliveries not finished: %d of %d", len(out), len(ids))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (h *harness) attempts(id string) []store.DeliveryAttempt {
	h.t.Helper()
	as, err := h.st.ListDeliveryAttempts(context.Background(), id)
	if err != nil {
		h.t.Fatal(err)
	}
	return as
}

func (h *harness) channel(name string) *monv1.AlertChannel {
	h.t.Helper()
	var ch monv1.AlertChannel
	if err := h.k8s.Get(context.Background(), client.ObjectKey{Namespace: "team", Name: name}, &ch); err != nil {
		h.t.Fatal(err)
	}
	return &ch
}

// webhookChannel is a webhook channel to url with a generated signing secret.
func webhookChannel(name, url string) (*monv1.AlertChannel, *corev1.Secret) {
	ch := channel(name, monv1.ChannelWebhook, nil)
	ch.Spec.WebhookURL = url
	ch.Status.SigningSecretName = monv1.SigningSecretName(name)
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: monv1.SigningSecretName(name), OwnerReferences: []metav1.OwnerReference{ownedBy(ch)}},
		Data:       map[string][]byte{monv1.SigningSecretKey: []byte(testSecret)},
	}
	return ch, s
}

// ownedBy is the controller reference of a Secret the channel ch owns.
func ownedBy(ch *monv1.AlertChannel) metav1.OwnerReference {
	yes := true
	return metav1.OwnerReference{APIVersion: monv1.GroupVersion.String(), Kind: "AlertChannel", Name: ch.Name, UID: ch.UID, Controller: &yes}
}

// eventually polls cond for up to 10 seconds.
func eventually(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in time")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestWebhookDeliveryIsSigned(t *testing.T) {
	rc := newReceiver(t, nil)
	ch, s := webhookChannel("hook", rc.URL+"/hook")
	h := newHarness(t, ch, s)
	ids := h.enqueue("uid-hook")
	defer h.run(h.worker("a"))()
	d := h.wait(ids...)[0]
	if d.Status != store.DeliveryDelivered {
		t.Fatalf("status %s, last error %q", d.Status, d.LastError)
	}
	rc.checkVerified(t)
	if rc.count() != 1 || rc.hits[d.ID] != 1 {
		t.Errorf("hits = %v", rc.hits)
	}
	var p map[string]any
	if err := json.Unmarshal(rc.reqs[0].body, &p); err != nil || p["event"] != "monitor.down" || rc.reqs[0].path != "/hook" {
		t.Errorf("unexpected request %s %s", rc.reqs[0].path, rc.reqs[0].body)
	}
	as := h.attempts(d.ID)
	if len(as) != 1 || as[0].StatusCode != 200 || as[0].Attempt != 1 {
		t.Errorf("attempts = %+v", as)
	}
	eventually(t, func() bool { return h.channel("hook").Status.LastDeliveryAt != nil })
	got := h.channel("hook").Status
	if got.LastDeliveryStatus != "200" || got.LastDeliveryAt == nil || got.ConsecutiveFailures != 0 ||
		conditions.IsTrue(got.Conditions, monv1.AlertChannelConditionFailing) {
		t.Errorf("channel status = %+v", got)
	}
}

func TestWebhookRetriesReuseDeliveryID(t *testing.T) {
	rc := newReceiver(t, func(n int, w http.ResponseWriter) {
		if n <= 2 {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, strings.Repeat("x", 1000))
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	ch, s := webhookChannel("hook", rc.URL)
	h := newHarness(t, ch, s)
	ids := h.enqueue("uid-hook")
	defer h.run(h.worker("a"))()
	d := h.wait(ids...)[0]
	if d.Status != store.DeliveryDelivered || d.Attempts != 3 {
		t.Fatalf("delivery = %+v", d)
	}
	rc.checkVerified(t)
	if rc.hits[d.ID] != 3 {
		t.Errorf("the delivery id must be reused by retries: %v", rc.hits)
	}
	as := h.attempts(d.ID)
	if len(as) != 3 || as[0].StatusCode != 503 || as[1].StatusCode != 503 || as[2].StatusCode != 204 {
		t.Fatalf("attempts = %+v", as)
	}
	if len(as[0].Excerpt) != 256 {
		t.Errorf("excerpt is %d bytes, want 256", len(as[0].Excerpt))
	}
}

func TestPermanentFailures(t *testing.T) {
	for _, status := range []int{301, 302, 307, 400, 404, 410, 422} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			target := newReceiver(t, nil)
			rc := newReceiver(t, func(_ int, w http.ResponseWriter) {
				if status < 400 {
					w.Header().Set("Location", target.URL+"/moved")
				}
				w.WriteHeader(status)
			})
			ch, s := webhookChannel("hook", rc.URL)
			h := newHarness(t, ch, s)
			ids := h.enqueue("uid-hook")
			defer h.run(h.worker("a"))()
			d := h.wait(ids...)[0]
			if d.Status != store.DeliveryFailed || d.Attempts != 1 {
				t.Errorf("delivery = %+v, want failed after 1 attempt", d)
			}
			if rc.count() != 1 {
				t.Errorf("receiver hits = %d, want 1", rc.count())
			}
			if target.count() != 0 {
				t.Errorf("redirect was followed")
			}
		})
	}
}

func TestAttemptCap(t *testing.T) {
	rc := newReceiver(t, func(_ int, w http.ResponseWriter) { w.WriteHeader(http.StatusInternalServerError) })
	ch, s := webhookChannel("hook", rc.URL)
	h := newHarness(t, ch, s)
	ids := h.enqueue("uid-hook")
	defer h.run(h.worker("a"))()
	d := h.wait(ids...)[0]
	if d.Status != store.DeliveryFailed || d.Attempts != 6 || rc.count() != 6 {
		t.Fatalf("delivery = %+v, hits %d; want failed after 6 attempts", d, rc.count())
	}
	eventually(t, func() bool { return h.channel("hook").Status.ConsecutiveFailures == 1 })
	if got := h.channel("hook").Status; got.ConsecutiveFailures != 1 || got.LastDeliveryStatus != "500" {
		t.Errorf("one failed delivery counts once: %+v", got)
	}
}

// TestRetryWindowOutlastsTheSchedule: with a retry window, a receiver that
// fails for longer than the six attempts of the schedule still gets the
// delivery, once, when it is back; the sixth failure counts towards Failing
// once, and the window's end fails the delivery for good.
func TestRetryWindowOutlastsTheSchedule(t *testing.T) {
	t.Run("back within the window", func(t *testing.T) {
		rc := newReceiver(t, func(n int, w http.ResponseWriter) {
			if n <= 9 {
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			w.WriteHeader(http.StatusOK)
		})
		ch, s := webhookChannel("hook", rc.URL)
		h := newHarness(t, ch, s)
		ids := h.enqueue("uid-hook")
		w := h.worker("a")
		w.RetryWindow = time.Minute
		defer h.run(w)()
		d := h.wait(ids...)[0]
		if d.Status != store.DeliveryDelivered || d.Attempts != 10 || rc.count() != 10 {
			t.Fatalf("delivery = %+v, hits %d; want delivered at the 10th attempt", d, rc.count())
		}
		rc.mu.Lock()
		hits := rc.hits[ids[0]]
		rc.mu.Unlock()
		if hits != 10 {
			t.Errorf("the delivery id was sent %d times, want 10 (one id across all attempts)", hits)
		}
		eventually(t, func() bool { return h.channel("hook").Status.LastDeliveryStatus == "200" })
		if got := h.channel("hook").Status; got.ConsecutiveFailures != 0 {
			t.Errorf("a success resets the failures: %+v", got)
		}
	})
	t.Run("window ends", func(t *testing.T) {
		rc := newReceiver(t, func(_ int, w http.ResponseWriter) { w.WriteHeader(http.StatusInternalServerError) })
		ch, s := webhookChannel("hook", rc.URL)
		h := newHarness(t, ch, s)
		ids := h.enqueue("uid-hook")
		w := h.worker("a")
		// Long enough for more than the schedule's attempts on a loaded
		// machine (each attempt is a round trip and a store write).
		w.RetryWindow = 1500 * time.Millisecond
		w.Backoff = func(int) time.Duration { return 20 * time.Millisecond }
		defer h.run(w)()
		d := h.wait(ids...)[0]
		if d.Status != store.DeliveryFailed || d.Attempts <= alertevent.MaxAttempts || rc.count() != d.Attempts {
			t.Fatalf("delivery = %+v, hits %d; want failed after more than %d attempts", d, rc.count(), alertevent.MaxAttempts)
		}
		if last := d.UpdatedAt.Sub(d.CreatedAt); last > w.RetryWindow+time.Second {
			t.Errorf("last attempt %s after the delivery was queued, window %s", last, w.RetryWindow)
		}
		eventually(t, func() bool { return h.channel("hook").Status.ConsecutiveFailures > 0 })
		time.Sleep(100 * time.Millisecond)
		if got := h.channel("hook").Status; got.ConsecutiveFailures != 1 {
			t.Errorf("one failed delivery counts once: %+v", got)
		}
	})
}

func TestTimeoutIsRetried(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	rc := newReceiver(t, func(n int, w http.ResponseWriter) {
		if n == 1 {
			<-release
		}
		w.WriteHeader(http.StatusOK)
	})
	ch, s := webhookChannel("hook", rc.URL)
	h := newHarness(t, ch, s)
	ids := h.enqueue("uid-hook")
	w := h.worker("a")
	w.AttemptTimeout = 200 * time.Millisecond
	defer h.run(w)()
	d := h.wait(ids...)[0]
	as := h.attempts(d.ID)
	if d.Status != store.DeliveryDelivered || len(as) != 2 || as[0].StatusCode != 0 || !strings.Contains(as[0].Error, "timeout") {
		t.Fatalf("delivery = %+v, attempts = %+v", d, as)
	}
}

func TestRetryAfter(t *testing.T) {
	for _, tt := range []struct {
		status     int
		retryAfter string
		want       time.Duration
	}{
		{429, "120", 120 * time.Second},
		{503, "7200", 15 * time.Minute},
		{429, "1", 5 * time.Second}, // shorter than the backoff: ignored
		{500, "120", 5 * time.Second},
	} {
		t.Run(fmt.Sprintf("%d-%s", tt.status, tt.retryAfter), func(t *testing.T) {
			rc := newReceiver(t, func(_ int, w http.ResponseWriter) {
				w.Header().Set("Retry-After", tt.retryAfter)
				w.WriteHeader(tt.status)
			})
			ch, s := webhookChannel("hook", rc.URL)
			h := newHarness(t, ch, s)
			ids := h.enqueue("uid-hook")
			w := h.worker("a")
			w.Backoff = alertevent.Backoff // the production schedule: 5 s after the first attempt
			before := time.Now()
			if _, err := w.ProcessDue(context.Background()); err != nil {
				t.Fatal(err)
			}
			d, _ := h.st.GetDelivery(context.Background(), ids[0])
			if d.Status != store.DeliveryPending || d.Attempts != 1 {
				t.Fatalf("delivery = %+v", d)
			}
			if got := d.NextAttemptAt.Sub(before); got < tt.want || got > tt.want+2*time.Second {
				t.Errorf("next attempt in %s, want %s", got, tt.want)
			}
		})
	}
}

func TestTwoWorkersNeverSendTwice(t *testing.T) {
	rc := newReceiver(t, func(_ int, w http.ResponseWriter) {
		time.Sleep(2 * time.Millisecond)
		w.WriteHeader(http.StatusOK)
	})
	var objs []client.Object
	var chans []string
	for i := range 4 {
		ch, s := webhookChannel(fmt.Sprintf("hook%d", i), rc.URL)
		objs = append(objs, ch, s)
		chans = append(chans, string(ch.UID))
	}
	h := newHarness(t, objs...)
	var ids []string
	for range 15 {
		ids = append(ids, h.enqueue(chans...)...)
	}
	a, b := h.worker("replica-a"), h.worker("replica-b")
	a.BatchSize, b.BatchSize = 5, 5
	stopA, stopB := h.run(a), h.run(b)
	ds := h.wait(ids...)
	stopA()
	stopB()
	rc.checkVerified(t)
	for _, d := range ds {
		if d.Status != store.DeliveryDelivered {
			t.Errorf("delivery %s: %s", d.ID, d.Status)
		}
		if n := rc.hits[d.ID]; n != 1 {
			t.Errorf("delivery %s sent %d times", d.ID, n)
		}
	}
	if rc.count() != len(ids) {
		t.Errorf("receiver hits = %d, want %d", rc.count(), len(ids))
	}
}

func TestDeliverySurvivesWorkerRestart(t *testing.T) {
	t.Run("lease of a dead worker expires", func(t *testing.T) {
		rc := newReceiver(t, nil)
		ch, s := webhookChannel("hook", rc.URL)
		h := newHarness(t, ch, s)
		ids := h.enqueue("uid-hook")
		leased, err := h.st.LeaseDeliveries(context.Background(), "crashed-replica", 10, 300*time.Millisecond)
		if err != nil || len(leased) != 1 {
			t.Fatalf("lease: %v %v", leased, err)
		}
		defer h.run(h.worker("new-replica"))()
		d := h.wait(ids...)[0]
		if d.Status != store.DeliveryDelivered || rc.hits[d.ID] != 1 {
			t.Errorf("delivery = %+v, hits %v", d, rc.hits)
		}
	})
	t.Run("stopped mid-attempt", func(t *testing.T) {
		entered := make(chan struct{}, 1)
		release := make(chan struct{})
		rc := newReceiver(t, func(n int, w http.ResponseWriter) {
			if n == 1 {
				entered <- struct{}{}
				<-release
			}
			w.WriteHeader(http.StatusOK)
		})
		defer close(release)
		ch, s := webhookChannel("hook", rc.URL)
		h := newHarness(t, ch, s)
		ids := h.enqueue("uid-hook")
		a := h.worker("a")
		a.AttemptTimeout, a.LeaseFor = 200*time.Millisecond, 500*time.Millisecond
		stopA := h.run(a)
		<-entered
		stopA() // the attempt under way runs to its timeout and is recorded
		if as := h.attempts(ids[0]); len(as) != 1 || !strings.Contains(as[0].Error, "timeout") {
			t.Fatalf("attempts after the stop: %+v, want the timed-out one", as)
		}
		defer h.run(h.worker("b"))()
		d := h.wait(ids...)[0]
		if d.Status != store.DeliveryDelivered || d.Attempts != 2 {
			t.Errorf("delivery = %+v", d)
		}
	})
}

func TestPrivateTargetsRefused(t *testing.T) {
	rc := newReceiver(t, nil)
	ch, s := webhookChannel("hook", rc.URL)
	h := newHarness(t, ch, s)
	ids := h.enqueue("uid-hook")
	w := h.worker("a")
	w.AllowPrivateTargets = false
	defer h.run(w)()
	d := h.wait(ids...)[0]
	if d.Status != store.DeliveryFailed || d.Attempts != 1 || !strings.Contains(d.LastError, "blocked") {
		t.Errorf("delivery = %+v, want a permanent blocked failure", d)
	}
	if rc.count() != 0 {
		t.Error("a private address was dialed")
	}
}

func TestMissingChannelOrSecret(t *testing.T) {
	rc := newReceiver(t, nil)
	ch, _ := webhookChannel("hook", rc.URL) // the Secret does not exist yet
	h := newHarness(t, ch)
	ids := h.enqueue("uid-hook", "uid-deleted")
	w := h.worker("a")
	if _, err := w.ProcessDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		d, _ := h.st.GetDelivery(context.Background(), id)
		switch d.ChannelID {
		case "uid-deleted":
			if d.Status != store.DeliveryFailed {
				t.Errorf("delivery to a deleted channel = %+v, want failed", d)
			}
		default:
			if d.Status != store.DeliveryPending || !strings.Contains(d.LastError, "not found") {
				t.Errorf("delivery without a secret = %+v, want retried", d)
			}
		}
	}
	if rc.count() != 0 {
		t.Error("an unsigned webhook was sent")
	}
}

func TestAutomationPlatformIsUnsigned(t *testing.T) {
	rc := newReceiver(t, nil)
	rc.secret = ""
	ch := channel("zap", monv1.ChannelZapier, nil)
	ch.Spec.WebhookURL = rc.URL
	h := newHarness(t, ch)
	ids := h.enqueue("uid-zap")
	defer h.run(h.worker("a"))()
	if d := h.wait(ids...)[0]; d.Status != store.DeliveryDelivered {
		t.Fatalf("delivery = %+v", d)
	}
	hdr := rc.reqs[0].header
	if hdr.Get("X-Service-Signature") != "" || hdr.Get("X-Service-Timestamp") != "" {
		t.Errorf("automation requests must be unsigned: %v", hdr)
	}
	var p alertevent.IncidentPayload
	if err := json.Unmarshal(rc.reqs[0].body, &p); err != nil || p.Event != alertevent.MonitorDown || p.Title != "API is DOWN" {
		t.Errorf("body = %s", rc.reqs[0].body)
	}
}

func TestSendTest(t *testing.T) {
	ok := newReceiver(t, nil)
	bad := newReceiver(t, func(_ int, w http.ResponseWriter) {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"error":"bad signature"}`+strings.Repeat(" ", 500))
	})
	chOK, s1 := webhookChannel("ok", ok.URL)
	chBad, s2 := webhookChannel("bad", bad.URL)
	h := newHarness(t, chOK, s1, chBad, s2)
	w := h.worker("a")
	res, err := w.SendTest(context.Background(), chOK)
	if err != nil || !res.Delivered || res.StatusCode != 200 || res.Message() != "Test alert delivered" {
		t.Fatalf("SendTest = %+v, %v", res, err)
	}
	ok.checkVerified(t)
	var p map[string]any
	_ = json.Unmarshal(ok.reqs[0].body, &p)
	if p["event"] != "test" || ok.reqs[0].header.Get("X-Service-Event") != "test" {
		t.Errorf("body = %v", p)
	}
	res, err = w.SendTest(context.Background(), chBad)
	if err != nil || res.Delivered || res.StatusCode != 401 || len(res.Excerpt) != 256 || !strings.HasPrefix(res.Excerpt, `{"error":"bad signature"}`) {
		t.Fatalf("SendTest = %+v, %v", res, err)
	}
	if !strings.HasPrefix(res.Message(), "The endpoint answered 401: ") {
		t.Errorf("message = %q", res.Message())
	}
	if st := h.channel("bad").Status; st.LastDeliveryAt != nil {
		t.Error("SendTest must not change delivery status")
	}
}

func TestApplyDelivery(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var st monv1.AlertChannelStatus
	steps := []struct {
		ok, final    bool
		wantFailures int32
		wantFailing  bool
		wantBecame   bool
	}{
		{false, false, 0, false, false}, // a retried attempt is not a failed delivery
		{false, true, 1, false, false},
		{false, true, 2, false, false},
		{false, true, 3, true, true},
		{false, true, 4, true, false},
		{true, true, 0, false, false},
		{false, true, 1, false, false},
	}
	for i, s := range steps {
		became := ApplyDelivery(&st, 1, now, s.ok, s.final, "500")
		if st.ConsecutiveFailures != s.wantFailures || conditions.IsTrue(st.Conditions, monv1.AlertChannelConditionFailing) != s.wantFailing || became != s.wantBecame {
			t.Errorf("step %d: failures %d failing %v became %v", i, st.ConsecutiveFailures,
				conditions.IsTrue(st.Conditions, monv1.AlertChannelConditionFailing), became)
		}
		if st.LastDeliveryAt == nil || st.LastDeliveryStatus != "500" {
			t.Errorf("step %d: last delivery not recorded", i)
		}
	}
}

func TestFailingMarkerAndOwnerEmail(t *testing.T) {
	failing := true
	var mu sync.Mutex
	rc := newReceiver(t, func(_ int, w http.ResponseWriter) {
		mu.Lock()
		defer mu.Unlock()
		if failing {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	mail := newReceiver(t, nil)
	mail.secret = ""
	ch, s := webhookChannel("hook", rc.URL)
	h := newHarness(t, ch, s)
	w := h.worker("a")
	w.OwnerEmail, w.Endpoints.Email = "owner@example.com", mail.URL
	events := record.NewFakeRecorder(10)
	w.Recorder = events
	stop := h.run(w)
	defer func() { stop() }()
	// The channel status is patched right after the store records the
	// attempt, so it is polled.
	for i := range 3 {
		h.wait(h.enqueue("uid-hook")...)
		eventually(t, func() bool { return h.channel("hook").Status.ConsecutiveFailures == int32(i+1) })
		got := h.channel("hook")
		if f := conditions.IsTrue(got.Status.Conditions, monv1.AlertChannelConditionFailing); f != (i == 2) {
			t.Fatalf("after %d failed deliveries Failing = %v", i+1, f)
		}
	}
	eventually(t, func() bool { return mail.count() == 1 })
	got := h.channel("hook")
	if got.Status.ConsecutiveFailures != 3 || got.Annotations[FailingNoticeAnnotation] == "" {
		t.Errorf("status %+v annotations %v", got.Status, got.Annotations)
	}
	var m EmailMessage
	_ = json.Unmarshal(mail.reqs[0].body, &m)
	if m.To[0] != "owner@example.com" || !strings.Contains(m.Subject, "is failing") {
		t.Errorf("email = %+v", m)
	}

	mu.Lock()
	failing = false
	mu.Unlock()
	h.wait(h.enqueue("uid-hook")...)
	eventually(t, func() bool { return h.channel("hook").Status.ConsecutiveFailures == 0 })
	got = h.channel("hook")
	if conditions.IsTrue(got.Status.Conditions, monv1.AlertChannelConditionFailing) || got.Status.ConsecutiveFailures != 0 {
		t.Errorf("a success must clear Failing: %+v", got.Status)
	}
	// Events on the channel: Warning when it became Failing, Normal when a
	// success cleared it.
	for _, want := range []string{"Warning DeliveriesFailing", "Normal DeliveriesSucceeding"} {
		select {
		case e := <-events.Events:
			if !strings.HasPrefix(e, want) {
				t.Errorf("event %q, want %q", e, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no %s event", want)
		}
	}

	// Failing again the same day: marked, but no second email.
	mu.Lock()
	failing = true
	mu.Unlock()
	for range 3 {
		h.wait(h.enqueue("uid-hook")...)
	}
	eventually(t, func() bool { return h.channel("hook").Status.ConsecutiveFailures == 3 })
	if got = h.channel("hook"); !conditions.IsTrue(got.Status.Conditions, monv1.AlertChannelConditionFailing) {
		t.Error("channel should be Failing again")
	}
	if mail.count() != 1 {
		t.Errorf("owner emails = %d, want at most one a day", mail.count())
	}
	if got.Spec.Disabled {
		t.Error("a failing channel must never be disabled")
	}
}

func TestShutdownFinishesTheAttemptUnderWayAndReleasesTheRest(t *testing.T) {
	arrived := make(chan struct{}, 10)
	release := make(chan struct{})
	var mu sync.Mutex
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits++
		mu.Unlock()
		arrived <- struct{}{}
		<-release
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	ch, s := webhookChannel("hook", srv.URL)
	h := newHarness(t, ch, s)
	var ids []string
	for range 3 {
		ids = append(ids, h.enqueue("uid-hook")...)
	}
	stop := h.run(h.worker("a"))
	<-arrived
	stopped := make(chan struct{})
	go func() { stop(); close(stopped) }()
	select {
	case <-stopped:
		t.Fatal("the worker stopped before the attempt under way finished")
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	<-stopped

	first, err := h.st.GetDelivery(context.Background(), ids[0])
	if err != nil {
		t.Fatal(err)
	}
	if first.Status != store.DeliveryDelivered || len(h.attempts(ids[0])) != 1 {
		t.Fatalf("the attempt under way: %s with %d attempts, want delivered and recorded", first.Status, len(h.attempts(ids[0])))
	}
	for _, id := range ids[1:] {
		d, err := h.st.GetDelivery(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if d.Status != store.DeliveryPending || d.Attempts != 0 || d.LeaseUntil != nil {
			t.Fatalf("an unsent delivery: %s, %d attempts, lease %v; want pending and released", d.Status, d.Attempts, d.LeaseUntil)
		}
	}
	taken, err := h.st.LeaseDeliveries(context.Background(), "b", 10, time.Minute)
	if err != nil || len(taken) != 2 {
		t.Fatalf("another worker leased %d (%v), want the 2 released at once", len(taken), err)
	}
	mu.Lock()
	defer mu.Unlock()
	if hits != 1 {
		t.Fatalf("receiver got %d requests, want 1", hits)
	}
}
