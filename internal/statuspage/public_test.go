package statuspage_test

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/mmcdole/gofeed"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/statuspage"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/testutil"
)

// Things a public page must never show.
var secrets = []string{
	"secret-internal.example.com", "hunter2", "10.0.0.5", "connection refused",
	"connection_refused", "private note", "eu-1", "/admin",
}

const ns = "shop"

// createMonitor creates a monitor and waits until the Monitor controller has
// reconciled it once (it then stays quiet until the spec changes), so the
// spec's status patches are not overwritten.
func createMonitor(name, display, target string) *monv1.Monitor {
	m := &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	m.Spec.Name = display
	m.Spec.URL = target
	// The fixture's checks come from region eu-1 (a name no public page may
	// show); status reads the latest result of the monitor's own regions.
	m.Spec.Regions = []string{"eu-1"}
	region := &monv1.ProbeRegion{ObjectMeta: metav1.ObjectMeta{Name: "eu-1"}}
	if err := k8s.Create(ctx, region); err != nil {
		Expect(apierrors.IsAlreadyExists(err)).To(BeTrue(), "create region eu-1: %v", err)
	}
	Expect(k8s.Create(ctx, m)).To(Succeed())
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(m), m)).To(Succeed())
		g.Expect(m.Status.ObservedGeneration).To(Equal(m.Generation))
	}).WithTimeout(15*time.Second).Should(Succeed(), "the Monitor controller reconciles it (slow on a loaded machine)")
	return m
}

var touches int

// refresh makes the Monitor controller recompute a monitor's status from the
// store, as it does when the engine reports a change: the engine forgets its
// cached state and an annotation change triggers a reconcile. It waits until
// the handler's cache shows want.
func refresh(m *monv1.Monitor, want monv1.MonitorStatusValue) {
	env.Manager.Engine.Forget(string(m.UID))
	touches++
	Expect(k8s.Get(ctx, client.ObjectKeyFromObject(m), m)).To(Succeed())
	before := m.DeepCopy()
	if m.Annotations == nil {
		m.Annotations = map[string]string{}
	}
	m.Annotations["test.uptime-operator.io/touch"] = fmt.Sprint(touches)
	Expect(k8s.Patch(ctx, m, client.MergeFrom(before))).To(Succeed())
	Eventually(func(g Gomega) {
		var got monv1.Monitor
		g.Expect(cached.Get(ctx, client.ObjectKeyFromObject(m), &got)).To(Succeed())
		g.Expect(got.Status.CurrentStatus).To(Equal(want))
	}).Should(Succeed())
	Expect(k8s.Get(ctx, client.ObjectKeyFromObject(m), m)).To(Succeed())
}

var checkSeq int

// check stores one check of m at at.
func check(m *monv1.Monitor, at time.Time, st store.CheckStatus) store.Check {
	checkSeq++
	return store.Check{
		ID: fmt.Sprintf("c-%d", checkSeq), MonitorID: string(m.UID), Namespace: ns, Region: "eu-1",
		CheckedAt: at, Status: st, ResponseTimeMs: int64(100 + checkSeq%7*10),
		ErrorMessage: "dial tcp 10.0.0.5:443: connect: connection refused",
	}
}

func decode[T any](body io.Reader) T {
	var v T
	ExpectWithOffset(1, json.NewDecoder(body).Decode(&v)).To(Succeed())
	return v
}

func wellFormed(b []byte) error {
	dec := xml.NewDecoder(strings.NewReader(string(b)))
	for {
		_, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

var _ = Describe("Public status pages", Ordered, func() {
	var api, web, dbm *monv1.Monitor
	var incidentID string
	secretTarget := "https://secret-internal.example.com/admin?token=hunter2"

	BeforeAll(func() {
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		api = createMonitor("api", "API", secretTarget)
		web = createMonitor("web", "Website", "https://www.example.com/")
		dbm = createMonitor("db", "Database", "https://db.example.com/health")
		now := clk.Now()

		// Three days of hourly checks; the API fails for six hours two days ago.
		var checks []store.Check
		for h := 0; h < 72; h++ {
			at := now.Add(-time.Duration(h)*time.Hour - time.Minute)
			for _, m := range []*monv1.Monitor{api, web, dbm} {
				st := store.StatusUp
				if m == api && h >= 40 && h < 46 {
					st = store.StatusDown
				}
				checks = append(checks, check(m, at, st))
			}
		}
		_, err := db.InsertChecks(ctx, checks)
		Expect(err).NotTo(HaveOccurred())

		inc, err := db.OpenIncident(ctx, store.Incident{
			Namespace: ns, MonitorID: string(api.UID), MonitorName: "api", MonitorURL: secretTarget,
			MonitorType: "http", StartedAt: now.Add(-30 * time.Minute), Cause: "connection_refused",
			ConfirmingRegions: []string{"eu-1"},
		})
		Expect(err).NotTo(HaveOccurred())
		incidentID = inc.ID
		_, err = db.AddNote(ctx, store.Note{IncidentID: inc.ID, Body: "We are investigating elevated errors.", Public: true, Author: "ops@example.com", CreatedAt: now.Add(-20 * time.Minute)})
		Expect(err).NotTo(HaveOccurred())
		_, err = db.AddNote(ctx, store.Note{IncidentID: inc.ID, Body: "private note: password is hunter2", CreatedAt: now.Add(-10 * time.Minute)})
		Expect(err).NotTo(HaveOccurred())

		old, err := db.OpenIncident(ctx, store.Incident{Namespace: ns, MonitorID: string(web.UID), MonitorName: "web",
			MonitorURL: "https://www.example.com/", StartedAt: now.Add(-48 * time.Hour)})
		Expect(err).NotTo(HaveOccurred())
		_, err = db.AddNote(ctx, store.Note{IncidentID: old.ID, Body: "A CDN node failed.", Public: true, CreatedAt: now.Add(-47 * time.Hour)})
		Expect(err).NotTo(HaveOccurred())
		_, err = db.ResolveIncident(ctx, old.ID, now.Add(-46*time.Hour), false, "")
		Expect(err).NotTo(HaveOccurred())

		// The API's latest check fails (its error and region land in Monitor
		// status) and its incident is open.
		_, err = db.InsertChecks(ctx, []store.Check{check(api, now, store.StatusDown)})
		Expect(err).NotTo(HaveOccurred())
		refresh(api, monv1.StatusDown)
		refresh(web, monv1.StatusUp)
		refresh(dbm, monv1.StatusUp)
		Expect(api.Status.LastError).To(ContainSubstring("10.0.0.5"), "the fixture has an error a page must not show")

		Expect(k8s.Create(ctx, &monv1.MaintenanceWindow{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db-upgrade"},
			Spec: monv1.MaintenanceWindowSpec{
				Title: "Database upgrade", Description: "Minor version upgrade.",
				StartsAt: metav1.NewTime(now.Add(time.Hour)), EndsAt: metav1.NewTime(now.Add(2 * time.Hour)),
				Scope: "monitors", Monitors: []monv1.LocalObjectReference{{Name: "db"}},
			},
		})).To(Succeed())

		pwd := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "vault-password"},
			Data: map[string][]byte{"password": []byte("correct horse\n")}}
		Expect(k8s.Create(ctx, pwd)).To(Succeed())

		for _, p := range []*monv1.StatusPage{
			{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop"},
				Spec: monv1.StatusPageSpec{
					Title: "Shop", Description: "Status of the shop", IsPublic: true, ShowResponseTimes: true,
					AccentColor: "#1f6feb", CustomDomain: "status.shop.example",
					Monitors: []monv1.StatusPageMonitor{
						{MonitorRef: monv1.LocalObjectReference{Name: "api"}, Section: "Backend"},
						{MonitorRef: monv1.LocalObjectReference{Name: "db"}, Section: "Backend"},
						{MonitorRef: monv1.LocalObjectReference{Name: "web"}, Section: "Frontend", DisplayName: "Storefront"},
						{MonitorRef: monv1.LocalObjectReference{Name: "gone"}, Section: "Frontend"},
					},
					Languages: &monv1.StatusPageLanguages{Default: "en", Enabled: []string{"de"},
						Translations: []monv1.StatusPageTranslation{{Language: "de", Title: "Shop-Status", Description: "Status des Shops"}}},
				},
			},
			{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hidden"},
				Spec: monv1.StatusPageSpec{Title: "Hidden", IsPublic: false,
					Monitors: []monv1.StatusPageMonitor{{MonitorRef: monv1.LocalObjectReference{Name: "web"}}}},
			},
			{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "vault"},
				Spec: monv1.StatusPageSpec{Title: "Vault", IsPublic: true, HidePoweredBy: true,
					Monitors: []monv1.StatusPageMonitor{{MonitorRef: monv1.LocalObjectReference{Name: "web"}}},
					Access: &monv1.StatusPageAccess{Mode: monv1.AccessPassword,
						PasswordSecretRef: &monv1.SecretKeySelector{Name: "vault-password", Key: "password"}}},
			},
		} {
			Expect(k8s.Create(ctx, p)).To(Succeed())
		}
		Eventually(func(g Gomega) {
			var list monv1.StatusPageList
			g.Expect(cached.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
			g.Expect(list.Items).To(HaveLen(3))
			var mws monv1.MaintenanceWindowList
			g.Expect(cached.List(ctx, &mws, client.InNamespace(ns))).To(Succeed())
			g.Expect(mws.Items).To(HaveLen(1))
		}).Should(Succeed())
		expire()
	})

	Describe("GET /status/:slug", func() {
		It("serves the page as JSON with sections, states, uptime, incidents and maintenance", func() {
			w := serveStatus(request(http.MethodGet, "/status/shop"), "shop", "")
			Expect(w.Code).To(Equal(http.StatusOK), w.Body.String())
			Expect(w.Header().Get("Content-Type")).To(HavePrefix("application/json"))
			raw := w.Body.String()
			doc := decode[map[string]any](strings.NewReader(raw))
			for _, k := range []string{"title", "description", "logo_url", "favicon_url", "accent_color", "hide_powered_by",
				"show_response_times", "status", "sections", "active_incidents", "maintenance", "updated_at"} {
				Expect(doc).To(HaveKey(k))
			}

			d := decode[statuspage.Document](strings.NewReader(raw))
			Expect(d.Title).To(Equal("Shop"))
			Expect(*d.AccentColor).To(Equal("#1f6feb"))
			Expect(d.LogoURL).To(BeNil())
			Expect(d.Languages).To(Equal([]string{"en", "de"}))
			// One of three existing monitors is down: partial outage.
			Expect(d.Status).To(Equal(statuspage.PartialOutage))
			Expect(d.Sections).To(HaveLen(2))
			Expect(d.Sections[0].Name).To(Equal("Backend"))
			Expect(d.Sections[0].Status).To(Equal(statuspage.PartialOutage), "one of two down")
			Expect(d.Sections[1].Name).To(Equal("Frontend"))
			Expect(d.Sections[1].Monitors).To(HaveLen(1), "a missing monitor is not shown")

			apiM := d.Sections[0].Monitors[0]
			Expect(apiM.Name).To(Equal("API"))
			Expect(apiM.Status).To(Equal("down"))
			Expect(apiM.ID).NotTo(Equal(string(api.UID)))
			// 24 hourly checks up and the latest down; six of 72 down before.
			Expect(apiM.Uptime24h).To(HaveValue(BeNumerically("~", 100*24.0/25, 0.01)))
			Expect(apiM.Uptime30d).To(HaveValue(BeNumerically("~", 100*66.0/73, 0.01)))
			Expect(apiM.ResponseTimeMs).NotTo(BeNil())
			Expect(apiM.AvgResponseTimeMs24h).NotTo(BeNil())
			Expect(len(apiM.ResponseTimes)).To(BeNumerically(">=", 20))
			Expect(d.Sections[1].Monitors[0].Name).To(Equal("Storefront"))
			Expect(d.Sections[1].Monitors[0].Status).To(Equal("up"))

			Expect(d.ActiveIncidents).To(HaveLen(1))
			inc := d.ActiveIncidents[0]
			Expect(inc.ID).To(Equal(incidentID))
			Expect(inc.Status).To(Equal("ongoing"))
			Expect(inc.Monitors).To(Equal([]string{"API"}))
			Expect(inc.Updates).To(HaveLen(1), "only public notes are shown")
			Expect(inc.Updates[0].Body).To(Equal("We are investigating elevated errors."))

			Expect(d.Maintenance).To(HaveLen(1))
			Expect(d.Maintenance[0].Title).To(Equal("Database upgrade"))
			Expect(d.Maintenance[0].State).To(Equal("scheduled"))
			Expect(d.Maintenance[0].Monitors).To(Equal([]string{"Database"}))
		})

		It("never shows targets, hosts, errors, regions, private notes or authors", func() {
			for _, rest := range []string{"", "history", "feed.xml", "badge.svg"} {
				w := serveStatus(request(http.MethodGet, "/status/shop/"+rest), "shop", rest)
				Expect(w.Code).To(Equal(http.StatusOK))
				for _, s := range append(secrets, "ops@example.com", string(api.UID)) {
					Expect(w.Body.String()).NotTo(ContainSubstring(s), "%s leaks %q", rest, s)
				}
			}
			w := serveHTML(request(http.MethodGet, "/s/shop"), "shop")
			Expect(w.Code).To(Equal(http.StatusOK))
			for _, s := range append(secrets, "ops@example.com", string(api.UID)) {
				Expect(w.Body.String()).NotTo(ContainSubstring(s), "the HTML page leaks %q", s)
			}
		})

		It("translates title and description by ?lang= and Accept-Language", func() {
			d := decode[statuspage.Document](serveStatus(request(http.MethodGet, "/status/shop?lang=de"), "shop", "").Body)
			Expect(d.Title).To(Equal("Shop-Status"))
			Expect(d.Language).To(Equal("de"))
			r := request(http.MethodGet, "/status/shop")
			r.Header.Set("Accept-Language", "de-DE,de;q=0.9")
			Expect(decode[statuspage.Document](serveStatus(r, "shop", "").Body).Description).To(Equal("Status des Shops"))
		})

		It("answers 404 for unpublished and unknown pages", func() {
			for _, slug := range []string{"hidden", "no-such-page"} {
				for _, rest := range []string{"", "history", "badge.svg", "feed.xml"} {
					w := serveStatus(request(http.MethodGet, "/status/"+slug), slug, rest)
					Expect(w.Code).To(Equal(http.StatusNotFound), "%s/%s", slug, rest)
					Expect(decode[map[string]any](w.Body)).To(HaveKeyWithValue("code", "NOT_FOUND"))
				}
				Expect(serveHTML(request(http.MethodGet, "/s/"+slug), slug).Code).To(Equal(http.StatusNotFound))
			}
		})

		It("shows the page's third-party services apart from its own status", func() {
			src := &fakeThirdParty{services: []statuspage.PublicService{
				{Name: "Payments provider", Status: "down", URL: "https://status.payments.example",
					Components: []statuspage.PublicServiceComponent{{Name: "Card API", Status: "down"}},
					Incidents:  []statuspage.PublicServiceIncident{{Name: "Card payments failing", URL: "https://status.payments.example/inc/1"}}},
			}}
			public.ThirdParty = src
			DeferCleanup(func() { public.ThirdParty = nil })
			expire()
			before := decode[statuspage.Document](serveStatus(request(http.MethodGet, "/status/shop"), "shop", "").Body)
			Expect(before.ThirdPartyServices).To(HaveLen(1))
			Expect(before.ThirdPartyServices[0].Name).To(Equal("Payments provider"))
			Expect(src.pages).To(ContainElement(Not(BeEmpty())), "asked by the page's UID")

			html := serveHTML(request(http.MethodGet, "/s/shop"), "shop").Body.String()
			Expect(html).To(ContainSubstring("Third-party services"))
			Expect(html).To(ContainSubstring(`<a href="https://status.payments.example" rel="noopener nofollow">Payments provider</a>`))
			Expect(html).To(ContainSubstring("Card API: Outage"))
			Expect(html).To(ContainSubstring("Card payments failing"))

			public.ThirdParty = nil
			expire()
			without := decode[statuspage.Document](serveStatus(request(http.MethodGet, "/status/shop"), "shop", "").Body)
			Expect(without.ThirdPartyServices).To(BeEmpty())
			Expect(without.Status).To(Equal(before.Status), "third-party services do not change the page's status")
		})

		It("follows monitor status after the cache time", func() {
			_, err := db.InsertChecks(ctx, []store.Check{check(web, time.Now(), store.StatusDegraded)})
			Expect(err).NotTo(HaveOccurred())
			refresh(web, monv1.StatusDegraded)
			d := decode[statuspage.Document](serveStatus(request(http.MethodGet, "/status/shop"), "shop", "").Body)
			Expect(d.Sections[1].Monitors[0].Status).To(Equal("up"), "cached for a few seconds")
			expire()
			d = decode[statuspage.Document](serveStatus(request(http.MethodGet, "/status/shop"), "shop", "").Body)
			Expect(d.Sections[1].Monitors[0].Status).To(Equal("degraded"))
			Expect(d.Sections[1].Status).To(Equal(statuspage.Degraded))

			_, err = db.InsertChecks(ctx, []store.Check{check(web, time.Now(), store.StatusUp)})
			Expect(err).NotTo(HaveOccurred())
			refresh(web, monv1.StatusUp)
			expire()
		})
	})

	Describe("GET /status/:slug/history", func() {
		It("returns 90 days by default and fewer on request", func() {
			h := decode[statuspage.History](serveStatus(request(http.MethodGet, "/status/shop/history"), "shop", "history").Body)
			Expect(h.Days).To(Equal(90))
			Expect(h.Monitors).To(HaveLen(3))
			Expect(h.Monitors[0].Days).To(HaveLen(90))
			Expect(h.Monitors[0].Days[0].UptimePercentage).To(BeNil(), "no checks 90 days ago")
			Expect(h.Monitors[0].Days[89].Date).To(Equal(clk.Now().UTC().Format("2006-01-02")))

			r := request(http.MethodGet, "/status/shop/history?days=7")
			h = decode[statuspage.History](serveStatus(r, "shop", "history").Body)
			Expect(h.Days).To(Equal(7))
			Expect(h.Monitors[0].Days).To(HaveLen(7))
			Expect(h.Monitors[0].Days[6].UptimePercentage).NotTo(BeNil())
		})

		DescribeTable("refuses a bad days value with 400",
			func(v string) {
				r := request(http.MethodGet, "/status/shop/history?days="+url.QueryEscape(v))
				w := serveStatus(r, "shop", "history")
				Expect(w.Code).To(Equal(http.StatusBadRequest))
				body := decode[map[string]any](w.Body)
				Expect(body).To(HaveKeyWithValue("code", "VALIDATION_ERROR"))
			},
			Entry("zero", "0"), Entry("negative", "-1"), Entry("over 90", "91"), Entry("not a number", "seven"), Entry("a fraction", "1.5"),
		)
	})

	Describe("GET /status/:slug/badge.svg", func() {
		It("is a well-formed, accessible SVG with the state, cached for 60 s with an ETag", func() {
			w := serveStatus(request(http.MethodGet, "/status/shop/badge.svg"), "shop", "badge.svg")
			Expect(w.Code).To(Equal(http.StatusOK))
			Expect(w.Header().Get("Content-Type")).To(HavePrefix("image/svg+xml"))
			Expect(w.Header().Get("Cache-Control")).To(ContainSubstring("max-age=60"))
			etag := w.Header().Get("ETag")
			Expect(etag).To(MatchRegexp(`^"[0-9a-f]+"$`))
			svg := w.Body.String()
			Expect(wellFormed([]byte(svg))).To(Succeed())
			var root struct {
				XMLName xml.Name
				Role    string `xml:"role,attr"`
				Label   string `xml:"aria-label,attr"`
				Title   string `xml:"title"`
			}
			Expect(xml.Unmarshal([]byte(svg), &root)).To(Succeed())
			Expect(root.XMLName.Local).To(Equal("svg"))
			Expect(root.XMLName.Space).To(Equal("http://www.w3.org/2000/svg"))
			Expect(root.Role).To(Equal("img"))
			Expect(root.Label).To(ContainSubstring("partial outage"))
			Expect(root.Label).To(MatchRegexp(`\d+\.\d\d%`))
			Expect(root.Title).To(Equal(root.Label))

			r := request(http.MethodGet, "/status/shop/badge.svg")
			r.Header.Set("If-None-Match", etag)
			Expect(serveStatus(r, "shop", "badge.svg").Code).To(Equal(http.StatusNotModified))
		})
	})

	Describe("GET /status/:slug/feed.xml", func() {
		It("is an Atom 1.0 feed of incidents with public updates and maintenance", func() {
			w := serveStatus(request(http.MethodGet, "/status/shop/feed.xml"), "shop", "feed.xml")
			Expect(w.Code).To(Equal(http.StatusOK))
			Expect(w.Header().Get("Content-Type")).To(HavePrefix("application/atom+xml"))
			var feed statuspage.AtomFeed
			Expect(xml.Unmarshal(w.Body.Bytes(), &feed)).To(Succeed())
			Expect(feed.XMLName.Space).To(Equal("http://www.w3.org/2005/Atom"))
			Expect(feed.ID).NotTo(BeEmpty())
			Expect(feed.Title).NotTo(BeEmpty())
			_, err := time.Parse(time.RFC3339, feed.Updated)
			Expect(err).NotTo(HaveOccurred())
			Expect(feed.Links).To(ContainElement(statuspage.AtomLink{Rel: "self", Type: "application/atom+xml", Href: baseURL + "/status/shop/feed.xml"}))
			titles := map[string]statuspage.AtomEntry{}
			for _, e := range feed.Entries {
				Expect(e.ID).To(HavePrefix("urn:uuid:"))
				_, err := time.Parse(time.RFC3339, e.Updated)
				Expect(err).NotTo(HaveOccurred())
				titles[e.Title] = e
			}
			Expect(titles).To(HaveKey("API is down"))
			Expect(titles["API is down"].Content.Body).To(ContainSubstring("We are investigating elevated errors."))
			Expect(titles).To(HaveKey("Resolved: Storefront outage"))
			Expect(titles["Resolved: Storefront outage"].Content.Body).To(ContainSubstring("A CDN node failed."))
			Expect(titles).To(HaveKey("Maintenance (scheduled): Database upgrade"))

			// A real feed parser reads it as Atom with the same entries.
			parsed, err := gofeed.NewParser().ParseString(w.Body.String())
			Expect(err).NotTo(HaveOccurred())
			Expect(parsed.FeedType).To(Equal("atom"))
			Expect(parsed.FeedVersion).To(Equal("1.0"))
			Expect(parsed.Title).To(Equal(feed.Title))
			Expect(parsed.UpdatedParsed).NotTo(BeNil())
			Expect(parsed.Items).To(HaveLen(len(feed.Entries)))
			for _, it := range parsed.Items {
				Expect(it.GUID).To(HavePrefix("urn:uuid:"))
				Expect(it.UpdatedParsed).NotTo(BeNil(), it.Title)
				Expect(it.Link).To(Equal(baseURL + "/s/shop"))
			}
			Expect(parsed.Items[0].Title).To(Equal(feed.Entries[0].Title))
		})
	})

	Describe("private pages", func() {
		login := func(password string, cookies ...*http.Cookie) *http.Response {
			r := request(http.MethodPost, "/s/vault/login")
			r.Body = io.NopCloser(strings.NewReader(url.Values{"password": {password}}.Encode()))
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			w := httptestRecorder()
			public.ServeLogin(w, r, "vault")
			return w.Result()
		}
		withCookie := func(r *http.Request, c *http.Cookie) *http.Request {
			if c != nil {
				r.AddCookie(c)
			}
			return r
		}

		It("needs a session from the password form; revoking sessions signs visitors out", func() {
			Expect(serveStatus(request(http.MethodGet, "/status/vault"), "vault", "").Code).To(Equal(http.StatusUnauthorized))
			w := serveHTML(request(http.MethodGet, "/s/vault"), "vault")
			Expect(w.Code).To(Equal(http.StatusUnauthorized))
			Expect(w.Body.String()).To(ContainSubstring(`action="/s/vault/login"`))
			Expect(w.Body.String()).To(ContainSubstring(`type="password"`))

			res := login("wrong")
			Expect(res.StatusCode).To(Equal(http.StatusUnauthorized))
			Expect(res.Cookies()).To(BeEmpty())

			res = login("correct horse")
			Expect(res.StatusCode).To(Equal(http.StatusSeeOther))
			Expect(res.Header.Get("Location")).To(Equal("/s/vault"))
			Expect(res.Cookies()).To(HaveLen(1))
			cookie := res.Cookies()[0]
			Expect(cookie.HttpOnly).To(BeTrue())
			Expect(cookie.Secure).To(BeTrue())

			Expect(serveStatus(withCookie(request(http.MethodGet, "/status/vault"), cookie), "vault", "").Code).To(Equal(http.StatusOK))
			w = serveHTML(withCookie(request(http.MethodGet, "/s/vault"), cookie), "vault")
			Expect(w.Code).To(Equal(http.StatusOK))
			Expect(w.Body.String()).NotTo(ContainSubstring("Powered by"))
			Expect(w.Body.String()).NotTo(ContainSubstring("feed.xml"), "private pages offer no feed")
			Expect(serveStatus(withCookie(request(http.MethodGet, "/status/vault/feed.xml"), cookie), "vault", "feed.xml").Code).
				To(Equal(http.StatusNotFound))
			Expect(serveStatus(request(http.MethodGet, "/status/vault/feed.xml"), "vault", "feed.xml").Code).
				To(Equal(http.StatusNotFound))

			clk.Step(2 * time.Second)
			var page monv1.StatusPage
			Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "vault"}, &page)).To(Succeed())
			before := page.DeepCopy()
			page.Spec.Access.SessionsRevokedAt = &metav1.Time{Time: clk.Now().Add(-time.Second)}
			Expect(k8s.Patch(ctx, &page, client.MergeFrom(before))).To(Succeed())
			Eventually(func() int {
				return serveStatus(withCookie(request(http.MethodGet, "/status/vault"), cookie), "vault", "").Code
			}).Should(Equal(http.StatusUnauthorized))

			res = login("correct horse")
			Expect(res.StatusCode).To(Equal(http.StatusSeeOther))
			Expect(serveStatus(withCookie(request(http.MethodGet, "/status/vault"), res.Cookies()[0]), "vault", "").Code).
				To(Equal(http.StatusOK))
		})
	})

	Describe("the HTML page", func() {
		var html string
		BeforeAll(func() {
			w := serveHTML(request(http.MethodGet, "/s/shop"), "shop")
			Expect(w.Code).To(Equal(http.StatusOK))
			Expect(w.Header().Get("Content-Type")).To(HavePrefix("text/html"))
			Expect(w.Header().Get("Content-Security-Policy")).To(ContainSubstring("default-src 'none'"))
			html = w.Body.String()
			if path := os.Getenv("STATUSPAGE_HTML_DUMP"); path != "" { // for a look in a browser
				Expect(os.WriteFile(path, []byte(html), 0o644)).To(Succeed())
			}
		})

		It("loads no external assets", func() {
			external := regexp.MustCompile(`(?i)<(script|link|img|iframe|source|video|audio|object|embed)\b[^>]*\b(src|href|data)\s*=\s*"(https?:)?//`)
			Expect(external.FindAllString(html, -1)).To(BeEmpty())
			Expect(html).NotTo(MatchRegexp(`(?i)<script[^>]+src=`))
			Expect(html).NotTo(MatchRegexp(`(?i)<link[^>]+rel="stylesheet"`))
			Expect(html).NotTo(MatchRegexp(`(?i)@import|url\(\s*["']?https?:`))
		})

		It("has landmarks, headings, a language and labelled graphics", func() {
			for _, s := range []string{`<html lang="en">`, "<header", "<main id=\"main\"", "<footer", `<h1>Shop</h1>`,
				`role="status"`, `aria-live="polite"`, `href="#main"`, `aria-label="Language"`, ":focus-visible"} {
				Expect(html).To(ContainSubstring(s))
			}
			Expect(strings.Count(html, `role="img"`)).To(BeNumerically(">=", 3))
			Expect(html).To(MatchRegexp(`aria-label="Daily uptime of API, last 90 days: \d+\.\d\d% overall"`))
			Expect(html).To(ContainSubstring(`aria-label="Response time of API over the last 24 hours`))
			Expect(html).To(ContainSubstring("<polyline"))
			Expect(html).To(MatchRegexp(`24 h average \d+ ms`))
			Expect(html).NotTo(ContainSubstring("%!"), "a template formatting error")
			Expect(strings.Count(html, "<rect x=")).To(Equal(3 * 90))
			Expect(html).To(MatchRegexp(`<title>\d{4}-\d\d-\d\d: (no data|\d+\.\d\d% uptime)</title>`))
		})

		It("shows the banner, incidents with public updates, maintenance, feed link and powered-by", func() {
			Expect(html).To(ContainSubstring("Partial outage"))
			Expect(html).To(ContainSubstring("API is down"))
			Expect(html).To(ContainSubstring("We are investigating elevated errors."))
			Expect(html).To(ContainSubstring("Database upgrade"))
			Expect(html).To(ContainSubstring(`href="/status/shop/feed.xml"`))
			Expect(html).To(ContainSubstring("Powered by"))
			Expect(html).To(ContainSubstring("--accent:#1f6feb"))
			Expect(html).To(ContainSubstring(`data-json="/status/shop"`))
			Expect(html).To(ContainSubstring("setInterval(refresh, 60000)"))
		})

		It("renders an up and a down monitor in headless Chromium (DOM and screenshot)", func() {
			chromium := testutil.Chromium(GinkgoT())
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasPrefix(r.URL.Path, "/status/shop") {
					public.ServeStatus(w, r, "shop", strings.Trim(strings.TrimPrefix(r.URL.Path, "/status/shop"), "/"))
					return
				}
				public.ServeHTML(w, r, "shop")
			}))
			defer srv.Close()
			bctx, cancel := context.WithTimeout(ctx, 60*time.Second)
			defer cancel()
			run := func(action ...string) []byte {
				args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
					"--disable-background-networking", "--disable-component-update", "--disable-sync",
					"--user-data-dir=" + GinkgoT().TempDir(), "--window-size=1280,900"}, action...)
				cmd := exec.CommandContext(bctx, chromium, append(args, srv.URL+"/s/shop")...)
				var stderr strings.Builder
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				Expect(err).NotTo(HaveOccurred(), stderr.String())
				return out
			}

			dom := string(run("--dump-dom"))
			state := func(name, st, label string) string {
				return `<span class="name">` + name + `</span>\s*<span class="pill state s-` + st + `" data-state="` + st + `">` + label + `</span>`
			}
			Expect(dom).To(MatchRegexp(state("API", "down", "Outage")), "the down monitor")
			Expect(dom).To(MatchRegexp(state("Storefront", "up", "Operational")), "the up monitor")
			Expect(dom).To(ContainSubstring("Partial outage"))
			Expect(dom).To(ContainSubstring("We are investigating elevated errors."))

			shot := filepath.Join(suiteT.ArtifactDir(), "statuspage.png")
			run("--screenshot=" + shot)
			png, err := os.ReadFile(shot)
			Expect(err).NotTo(HaveOccurred())
			Expect(png).To(HavePrefix("\x89PNG\r\n\x1a\n"))
			Expect(len(png)).To(BeNumerically(">", 20_000), "the screenshot looks blank")
			fmt.Fprintln(GinkgoWriter, "screenshot:", shot)
			AddReportEntry("screenshot", shot)
		})

		It("is translated by ?lang=", func() {
			w := serveHTML(request(http.MethodGet, "/s/shop?lang=de"), "shop")
			Expect(w.Body.String()).To(ContainSubstring(`<html lang="de">`))
			Expect(w.Body.String()).To(ContainSubstring("<h1>Shop-Status</h1>"))
		})
	})

	Describe("custom domains", func() {
		It("serves the page and its endpoints on spec.customDomain and nothing else", func() {
			r := request(http.MethodGet, "/")
			r.Host = "Status.Shop.Example:443"
			w := httptestRecorder()
			Expect(public.ServeCustomDomain(w, r)).To(BeTrue())
			Expect(w.Code).To(Equal(http.StatusOK))
			Expect(w.Body.String()).To(ContainSubstring("<h1>Shop</h1>"))

			r = request(http.MethodGet, "/status/shop")
			r.Host = "status.shop.example"
			w = httptestRecorder()
			Expect(public.ServeCustomDomain(w, r)).To(BeTrue())
			Expect(decode[statuspage.Document](w.Body).Title).To(Equal("Shop"))

			r = request(http.MethodGet, "/status/other")
			r.Host = "status.shop.example"
			Expect(public.ServeCustomDomain(httptestRecorder(), r)).To(BeFalse())

			r = request(http.MethodGet, "/")
			r.Host = "unknown.example"
			w = httptestRecorder()
			Expect(public.ServeCustomDomain(w, r)).To(BeFalse())
			Expect(w.Body.Len()).To(BeZero())
		})
	})

	Describe("the StatusPage controller", func() {
		It("reports monitor states, missing monitors, the overall status and the URL", func() {
			Eventually(func(g Gomega) {
				var page monv1.StatusPage
				g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "shop"}, &page)).To(Succeed())
				g.Expect(page.Status.ObservedGeneration).To(Equal(page.Generation))
				g.Expect(page.Status.URL).To(Equal(baseURL + "/s/shop"))
				g.Expect(page.Status.OverallStatus).To(Equal("partial_outage"))
				g.Expect(page.Status.Monitors).To(Equal([]monv1.StatusPageMonitorState{
					{Name: "api", Status: "down"}, {Name: "db", Status: "up"}, {Name: "web", Status: "up"}, {Name: "gone", Status: "missing"},
				}))
				ready := meta.FindStatusCondition(page.Status.Conditions, monv1.ConditionReady)
				g.Expect(ready).NotTo(BeNil())
				g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
				g.Expect(ready.Reason).To(Equal(monv1.ReasonReferenceNotFound))
				g.Expect(ready.Message).To(ContainSubstring("gone"))
			}).Should(Succeed())
		})

		It("follows monitor status and becomes Ready when the missing monitor appears", func() {
			_, err := db.ResolveIncident(ctx, incidentID, time.Now(), true, "")
			Expect(err).NotTo(HaveOccurred())
			_, err = db.InsertChecks(ctx, []store.Check{check(api, time.Now(), store.StatusUp)})
			Expect(err).NotTo(HaveOccurred())
			refresh(api, monv1.StatusUp)
			createMonitor("gone", "Gone", "https://gone.example.com/")
			Eventually(func(g Gomega) {
				var page monv1.StatusPage
				g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "shop"}, &page)).To(Succeed())
				g.Expect(page.Status.OverallStatus).To(Equal("operational"))
				g.Expect(page.Status.Monitors[0]).To(Equal(monv1.StatusPageMonitorState{Name: "api", Status: "up"}))
				g.Expect(page.Status.Monitors[3].Status).To(Equal("pending"))
				g.Expect(meta.IsStatusConditionTrue(page.Status.Conditions, monv1.ConditionReady)).To(BeTrue())
			}).Should(Succeed())
			_, err = db.InsertChecks(ctx, []store.Check{check(web, time.Now(), store.StatusDegraded)})
			Expect(err).NotTo(HaveOccurred())
			refresh(web, monv1.StatusDegraded)
			Eventually(func(g Gomega) {
				var page monv1.StatusPage
				g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "shop"}, &page)).To(Succeed())
				g.Expect(page.Status.OverallStatus).To(Equal("degraded"))
			}).Should(Succeed())
		})

		It("shows the Monitors that join it by label after its list, and lets them leave", func() {
			label := func(m *monv1.Monitor, page, section string) {
				Expect(k8s.Get(ctx, client.ObjectKeyFromObject(m), m)).To(Succeed())
				before := m.DeepCopy()
				if page == "" {
					delete(m.Labels, monv1.StatusPageLabel)
					delete(m.Annotations, monv1.StatusPageSectionAnnotation)
				} else {
					m.Labels = map[string]string{monv1.StatusPageLabel: page}
					if m.Annotations == nil {
						m.Annotations = map[string]string{}
					}
					m.Annotations[monv1.StatusPageSectionAnnotation] = section
				}
				Expect(k8s.Patch(ctx, m, client.MergeFrom(before))).To(Succeed())
			}
			search := createMonitor("search", "Search", "https://search.example.com/")
			label(search, "shop", "Discovered")
			label(api, "shop", "Discovered") // listed by hand too: shown once, where the list puts it
			other := createMonitor("other", "Other", "https://other.example.com/")
			label(other, "hidden", "") // another page's
			names := func(d statuspage.Document) map[string][]string {
				out := map[string][]string{}
				for _, s := range d.Sections {
					for _, m := range s.Monitors {
						out[s.Name] = append(out[s.Name], m.Name)
					}
				}
				return out
			}
			Eventually(func(g Gomega) {
				var page monv1.StatusPage
				g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "shop"}, &page)).To(Succeed())
				g.Expect(page.Status.Monitors).To(HaveLen(5))
				g.Expect(page.Status.Monitors[4]).To(Equal(monv1.StatusPageMonitorState{Name: "search", Status: "pending"}))
				g.Expect(page.Spec.Monitors).To(HaveLen(4), "the page's own list is not written")
				expire()
				d := decode[statuspage.Document](serveStatus(request(http.MethodGet, "/status/shop"), "shop", "").Body)
				g.Expect(names(d)).To(Equal(map[string][]string{"Backend": {"API", "Database"}, "Frontend": {"Storefront", "Gone"}, "Discovered": {"Search"}}))
			}).Should(Succeed())

			label(search, "", "")
			Eventually(func(g Gomega) {
				var page monv1.StatusPage
				g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "shop"}, &page)).To(Succeed())
				g.Expect(page.Status.Monitors).To(HaveLen(4))
				expire()
				d := decode[statuspage.Document](serveStatus(request(http.MethodGet, "/status/shop"), "shop", "").Body)
				g.Expect(names(d)).NotTo(HaveKey("Discovered"))
			}).Should(Succeed())
		})
	})
})

// fakeThirdParty is a ThirdPartySource with fixed services that records the
// pages asked for.
type fakeThirdParty struct {
	mu       sync.Mutex
	pages    []string
	services []statuspage.PublicService
}

func (f *fakeThirdParty) PageServices(_ context.Context, pageUID string) ([]statuspage.PublicService, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pages = append(f.pages, pageUID)
	return f.services, nil
}
