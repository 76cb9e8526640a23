package apiserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/miekg/dns"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apiserver"
	"github.com/uptime-operator/uptime-operator/internal/recipients"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// fakeNotifier records test emails; fail makes the next sends fail.
type fakeNotifier struct {
	mu   sync.Mutex
	sent []string
	fail bool
}

func (n *fakeNotifier) SendTestEmail(_ context.Context, to, monitorName string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.fail {
		return fmt.Errorf("smtp: connection refused")
	}
	n.sent = append(n.sent, to+"|"+monitorName)
	return nil
}

func (n *fakeNotifier) Sent() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.sent...)
}

// createGroupCR creates a MonitorGroup with alert emails directly (the API
// leaves emails to the owner).
func createGroupCR(ns, name string, emails ...string) *monv1.MonitorGroup {
	g := &monv1.MonitorGroup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: monv1.MonitorGroupSpec{Name: name, NotificationEmails: emails}}
	ExpectWithOffset(1, k8s.Create(ctx, g)).To(Succeed())
	DeferCleanup(func() { _ = k8s.Delete(ctx, g) })
	return g
}

var _ = Describe("Test notifications and recipients", func() {
	var (
		notifier *fakeNotifier
		alt      *apiserver.Server
	)
	BeforeEach(func() {
		notifier = &fakeNotifier{}
		opts := suiteOptions()
		opts.Alerting.Notifier = notifier
		alt = apiserver.New(opts)
	})

	// monitorWithRecipients creates a monitor in a group with emails and
	// gives the monitor its own address.
	monitorWithRecipients := func(name string) (string, *monv1.Monitor) {
		g := createGroupCR("team", name+"-group", "group@example.com")
		id := createMonitor("team", map[string]any{"name": name, "url": "https://example.com/" + name})["id"].(string)
		m := monitorCR("team", id)
		patch := client.MergeFrom(m.DeepCopy())
		m.Spec.NotificationEmails = []string{"owner@example.com"}
		m.Spec.GroupRef = &monv1.LocalObjectReference{Name: g.Name}
		Expect(k8s.Patch(ctx, m, patch)).To(Succeed())
		Eventually(func() []any {
			return obj(do("GET", "/monitors/"+id+"/notification-recipients", key("team", "read-only"), nil))["recipients"].([]any)
		}).Should(HaveLen(2))
		return id, m
	}

	It("lists the monitor's and its group's recipients", func() {
		id, _ := monitorWithRecipients("recip")
		rec := do("GET", "/monitors/"+id+"/notification-recipients", key("team", "read-only"), nil)
		Expect(rec.Code).To(Equal(http.StatusOK))
		Expect(obj(rec)["recipients"]).To(Equal([]any{
			map[string]any{"email": "owner@example.com", "source": "monitor"},
			map[string]any{"email": "group@example.com", "source": "group"},
		}))
		Expect(do("GET", "/monitors/00000000-0000-0000-0000-000000000000/notification-recipients", key("team", "read-only"), nil).Code).
			To(Equal(http.StatusNotFound))
	})

	It("sends to the first recipient by default and to a named recipient", func() {
		id, _ := monitorWithRecipients("notify")
		rec := doOn(alt, "POST", "/monitors/"+id+"/test-notification", key("team", "standard"), nil)
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		Expect(obj(rec)).To(HaveKeyWithValue("email", "owner@example.com"))
		rec = doOn(alt, "POST", "/monitors/"+id+"/test-notification", key("team", "standard"), map[string]any{"email": "GROUP@example.com"})
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		Expect(obj(rec)).To(HaveKeyWithValue("success", true))
		Expect(notifier.Sent()).To(Equal([]string{"owner@example.com|notify", "group@example.com|notify"}))
	})

	It("refuses other addresses, read-only keys and unknown monitors", func() {
		id, _ := monitorWithRecipients("notify-refusals")
		rec := doOn(alt, "POST", "/monitors/"+id+"/test-notification", key("team", "standard"), map[string]any{"email": "stranger@example.com"})
		Expect(rec.Code).To(Equal(http.StatusBadRequest))
		Expect(validationFields(obj(rec))).To(Equal([]string{"email"}))
		rec = doOn(alt, "POST", "/monitors/"+id+"/test-notification", key("team", "standard"), map[string]any{"email": "not an address"})
		Expect(rec.Code).To(Equal(http.StatusBadRequest))
		rec = doOn(alt, "POST", "/monitors/"+id+"/test-notification", key("team", "read-only"), nil)
		Expect(rec.Code).To(Equal(http.StatusForbidden))
		Expect(obj(rec)["code"]).To(Equal("READ_ONLY_ACCESS"))
		Expect(doOn(alt, "POST", "/monitors/"+id+"/test-notification", key("other", "standard"), nil).Code).To(Equal(http.StatusNotFound))
		Expect(notifier.Sent()).To(BeEmpty())

		bare := createMonitor("team", map[string]any{"name": "no-recipients", "url": "https://example.com/none"})["id"].(string)
		rec = doOn(alt, "POST", "/monitors/"+bare+"/test-notification", key("team", "standard"), nil)
		Expect(rec.Code).To(Equal(http.StatusBadRequest), rec.Body.String())
	})

	It("answers 503 CHANNEL_UNAVAILABLE without a notifier or when sending fails", func() {
		id, _ := monitorWithRecipients("notify-503")
		rec := do("POST", "/monitors/"+id+"/test-notification", key("team", "standard"), nil)
		Expect(rec.Code).To(Equal(http.StatusServiceUnavailable))
		Expect(obj(rec)["code"]).To(Equal("CHANNEL_UNAVAILABLE"))
		notifier.fail = true
		rec = doOn(alt, "POST", "/monitors/"+id+"/test-notification", key("team", "standard"), nil)
		Expect(rec.Code).To(Equal(http.StatusServiceUnavailable))
		Expect(rec.Body.String()).NotTo(ContainSubstring("smtp"))
	})

	It("limits test notifications to 10 per 15 minutes per workspace", func() {
		id, _ := monitorWithRecipients("notify-limit")
		for i := range 10 {
			Expect(doOn(alt, "POST", "/monitors/"+id+"/test-notification", key("team", "standard"), nil).Code).To(Equal(http.StatusOK), "request %d", i)
		}
		rec := doOn(alt, "POST", "/monitors/"+id+"/test-notification", key("team", "automation"), nil)
		Expect(rec.Code).To(Equal(http.StatusTooManyRequests))
		Expect(rec.Header().Get("Retry-After")).NotTo(BeEmpty())
		Expect(doOn(alt, "POST", "/monitors/"+id+"/test-notification", key("other", "standard"), nil).Code).To(Equal(http.StatusNotFound))
		clk.SetTime(clk.Now().Add(15 * time.Minute))
		Expect(doOn(alt, "POST", "/monitors/"+id+"/test-notification", key("team", "standard"), nil).Code).To(Equal(http.StatusOK))
	})

	It("answers a resend without a mailer with 503, 404 for others, and validates", func() {
		createGroupCR("team", "resend-group", "Resend@example.com")
		Eventually(func() int {
			return do("POST", "/alert-recipients/resend", key("team", "standard"), map[string]any{"email": "resend@example.com"}).Code
		}).Should(Equal(http.StatusServiceUnavailable))
		Expect(obj(do("POST", "/alert-recipients/resend", key("team", "standard"), map[string]any{"email": "resend@example.com"}))["code"]).
			To(Equal("CHANNEL_UNAVAILABLE"))
		Expect(do("POST", "/alert-recipients/resend", key("team", "standard"), map[string]any{"email": "nobody@example.com"}).Code).To(Equal(http.StatusNotFound))
		Expect(do("POST", "/alert-recipients/resend", key("other", "standard"), map[string]any{"email": "resend@example.com"}).Code).To(Equal(http.StatusNotFound))
		rec := do("POST", "/alert-recipients/resend", key("team", "standard"), map[string]any{})
		Expect(rec.Code).To(Equal(http.StatusBadRequest))
		Expect(validationFields(obj(rec))).To(Equal([]string{"email"}))
		Expect(do("POST", "/alert-recipients/resend", key("team", "standard"), "{").Code).To(Equal(http.StatusBadRequest))
		rec = do("POST", "/alert-recipients/resend", key("team", "read-only"), map[string]any{"email": "resend@example.com"})
		Expect(rec.Code).To(Equal(http.StatusForbidden))
		Expect(obj(rec)["code"]).To(Equal("READ_ONLY_ACCESS"))
	})

	It("sends confirmations, reports the state and confirms through the emailed link", func() {
		var mu sync.Mutex
		var mails []string
		opts := suiteOptions()
		confirmer := &recipients.Confirmer{Reader: opts.Client, Store: st, Clock: clk, BaseURL: "https://uptime.example.com",
			Required: true, Mailer: recipients.MailerFunc(func(_ context.Context, to, _, text string) error {
				mu.Lock()
				defer mu.Unlock()
				mails = append(mails, to+"\n"+text)
				return nil
			})}
		opts.Alerting.Recipients = confirmer
		api := apiserver.New(opts)
		createGroupCR("team", "confirm-group", "Confirm@example.com", "second@example.com")
		contact := func(email string) map[string]any {
			rec := doOn(api, "GET", "/alert-recipients", key("team", "read-only"), nil)
			Expect(rec.Code).To(Equal(http.StatusOK))
			Expect(obj(rec)).To(HaveKeyWithValue("confirmation_required", true))
			for _, c := range obj(rec)["contacts"].([]any) {
				if c := c.(map[string]any); c["email"] == email {
					return c
				}
			}
			return nil
		}
		Eventually(func() map[string]any { return contact("Confirm@example.com") }).Should(SatisfyAll(
			HaveKeyWithValue("status", "unconfirmed"), HaveKeyWithValue("confirmed", false),
			HaveKeyWithValue("source", "group"), HaveKeyWithValue("confirmation_sent_at", BeNil())))

		rec := doOn(api, "POST", "/alert-recipients/resend", key("team", "standard"), map[string]any{"email": "confirm@EXAMPLE.com"})
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		Expect(obj(rec)).To(SatisfyAll(HaveKeyWithValue("sent", true), HaveKeyWithValue("status", "pending"),
			HaveKeyWithValue("email", "Confirm@example.com")))
		Expect(contact("Confirm@example.com")).To(SatisfyAll(HaveKeyWithValue("status", "pending"), HaveKeyWithValue("confirmations_sent", 1.0)))
		rec = doOn(api, "POST", "/alert-recipients/resend", key("team", "standard"), map[string]any{"email": "confirm@example.com"})
		Expect(rec.Code).To(Equal(http.StatusTooManyRequests))
		Expect(rec.Header().Get("Retry-After")).To(Equal("60"))

		// The confirmation went to the outbox; deliver it as the alerting
		// worker does.
		ds, err := st.ListDeliveries(ctx, store.DeliveryQuery{ChannelID: recipients.OutboxPrefix + "confirm@example.com"})
		Expect(err).NotTo(HaveOccurred())
		Expect(ds).To(HaveLen(1))
		_, _, err = confirmer.DeliverOutbox(ctx, ds[0])
		Expect(err).NotTo(HaveOccurred())
		mu.Lock()
		Expect(mails).To(HaveLen(1))
		link := regexp.MustCompile(`https://uptime\.example\.com(/recipients/confirm/\S+)`).FindStringSubmatch(mails[0])
		mu.Unlock()
		Expect(link).NotTo(BeNil())
		page := doOn(api, "GET", link[1], "", nil)
		Expect(page.Code).To(Equal(http.StatusOK))
		Expect(page.Body.String()).To(ContainSubstring(`<form method="post">`))
		Expect(contact("Confirm@example.com")).To(HaveKeyWithValue("status", "pending"), "opening the link must not confirm")

		page = doOn(api, "POST", link[1], "", nil)
		Expect(page.Code).To(Equal(http.StatusOK))
		Expect(page.Body.String()).To(ContainSubstring("confirm@example.com will receive the alert emails of workspace team"))
		Expect(contact("Confirm@example.com")).To(SatisfyAll(HaveKeyWithValue("status", "confirmed"), HaveKeyWithValue("confirmed", true),
			HaveKeyWithValue("confirmed_at", Not(BeNil()))))
		Expect(contact("second@example.com")).To(HaveKeyWithValue("status", "unconfirmed"))
		Expect(doOn(api, "POST", link[1], "", nil).Code).To(Equal(http.StatusNotFound), "a link works once")
		rec = doOn(api, "POST", "/recipients/confirm/not-a-token", "", nil)
		Expect(rec.Code).To(Equal(http.StatusNotFound))
		Expect(rec.Header().Get("Content-Type")).To(HavePrefix("text/html"), "a browser gets a page")
		// An API client gets the error shape docs/openapi.json describes.
		rec = doOn(api, "POST", "/recipients/confirm/not-a-token", "", nil, header("Accept", "application/json"))
		Expect(rec.Code).To(Equal(http.StatusNotFound))
		Expect(rec.Header().Get("Content-Type")).To(HavePrefix("application/json"))
		Expect(obj(rec)).To(SatisfyAll(HaveKeyWithValue("code", "NOT_FOUND"), HaveKeyWithValue("error", ContainSubstring("not valid"))))
		for i := range 30 {
			Expect(doOn(api, "POST", "/recipients/confirm/guess", "", nil, fromIP("192.0.2.50")).Code).To(Equal(http.StatusNotFound), "attempt %d", i)
		}
		rec = doOn(api, "POST", "/recipients/confirm/guess", "", nil, fromIP("192.0.2.50"))
		Expect(rec.Code).To(Equal(http.StatusTooManyRequests), "30 confirmation attempts per 15 minutes per address")
		Expect(rec.Header().Get("Retry-After")).NotTo(BeEmpty())

		rec = doOn(api, "POST", "/alert-recipients/resend", key("team", "standard"), map[string]any{"email": "confirm@example.com"})
		Expect(rec.Code).To(Equal(http.StatusOK))
		Expect(obj(rec)).To(SatisfyAll(HaveKeyWithValue("sent", false), HaveKeyWithValue("confirmed", true)))
	})
})

var _ = Describe("Notification settings and delivery statistics", func() {
	// The channel lives in "other": specs in "team" count its connections.
	var ch *monv1.AlertChannel
	BeforeEach(func() {
		ch = &monv1.AlertChannel{ObjectMeta: metav1.ObjectMeta{Namespace: "other", GenerateName: "email-"},
			Spec: monv1.AlertChannelSpec{Type: monv1.ChannelEmail, Name: "On-call mail", Emails: []string{"oncall@example.com"},
				Routing: &monv1.AlertRouting{MinSeverity: "degraded"}}}
		Expect(k8s.Create(ctx, ch)).To(Succeed())
		DeferCleanup(func() { _ = k8s.Delete(ctx, ch) })
	})

	It("shows channels, recipients and alert triggers", func() {
		Eventually(func(g Gomega) {
			rec := do("GET", "/settings/notifications", key("other", "standard"), nil)
			g.Expect(rec.Code).To(Equal(http.StatusOK))
			m := obj(rec)
			g.Expect(m["channels"]).To(ContainElement(HaveKeyWithValue("id", string(ch.UID))))
			g.Expect(m["recipients"]).To(ContainElement(map[string]any{"email": "oncall@example.com", "source": "alert_channel"}))
			g.Expect(m["notify_on"]).To(Equal(map[string]any{"down": true, "degraded": true, "recovery": true}))
			g.Expect(m["test_emails_available"]).To(BeFalse())
		}).Should(Succeed())
		rec := do("GET", "/settings/notifications", key("team", "read-only"), nil)
		Expect(rec.Code).To(Equal(http.StatusOK))
		Expect(obj(rec)["channels"]).NotTo(ContainElement(HaveKeyWithValue("id", string(ch.UID))))
	})

	It("counts deliveries by outcome and channel over 24 hours and 7 days", func() {
		now := clk.Now()
		event := func(ns string, age time.Duration) store.OutboxEvent {
			return store.OutboxEvent{ID: fmt.Sprintf("ev-%s-%d", ns, now.Add(-age).UnixNano()), Namespace: ns, Kind: "monitor.down",
				Payload: json.RawMessage(`{}`), CreatedAt: now.Add(-age), Channels: []string{string(ch.UID)}}
		}
		Expect(st.EnqueueEvents(ctx, event("other", time.Hour), event("other", 3*24*time.Hour), event("other", 10*24*time.Hour),
			event("team", 2*time.Hour))).To(Succeed())
		ds, err := st.ListDeliveries(ctx, store.DeliveryQuery{ChannelID: string(ch.UID)})
		Expect(err).NotTo(HaveOccurred())
		Expect(ds).To(HaveLen(4))
		leased, err := st.LeaseDeliveries(ctx, "test", 100, time.Minute)
		Expect(err).NotTo(HaveOccurred())
		for _, d := range leased {
			switch {
			case d.ChannelID != string(ch.UID):
			case d.EventID == event("other", time.Hour).ID:
				Expect(st.CompleteDelivery(ctx, "test", store.DeliveryAttempt{DeliveryID: d.ID, Attempt: 1, At: now, StatusCode: 250})).To(Succeed())
			case d.EventID == event("other", 3*24*time.Hour).ID:
				Expect(st.FailDelivery(ctx, "test", store.DeliveryAttempt{DeliveryID: d.ID, Attempt: 1, At: now, Error: "refused"})).To(Succeed())
			}
		}

		var m map[string]any
		Eventually(func(g Gomega) {
			rec := do("GET", "/settings/notification-attempts", key("other", "standard"), nil)
			g.Expect(rec.Code).To(Equal(http.StatusOK))
			m = obj(rec)
			g.Expect(m["windows"]).To(HaveLen(2))
			g.Expect(m["windows"].([]any)[1].(map[string]any)["by_channel"]).NotTo(BeEmpty())
		}).Should(Succeed())
		Expect(m["truncated"]).To(BeFalse())
		day, week := m["windows"].([]any)[0].(map[string]any), m["windows"].([]any)[1].(map[string]any)
		Expect(day["window"]).To(Equal("24h"))
		Expect(day["by_outcome"]).To(Equal(map[string]any{"total": 1.0, "delivered": 1.0, "failed": 0.0, "pending": 0.0, "attempts": 1.0}))
		Expect(week["by_outcome"]).To(Equal(map[string]any{"total": 2.0, "delivered": 1.0, "failed": 1.0, "pending": 0.0, "attempts": 2.0}))
		Expect(week["by_channel"]).To(ConsistOf(SatisfyAll(HaveKeyWithValue("channel_id", string(ch.UID)),
			HaveKeyWithValue("name", "On-call mail"), HaveKeyWithValue("type", "email"), HaveKeyWithValue("total", 2.0))))

		// Another workspace sees none of it.
		rec := do("GET", "/settings/notification-attempts", key("team", "read-only"), nil)
		Expect(rec.Code).To(Equal(http.StatusOK))
		Expect(obj(rec)["windows"].([]any)[1].(map[string]any)["by_channel"]).NotTo(ContainElement(HaveKeyWithValue("channel_id", string(ch.UID))))
	})
})

var _ = Describe("Step runs of multistep monitors", func() {
	It("returns the per-step results of the latest checks, newest first", func() {
		id := createMonitor("team", map[string]any{"name": "checkout", "type": "multistep", "config": map[string]any{"steps": []any{
			map[string]any{"name": "login", "method": "POST", "url": "https://93.184.216.34/login"},
			map[string]any{"name": "cart", "url": "https://93.184.216.34/cart"},
		}}})["id"].(string)
		base := time.Date(2026, 4, 2, 9, 0, 0, 0, time.UTC)
		code := 200
		_, err := st.InsertChecks(ctx, []store.Check{
			{ID: id + "-1", MonitorID: id, Namespace: "team", Region: "eu-1", CheckedAt: base, Status: store.StatusUp, StatusCode: &code, ResponseTimeMs: 300,
				Details: json.RawMessage(`{"steps":[{"name":"login","url":"https://93.184.216.34/login","status_code":200,"response_time_ms":120,"passed":true},` +
					`{"name":"cart","url":"https://93.184.216.34/cart","status_code":200,"response_time_ms":180,"passed":true,` +
					`"assertions":[{"source":"status_code","operator":"equals","target":"200","actual":"200","passed":true}]}],"extracted":["tok"]}`)},
			{ID: id + "-2", MonitorID: id, Namespace: "team", Region: "us-1", CheckedAt: base.Add(time.Minute), Status: store.StatusDown, ResponseTimeMs: 90,
				ErrorType: "http_status", ErrorMessage: "step cart: status 500",
				Details: json.RawMessage(`{"steps":[{"name":"login","url":"https://93.184.216.34/login","status_code":200,"response_time_ms":60,"passed":true},` +
					`{"name":"cart","url":"https://93.184.216.34/cart","status_code":500,"response_time_ms":30,"passed":false,"error":"status 500"}]}`)},
			{ID: id + "-3", MonitorID: id, Namespace: "team", Region: "eu-1", CheckedAt: base.Add(2 * time.Minute), Status: store.StatusBlocked},
		})
		Expect(err).NotTo(HaveOccurred())

		rec := do("GET", "/monitors/"+id+"/step-runs?limit=2", key("team", "read-only"), nil)
		Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
		page := obj(rec)
		items := page["items"].([]any)
		Expect(items).To(HaveLen(2))
		Expect(items[0]).To(SatisfyAll(HaveKeyWithValue("status", "blocked"), HaveKeyWithValue("steps", BeEmpty())))
		failed := items[1].(map[string]any)
		Expect(failed).To(HaveKeyWithValue("error_message", "step cart: status 500"))
		Expect(failed["steps"]).To(Equal([]any{
			map[string]any{"index": 0.0, "name": "login", "url": "https://93.184.216.34/login", "status_code": 200.0, "response_time_ms": 60.0,
				"passed": true, "error": nil, "assertions": []any{}},
			map[string]any{"index": 1.0, "name": "cart", "url": "https://93.184.216.34/cart", "status_code": 500.0, "response_time_ms": 30.0,
				"passed": false, "error": "status 500", "assertions": []any{}},
		}))
		Expect(page["next_before"]).To(Equal("2026-04-02T09:01:00.000000Z"))

		rec = do("GET", "/monitors/"+id+"/step-runs?before="+page["next_before"].(string), key("team", "read-only"), nil)
		Expect(rec.Code).To(Equal(http.StatusOK))
		first := obj(rec)["items"].([]any)[0].(map[string]any)
		Expect(first["extracted"]).To(Equal([]any{"tok"}))
		Expect(first["steps"].([]any)[1]).To(HaveKeyWithValue("assertions", HaveLen(1)))

		Expect(do("GET", "/monitors/"+id+"/step-runs?limit=0", key("team", "read-only"), nil).Code).To(Equal(http.StatusBadRequest))
		Expect(do("GET", "/monitors/"+id+"/step-runs", key("other", "standard"), nil).Code).To(Equal(http.StatusNotFound))
		plain := createMonitor("team", map[string]any{"name": "not-steps", "url": "https://example.com/plain"})["id"].(string)
		rec = do("GET", "/monitors/"+plain+"/step-runs", key("team", "read-only"), nil)
		Expect(rec.Code).To(Equal(http.StatusBadRequest))
		Expect(validationFields(obj(rec))).To(Equal([]string{"type"}))
	})
})

var _ = Describe("Probe regions", func() {
	It("lists every region with its location and live state", func() {
		rec := do("GET", "/regions", key("team", "read-only"), nil)
		Expect(rec.Code).To(Equal(http.StatusOK))
		var codes []string
		for _, r := range arr(rec) {
			m := r.(map[string]any)
			Expect(m).To(SatisfyAll(HaveKey("name"), HaveKey("city"), HaveKey("country"), HaveKey("continent"), HaveKey("isp"),
				HaveKey("online"), HaveKey("agents"), HaveKey("monitors")))
			codes = append(codes, m["code"].(string))
		}
		Expect(codes).To(ContainElements("eu-1", "us-1", "us-2"))
		for i := 1; i < len(codes); i++ {
			Expect(codes[i-1] < codes[i]).To(BeTrue(), "sorted: %v", codes)
		}
		Expect(do("GET", "/regions", "", nil).Code).To(Equal(http.StatusUnauthorized))
	})
})

// dnsZone is a tiny authoritative DNS server on loopback for discovery tests.
type dnsZone struct {
	records  map[string][]string // name (FQDN) → addresses
	wildcard map[string][]string // zone suffix → addresses of every other name
}

func (z *dnsZone) ServeDNS(w dns.ResponseWriter, req *dns.Msg) {
	resp := new(dns.Msg)
	resp.SetReply(req)
	q := req.Question[0]
	addrs, ok := z.records[strings.ToLower(q.Name)]
	if !ok {
		for suffix, a := range z.wildcard {
			if strings.HasSuffix(strings.ToLower(q.Name), "."+suffix) {
				addrs, ok = a, true
			}
		}
	}
	if !ok {
		resp.Rcode = dns.RcodeNameError
	}
	for _, a := range addrs {
		ip := net.ParseIP(a)
		switch {
		case ip.To4() != nil && q.Qtype == dns.TypeA:
			resp.Answer = append(resp.Answer, &dns.A{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60}, A: ip})
		case ip.To4() == nil && q.Qtype == dns.TypeAAAA:
			resp.Answer = append(resp.Answer, &dns.AAAA{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeAAAA, Class: dns.ClassINET, Ttl: 60}, AAAA: ip})
		}
	}
	_ = w.WriteMsg(resp)
}

var _ = Describe("Subdomain discovery", func() {
	var resolver *net.Resolver
	BeforeEach(func() {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		Expect(err).NotTo(HaveOccurred())
		zone := &dnsZone{
			records: map[string][]string{
				"www.example.test.":    {"93.184.216.34"},
				"status.example.test.": {"2606:4700::6810:84e5"},
				"api.example.test.":    {"10.1.2.3"},
				"mail.example.test.":   {"10.1.2.4", "198.51.100.25"},
				"www.wild.test.":       {"198.51.100.7"},
			},
			wildcard: map[string][]string{"wild.test.": {"203.0.113.9"}},
		}
		server := &dns.Server{PacketConn: pc, Handler: zone}
		go func() { _ = server.ActivateAndServe() }()
		DeferCleanup(func() { _ = server.Shutdown() })
		addr := pc.LocalAddr().String()
		resolver = &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "udp", addr)
		}}
	})
	discover := func(allowPrivate bool, domain, apiKey string) (int, map[string]any) {
		opts := suiteOptions()
		opts.Resolver, opts.AllowPrivateTargets = resolver, allowPrivate
		rec := doOn(apiserver.New(opts), "GET", "/monitors/discover-subdomains?domain="+domain, apiKey, nil)
		var m map[string]any
		_ = json.Unmarshal(rec.Body.Bytes(), &m)
		return rec.Code, m
	}
	hostnames := func(m map[string]any) []string {
		var out []string
		for _, s := range m["subdomains"].([]any) {
			out = append(out, s.(map[string]any)["hostname"].(string))
		}
		return out
	}

	It("finds common names that resolve to public addresses and says CT logs are not used", func() {
		code, m := discover(false, "Example.test.", key("team", "read-only"))
		Expect(code).To(Equal(http.StatusOK), fmt.Sprint(m))
		Expect(m["domain"]).To(Equal("example.test"))
		Expect(hostnames(m)).To(Equal([]string{"www.example.test", "mail.example.test", "status.example.test"}))
		Expect(m["subdomains"]).To(ContainElement(map[string]any{"hostname": "mail.example.test",
			"addresses": []any{"198.51.100.25"}, "suggested_url": "https://mail.example.test"}))
		Expect(m["certificate_transparency"]).To(BeFalse())
		Expect(m["sources"]).To(Equal([]any{"dns"}))
		Expect(m["note"]).To(ContainSubstring("Certificate-transparency logs are not used"))
		Expect(m["wildcard_dns"]).To(BeFalse())
	})

	It("keeps private addresses when private targets are allowed", func() {
		code, m := discover(true, "example.test", key("team", "read-only"))
		Expect(code).To(Equal(http.StatusOK))
		Expect(hostnames(m)).To(ContainElement("api.example.test"))
	})

	It("leaves out names that only match a wildcard record", func() {
		code, m := discover(false, "wild.test", key("team", "read-only"))
		Expect(code).To(Equal(http.StatusOK))
		Expect(m["wildcard_dns"]).To(BeTrue())
		Expect(hostnames(m)).To(Equal([]string{"www.wild.test"}))
	})

	It("refuses a bad domain and limits discovery to 20 per 15 minutes per workspace", func() {
		for _, d := range []string{"", "localhost", "exa_mple.com", "-bad.example", strings.Repeat("a", 64) + ".com"} {
			code, m := discover(false, d, key("team", "read-only"))
			Expect(code).To(Equal(http.StatusBadRequest), d)
			Expect(validationFields(m)).To(Equal([]string{"domain"}))
		}
		opts := suiteOptions()
		opts.Resolver = resolver
		limited := apiserver.New(opts)
		for range 20 {
			Expect(doOn(limited, "GET", "/monitors/discover-subdomains?domain=bad_", key("team", "read-only"), nil).Code).To(Equal(http.StatusBadRequest))
		}
		rec := doOn(limited, "GET", "/monitors/discover-subdomains?domain=example.test", key("team", "standard"), nil)
		Expect(rec.Code).To(Equal(http.StatusTooManyRequests))
		Expect(rec.Header().Get("Retry-After")).NotTo(BeEmpty())
		Expect(doOn(limited, "GET", "/monitors/discover-subdomains?domain=example.test", key("other", "standard"), nil).Code).To(Equal(http.StatusOK))
	})
})
