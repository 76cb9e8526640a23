package statuspage_test

import (
	"context"
	"net/http"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/alertevent"
	"github.com/uptime-operator/uptime-operator/internal/statuspage"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/store/sqlite"
)

// Subscriber notifications go through the store's outbox: these specs
// "restart" the process by closing the SQLite file and opening it again
// under a new notifier and worker.
var _ = Describe("Durable subscriber notifications", Ordered, func() {
	const ns = "durable"
	var (
		api  *monv1.Monitor
		page monv1.StatusPage
	)

	BeforeAll(func() {
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		api = &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "api"}}
		api.Spec.Name = "API"
		api.Spec.URL = "https://api.example.com/"
		Expect(k8s.Create(ctx, api)).To(Succeed())
		page = monv1.StatusPage{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "durable-page"},
			Spec: monv1.StatusPageSpec{Title: "Durable", IsPublic: true,
				Monitors: []monv1.StatusPageMonitor{{MonitorRef: monv1.LocalObjectReference{Name: "api"}}}},
		}
		Expect(k8s.Create(ctx, &page)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(cached.Get(ctx, client.ObjectKeyFromObject(&page), &page)).To(Succeed())
			g.Expect(cached.Get(ctx, client.ObjectKeyFromObject(api), api)).To(Succeed())
			pages, err := statuspage.ListBy(ctx, cached, statuspage.IndexMonitor, "api", client.InNamespace(ns))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(pages).To(HaveLen(1))
		}).Should(Succeed())
	})

	// openStore opens the SQLite file at path.
	openStore := func(path string) store.Store {
		st, err := sqlite.Open(ctx, path, sqlite.Options{})
		Expect(err).NotTo(HaveOccurred())
		return st
	}
	// subscribeWebhook stores a confirmed webhook subscriber of the page.
	subscribeWebhook := func(st store.Store, url string) store.Subscriber {
		hash := "hash-" + url
		sub, err := st.AddSubscriber(ctx, store.Subscriber{PageUID: string(page.UID), Namespace: ns,
			Channel: store.SubscriberWebhook, Address: url, ConfirmTokenHash: hash, ConfirmationSentAt: ptrTime(time.Now())})
		Expect(err).NotTo(HaveOccurred())
		_, err = st.ConfirmSubscriber(ctx, hash, time.Now())
		Expect(err).NotTo(HaveOccurred())
		return sub
	}

	It("delivers a notification enqueued before a restart exactly once", func() {
		path := filepath.Join(GinkgoT().TempDir(), "restart.db")
		hook := newReceiver(0)
		DeferCleanup(hook.srv.Close)

		// First process: the announcement is enqueued (twice, as a retried
		// caller would), and the process dies before any worker sends it.
		st := openStore(path)
		subscribeWebhook(st, hook.srv.URL+"/a")
		first := newNotifier(st, nil, hook)
		Expect(first.IncidentOpened(ctx, ns, string(api.UID), "inc-restart")).To(Succeed())
		Expect(first.IncidentOpened(ctx, ns, string(api.UID), "inc-restart")).To(Succeed())
		// A worker of the dead process had leased it: the lease must run out
		// before anyone sends it.
		leased, err := st.LeaseDeliveries(ctx, "dead-replica", 10, time.Second)
		Expect(err).NotTo(HaveOccurred())
		Expect(leased).To(HaveLen(1), "one delivery for one subscriber, however often it was announced")
		Expect(st.Close()).To(Succeed())
		Expect(hook.attempts()).To(BeEmpty())

		// Second process on the same file.
		st = openStore(path)
		DeferCleanup(st.Close)
		wctx, stop := context.WithCancel(ctx)
		DeferCleanup(stop)
		runWorker(wctx, st, newNotifier(st, nil, hook), alertevent.Backoff)
		Eventually(hook.posts, "10s").Should(HaveLen(1))
		Consistently(hook.attempts, "500ms").Should(HaveLen(1), "delivered once")
		p := hook.posts()[0]
		Expect(p.header.Get("X-Service-Delivery")).To(Equal(leased[0].ID))
		Expect(p.header.Get("X-Service-Event")).To(Equal(statuspage.EventIncidentOpened))
		Eventually(func(g Gomega) {
			d, err := st.GetDelivery(ctx, leased[0].ID)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(d.Status).To(Equal(store.DeliveryDelivered))
			g.Expect(d.Attempts).To(Equal(1))
		}).Should(Succeed())
	})

	It("retries a failing receiver on the schedule, with one delivery id", func() {
		hook := newReceiver(3)
		// The retried answers of spec/webhooks.md, not only 5xx.
		hook.failWith = []int{http.StatusConflict, http.StatusTooEarly, http.StatusServiceUnavailable}
		DeferCleanup(hook.srv.Close)
		st := openStore(filepath.Join(GinkgoT().TempDir(), "retry.db"))
		DeferCleanup(st.Close)
		sub := subscribeWebhook(st, hook.srv.URL+"/b")
		n := newNotifier(st, nil, hook)
		wctx, stop := context.WithCancel(ctx)
		DeferCleanup(stop)
		// The alert schedule (5, 10, 20 s) scaled down a hundredfold.
		backoff := func(i int) time.Duration { return alertevent.Backoff(i) / 100 }
		runWorker(wctx, st, n, backoff)
		Expect(n.PublicUpdate(ctx, ns, string(api.UID), "inc-retry", "Rolling back.")).To(Succeed())

		Eventually(hook.posts, "10s").Should(HaveLen(1))
		Consistently(hook.attempts, "500ms").Should(HaveLen(4), "409, 425, 503, then delivered, then nothing more")
		at := hook.attempts()
		for i := 1; i < len(at); i++ {
			Expect(at[i].Sub(at[i-1])).To(BeNumerically(">=", backoff(i)), "attempt %d came before its backoff", i+1)
		}
		ds, err := st.ListDeliveries(ctx, store.DeliveryQuery{ChannelID: statuspage.OutboxPrefix + sub.ID})
		Expect(err).NotTo(HaveOccurred())
		Expect(ds).To(HaveLen(1))
		Expect(hook.posts()[0].header.Get("X-Service-Delivery")).To(Equal(ds[0].ID))
		log, err := st.ListDeliveryAttempts(ctx, ds[0].ID)
		Expect(err).NotTo(HaveOccurred())
		var codes []int
		for _, a := range log {
			codes = append(codes, a.StatusCode)
		}
		Expect(codes).To(Equal([]int{409, 425, 503, 200}))
	})

	It("honours a subscriber webhook's Retry-After on 503, as alerts do", func() {
		hook := newReceiver(1)
		hook.retryAfter = "120"
		DeferCleanup(hook.srv.Close)
		st := openStore(filepath.Join(GinkgoT().TempDir(), "retry-after.db"))
		DeferCleanup(st.Close)
		sub := subscribeWebhook(st, hook.srv.URL+"/ra")
		n := newNotifier(st, nil, hook)
		wctx, stop := context.WithCancel(ctx)
		DeferCleanup(stop)
		runWorker(wctx, st, n, alertevent.Backoff)
		Expect(n.PublicUpdate(ctx, ns, string(api.UID), "inc-retry-after", "Investigating.")).To(Succeed())

		Eventually(hook.attempts, "10s").Should(HaveLen(1))
		var d store.Delivery
		Eventually(func(g Gomega) {
			ds, err := st.ListDeliveries(ctx, store.DeliveryQuery{ChannelID: statuspage.OutboxPrefix + sub.ID})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(ds).To(HaveLen(1))
			g.Expect(ds[0].Attempts).To(Equal(1))
			d = ds[0]
		}).Should(Succeed())
		wait := d.NextAttemptAt.Sub(hook.attempts()[0])
		Expect(wait).To(BeNumerically(">=", 115*time.Second), "the next attempt waits for the Retry-After (120 s), not the 5 s backoff")
		Expect(wait).To(BeNumerically("<=", 125*time.Second))
	})
})

func ptrTime(t time.Time) *time.Time { return &t }
