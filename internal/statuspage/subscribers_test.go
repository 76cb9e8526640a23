package statuspage_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/alerting"
	"github.com/uptime-operator/uptime-operator/internal/statuspage"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/store/sqlite"
)

// testKey is the notifiers' key: shared, like the manager's Secret, so a
// notifier started later derives the same links.
var testKey = []byte("0123456789abcdef0123456789abcdef")

// newNotifier is a Notifier on st that sends through hook's client
// (httptest servers share one certificate).
func newNotifier(st store.Store, mails statuspage.Mailer, hook *receiver) *statuspage.Notifier {
	return &statuspage.Notifier{
		Reader: cached, Store: st, Mailer: mails, Client: hook.srv.Client(), Sign: alerting.Sign,
		BaseURL: baseURL, Key: testKey,
	}
}

// runWorker runs an alerting worker over st's outbox that delivers
// notifier's deliveries, as the manager does, until ctx ends.
func runWorker(ctx context.Context, st store.Store, notifier *statuspage.Notifier, backoff func(int) time.Duration) *alerting.Worker {
	w := &alerting.Worker{Store: st, Targets: map[string]alerting.Target{statuspage.OutboxPrefix: notifier},
		PollInterval: 20 * time.Millisecond, Backoff: backoff}
	notifier.Kick = w.Kick
	go func() { _ = w.Run(ctx) }()
	return w
}

// mailbox is a Mailer that keeps what it is asked to send.
type mailbox struct {
	mu   sync.Mutex
	sent []sentMail
}

type sentMail struct{ to, subject, text string }

func (m *mailbox) SendMail(_ context.Context, to, subject, text string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sent = append(m.sent, sentMail{to, subject, text})
	return nil
}

func (m *mailbox) all() []sentMail {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]sentMail(nil), m.sent...)
}

// receiver is a loopback TLS endpoint that records the POSTs it gets; it
// fails the first failFirst of them with 503.
type receiver struct {
	srv       *httptest.Server
	mu        sync.Mutex
	got       []receivedPost
	failFirst int
	// failWith are the statuses of the failing answers in turn (503 when
	// empty or used up).
	failWith []int
	// retryAfter is the Retry-After header of the failing answers.
	retryAfter string
	// tried is when each request arrived, failed ones included.
	tried []time.Time
}

type receivedPost struct {
	header http.Header
	body   []byte
}

func newReceiver(failFirst int) *receiver {
	rc := &receiver{failFirst: failFirst}
	rc.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		defer rc.mu.Unlock()
		rc.tried = append(rc.tried, time.Now())
		if rc.failFirst > 0 {
			rc.failFirst--
			if rc.retryAfter != "" {
				w.Header().Set("Retry-After", rc.retryAfter)
			}
			code := http.StatusServiceUnavailable
			if len(rc.failWith) > 0 {
				code, rc.failWith = rc.failWith[0], rc.failWith[1:]
			}
			w.WriteHeader(code)
			return
		}
		rc.got = append(rc.got, receivedPost{r.Header.Clone(), body})
	}))
	return rc
}

func (rc *receiver) attempts() []time.Time {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]time.Time(nil), rc.tried...)
}

func (rc *receiver) posts() []receivedPost {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]receivedPost(nil), rc.got...)
}

var tokenLink = regexp.MustCompile(`https://status\.example\.com/s/([a-z0-9-]+)/(confirm|unsubscribe)\?token=([A-Za-z0-9_.-]+)`)

var _ = Describe("Subscribers", Ordered, func() {
	const subNS = "subs"
	var (
		pub      *statuspage.Public
		notifier *statuspage.Notifier
		mails    *mailbox
		hook     *receiver
		chat     *receiver
		api      *monv1.Monitor
		page     monv1.StatusPage
		stop     context.CancelFunc
		subDB    store.Store
	)

	post := func(path string, body string, contentType string) *httptest.ResponseRecorder {
		r := request(http.MethodPost, path)
		r.Body = io.NopCloser(strings.NewReader(body))
		r.Header.Set("Content-Type", contentType)
		w := httptest.NewRecorder()
		pub.ServeSubscribe(w, r, "subs-page")
		return w
	}
	follow := func(link string) *httptest.ResponseRecorder {
		m := tokenLink.FindStringSubmatch(link)
		ExpectWithOffset(1, m).NotTo(BeNil(), "no link in %q", link)
		r := request(http.MethodGet, "/s/"+m[1]+"/"+m[2]+"?token="+m[3])
		w := httptest.NewRecorder()
		if m[2] == "confirm" {
			// The link's page only shows a button; its POST confirms.
			pub.ServeConfirm(w, r, m[1])
			ExpectWithOffset(1, w.Code).To(Equal(http.StatusOK))
			ExpectWithOffset(1, w.Body.String()).To(ContainSubstring(`<form method="post">`))
			w = httptest.NewRecorder()
			pub.ServeConfirm(w, request(http.MethodPost, "/s/"+m[1]+"/confirm?token="+m[3]), m[1])
		} else {
			pub.ServeUnsubscribe(w, r, m[1])
		}
		return w
	}

	BeforeAll(func() {
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: subNS}})).To(Succeed())
		api = &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Namespace: subNS, Name: "api"}}
		api.Spec.Name = "API"
		api.Spec.URL = "https://secret-internal.example.com/admin"
		Expect(k8s.Create(ctx, api)).To(Succeed())
		page = monv1.StatusPage{
			ObjectMeta: metav1.ObjectMeta{Namespace: subNS, Name: "subs-page"},
			Spec: monv1.StatusPageSpec{Title: "Subs", IsPublic: true,
				Monitors: []monv1.StatusPageMonitor{{MonitorRef: monv1.LocalObjectReference{Name: "api"}, DisplayName: "Public API"}}},
		}
		Expect(k8s.Create(ctx, &page)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(cached.Get(ctx, client.ObjectKeyFromObject(&page), &page)).To(Succeed())
			g.Expect(cached.Get(ctx, client.ObjectKeyFromObject(api), api)).To(Succeed())
		}).Should(Succeed())

		mails = &mailbox{}
		hook, chat = newReceiver(1), newReceiver(0)
		DeferCleanup(hook.srv.Close)
		DeferCleanup(chat.srv.Close)
		// The notifier's outbox is a store of its own, so the suite's
		// manager (whose worker delivers its own store's outbox) does not
		// take these deliveries.
		var err error
		subDB, err = sqlite.Open(ctx, filepath.Join(GinkgoT().TempDir(), "subscribers.db"), sqlite.Options{})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(subDB.Close)
		notifier = newNotifier(subDB, mails, hook)
		pub = &statuspage.Public{Reader: cached, Secrets: k8s, Store: db, BaseURL: baseURL, Notifier: notifier}
		var nctx context.Context
		nctx, stop = context.WithCancel(ctx)
		runWorker(nctx, subDB, notifier, func(int) time.Duration { return 50 * time.Millisecond })
		DeferCleanup(func() { stop() })
	})

	It("refuses bad channels and addresses, and unknown pages", func() {
		for _, body := range []string{
			`{"channel":"sms","address":"+15550100"}`,
			`{"channel":"email","address":"not an address"}`,
			`{"channel":"email","address":"Ann <ann@example.com>"}`,
			`{"channel":"webhook","url":"http://hooks.example.com/x"}`,
			`{"channel":"chat","url":"https://user:pw@hooks.example.com/x"}`,
			`{"channel":"webhook"}`,
		} {
			w := post("/s/subs-page/subscribe", body, "application/json")
			Expect(w.Code).To(Equal(http.StatusBadRequest), body)
			Expect(decode[map[string]any](w.Body)).To(HaveKeyWithValue("code", "VALIDATION_ERROR"))
		}
		Expect(post("/s/subs-page/subscribe", `{"channel":"email","address":"a@example.com","extra":1}`, "application/json").Code).
			To(Equal(http.StatusBadRequest))
		r := request(http.MethodPost, "/s/nope/subscribe")
		r.Body = io.NopCloser(strings.NewReader(`{"address":"a@example.com"}`))
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		pub.ServeSubscribe(w, r, "nope")
		Expect(w.Code).To(Equal(http.StatusNotFound))
		Expect(mails.all()).To(BeEmpty())
	})

	It("confirms e-mail subscribers by a link whose token is stored hashed", func() {
		w := post("/s/subs-page/subscribe", url.Values{"channel": {"email"}, "address": {"ann@Example.COM"}}.Encode(),
			"application/x-www-form-urlencoded")
		Expect(w.Code).To(Equal(http.StatusAccepted))
		Expect(w.Header().Get("Content-Type")).To(HavePrefix("text/html"))
		Expect(w.Body.String()).To(ContainSubstring("Check your inbox"))
		Eventually(mails.all).Should(HaveLen(1))
		m := mails.all()[0]
		Expect(m.to).To(Equal("ann@example.com"))
		Expect(m.subject).To(ContainSubstring("Confirm your subscription to Subs status"))
		link := tokenLink.FindString(m.text)
		Expect(link).To(ContainSubstring("/s/subs-page/confirm?token="))
		token := tokenLink.FindStringSubmatch(link)[3]

		subs, err := subDB.ListSubscribers(ctx, string(page.UID), false)
		Expect(err).NotTo(HaveOccurred())
		Expect(subs).To(HaveLen(1))
		Expect(subs[0].ConfirmTokenHash).NotTo(BeEmpty())
		Expect(subs[0].ConfirmTokenHash).NotTo(ContainSubstring(token), "the token is stored hashed")

		// Asking again right away sends nothing more and says the same.
		Expect(post("/s/subs-page/subscribe", `{"address":"ann@example.com"}`, "application/json").Code).To(Equal(http.StatusAccepted))
		Consistently(mails.all, "300ms").Should(HaveLen(1))

		list, err := notifier.Subscribers(ctx, string(page.UID))
		Expect(err).NotTo(HaveOccurred())
		Expect(list.Email).To(HaveLen(1))
		Expect(list.Email[0].Confirmed).To(BeFalse())

		// A mail scanner fetching the link confirms nothing.
		for range 3 {
			w = httptest.NewRecorder()
			pub.ServeConfirm(w, request(http.MethodGet, "/s/subs-page/confirm?token="+token), "subs-page")
			Expect(w.Code).To(Equal(http.StatusOK))
			Expect(w.Body.String()).To(ContainSubstring("Confirm subscription"))
		}
		list, err = notifier.Subscribers(ctx, string(page.UID))
		Expect(err).NotTo(HaveOccurred())
		Expect(list.Email[0].Confirmed).To(BeFalse(), "a GET of the link must not confirm")

		w = follow(link)
		Expect(w.Code).To(Equal(http.StatusOK), w.Body.String())
		Expect(w.Body.String()).To(ContainSubstring("Subscribed"))
		Expect(follow(link).Code).To(Equal(http.StatusNotFound), "a confirmation link works once")

		list, err = notifier.Subscribers(ctx, string(page.UID))
		Expect(err).NotTo(HaveOccurred())
		Expect(list.Total).To(Equal(1))
		Expect(list.Email[0].Confirmed).To(BeTrue())
		Expect(list.Email[0].Address).To(Equal("ann@example.com"))
	})

	It("confirms webhook subscribers with a signed POST, retrying a failing endpoint", func() {
		w := post("/s/subs-page/subscribe", `{"channel":"webhook","url":"`+hook.srv.URL+`/hooks/status"}`, "application/json")
		Expect(w.Code).To(Equal(http.StatusAccepted), w.Body.String())
		Expect(decode[map[string]any](w.Body)).To(Equal(map[string]any{"status": "pending", "channel": "webhook"}),
			"the signing secret goes to the endpoint, not to whoever asked")
		Eventually(hook.posts).Should(HaveLen(1), "the first attempt got 503; the retry succeeds")
		p := hook.posts()[0]
		var msg statuspage.Message
		Expect(json.Unmarshal(p.body, &msg)).To(Succeed())
		Expect(msg.Event).To(Equal(statuspage.EventSubscriptionConfirm))
		Expect(msg.SigningSecret).To(HavePrefix("whsec_"))
		Expect(p.header.Get("X-Service-Event")).To(Equal("subscription.confirm"))
		Expect(p.header.Get("X-Service-Signature")).To(Equal(alerting.Sign([]byte(msg.SigningSecret), p.header.Get("X-Service-Timestamp"), p.body)))
		Expect(follow(msg.ConfirmURL).Code).To(Equal(http.StatusOK))
	})

	It("confirms chat subscribers with a Slack-compatible message", func() {
		w := post("/s/subs-page/subscribe", `{"channel":"chat","url":"`+chat.srv.URL+`/services/T0/B0/XYZW"}`, "application/json")
		Expect(w.Code).To(Equal(http.StatusAccepted))
		Eventually(chat.posts).Should(HaveLen(1))
		var body map[string]string
		Expect(json.Unmarshal(chat.posts()[0].body, &body)).To(Succeed())
		Expect(body).To(HaveKey("text"))
		Expect(chat.posts()[0].header.Get("X-Service-Signature")).To(BeEmpty())
		Expect(follow(body["text"]).Code).To(Equal(http.StatusOK))

		list, err := notifier.Subscribers(ctx, string(page.UID))
		Expect(err).NotTo(HaveOccurred())
		Expect(list.Total).To(Equal(3))
		Expect(list.Chat[0].Address).To(Equal(chat.srv.URL+"/…XYZW"), "chat URLs are credentials: shortened")
		Expect(list.Webhook[0].Confirmed).To(BeTrue())
	})

	It("notifies confirmed subscribers of public updates and maintenance, and unsubscribes them", func() {
		hookBefore, chatBefore := len(hook.posts()), len(chat.posts())
		Expect(notifier.PublicUpdate(ctx, subNS, string(api.UID), "inc-1", "We are rolling back the release.")).To(Succeed())
		Eventually(mails.all).Should(HaveLen(2))
		m := mails.all()[1]
		Expect(m.subject).To(Equal("[Subs status] Update: Public API is down"))
		Expect(m.text).To(ContainSubstring("We are rolling back the release."))
		Expect(m.text).NotTo(ContainSubstring("secret-internal"))
		Eventually(func() int { return len(hook.posts()) }).Should(Equal(hookBefore + 1))
		p := hook.posts()[hookBefore]
		var msg statuspage.Message
		Expect(json.Unmarshal(p.body, &msg)).To(Succeed())
		Expect(msg.Event).To(Equal(statuspage.EventIncidentUpdated))
		Expect(msg.IncidentID).To(Equal("inc-1"))
		Expect(msg.Monitors).To(Equal([]string{"Public API"}))
		Expect(msg.SigningSecret).To(BeEmpty())
		Expect(msg.UnsubscribeURL).To(ContainSubstring("/s/subs-page/unsubscribe?token="))
		Expect(string(p.body)).NotTo(ContainSubstring(string(api.UID)))
		Eventually(func() int { return len(chat.posts()) }).Should(Equal(chatBefore + 1))

		window := &monv1.MaintenanceWindow{
			ObjectMeta: metav1.ObjectMeta{Namespace: subNS, Name: "upgrade", UID: "w-1"},
			Spec: monv1.MaintenanceWindowSpec{Title: "Database upgrade", Description: "Ten minutes of read-only mode.",
				Scope: "monitors", Monitors: []monv1.LocalObjectReference{{Name: "api"}}},
		}
		occurrence := time.Now().Truncate(time.Minute)
		Expect(notifier.Maintenance(ctx, window, true, occurrence)).To(Succeed())
		Expect(notifier.Maintenance(ctx, window, true, occurrence)).To(Succeed(), "announced again: enqueued once")
		Eventually(mails.all).Should(HaveLen(3))
		Expect(mails.all()[2].subject).To(Equal("[Subs status] Maintenance started: Database upgrade"))
		other := window.DeepCopy()
		other.Spec.Monitors = []monv1.LocalObjectReference{{Name: "elsewhere"}}
		Expect(notifier.Maintenance(ctx, other, false, occurrence)).To(Succeed())
		Consistently(mails.all, "300ms").Should(HaveLen(3), "a window that covers none of the page's monitors")

		unsub := tokenLink.FindString(mails.all()[2].text)
		Expect(unsub).To(ContainSubstring("/unsubscribe?token="))
		w := follow(unsub)
		Expect(w.Code).To(Equal(http.StatusOK))
		Expect(w.Body.String()).To(ContainSubstring("Unsubscribed"))
		Expect(follow(unsub).Code).To(Equal(http.StatusOK), "unsubscribing twice is fine")
		Expect(follow(strings.Replace(unsub, "token=", "token=x", 1)).Code).To(Equal(http.StatusNotFound))

		Expect(notifier.IncidentResolved(ctx, subNS, string(api.UID), "inc-1")).To(Succeed())
		Eventually(func() int { return len(hook.posts()) }).Should(Equal(hookBefore + 3))
		Consistently(mails.all, "300ms").Should(HaveLen(3), "the unsubscribed address gets nothing")
		list, err := notifier.Subscribers(ctx, string(page.UID))
		Expect(err).NotTo(HaveOccurred())
		Expect(list.Email).To(BeEmpty())
		Expect(list.Total).To(Equal(2))
	})

	It("offers the e-mail form on the HTML page", func() {
		w := httptest.NewRecorder()
		pub.ServeHTML(w, request(http.MethodGet, "/s/subs-page"), "subs-page")
		Expect(w.Code).To(Equal(http.StatusOK))
		Expect(w.Body.String()).To(ContainSubstring(`action="/s/subs-page/subscribe"`))
		Expect(w.Body.String()).To(ContainSubstring(`type="email"`))
	})
})
