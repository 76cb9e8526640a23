package statuspage_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/go-jose/go-jose/v4"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/oidcdev"
	"github.com/uptime-operator/uptime-operator/internal/statuspage"
	"github.com/uptime-operator/uptime-operator/internal/testutil"
)

// The single sign-on fixture: a status page server on loopback (rpServer,
// serving whichever Public rp holds) and a real OpenID provider (oidcdev,
// zitadel/oidc's OP) that redirects back to it. Both start before the
// suite's manager, which is configured with the provider, so admission
// accepts sso pages.
const (
	ssoClientID     = "status-pages"
	ssoClientSecret = "client-secret-for-tests"
	// ssoTokenLifetime is the provider's ID token lifetime: sessions end
	// with it.
	ssoTokenLifetime = 5 * time.Minute
)

var (
	rpServer *httptest.Server
	rp       atomic.Pointer[statuspage.Public]
	op       *oidcdev.Provider
	// forge, when set, rewrites the ID token of the provider's token
	// responses.
	forge atomic.Pointer[func(idToken string) string]
)

// startSSOFixture starts the status page server and the provider and
// returns the provider settings for the manager.
func startSSOFixture() statuspage.OIDC {
	rpServer = httptest.NewServer(http.HandlerFunc(serveRP))
	var err error
	op, err = oidcdev.Start(oidcdev.Options{
		ClientID: ssoClientID, ClientSecret: ssoClientSecret,
		RedirectURIs:    []string{rpServer.URL + statuspage.SSOCallbackPath},
		IDTokenLifetime: ssoTokenLifetime,
		Users: []oidcdev.User{
			{Username: "alice", Password: "alice-password", Email: "alice@example.com", EmailVerified: true, Name: "Alice", Groups: []string{"sre"}},
			{Username: "bob", Password: "bob-password", Email: "bob@other.example", EmailVerified: true, Name: "Bob", Groups: []string{"sales"}},
		},
		Wrap: forgeTokens,
	})
	Expect(err).NotTo(HaveOccurred())
	return statuspage.OIDC{IssuerURL: op.Issuer, ClientID: ssoClientID, ClientSecret: ssoClientSecret}
}

func stopSSOFixture() {
	if op != nil {
		Expect(op.Close()).To(Succeed())
	}
	if rpServer != nil {
		rpServer.Close()
	}
}

// serveRP routes the public page paths to the current Public, as the REST
// core does.
func serveRP(w http.ResponseWriter, r *http.Request) {
	p := rp.Load()
	path := r.URL.Path
	switch {
	case path == statuspage.SSOCallbackPath:
		p.ServeSSOCallback(w, r)
	case strings.HasPrefix(path, "/status/"):
		slug, rest, _ := strings.Cut(strings.TrimPrefix(path, "/status/"), "/")
		p.ServeStatus(w, r, slug, rest)
	case strings.HasPrefix(path, "/s/"):
		slug, rest, _ := strings.Cut(strings.TrimPrefix(path, "/s/"), "/")
		switch rest {
		case "":
			p.ServeHTML(w, r, slug)
		case "sso":
			p.ServeSSOStart(w, r, slug)
		case "logout":
			p.ServeLogout(w, r, slug)
		case "login":
			p.ServeLogin(w, r, slug)
		default:
			http.NotFound(w, r)
		}
	default:
		http.NotFound(w, r)
	}
}

// forgeTokens wraps the provider: with forge set, the id_token of a token
// response is replaced by forge's result.
func forgeTokens(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f := forge.Load()
		if f == nil || r.URL.Path != "/oauth/token" {
			next.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		var body map[string]any
		if rec.Code == http.StatusOK && json.Unmarshal(rec.Body.Bytes(), &body) == nil {
			if raw, ok := body["id_token"].(string); ok {
				body["id_token"] = (*f)(raw)
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rec.Code)
		_ = json.NewEncoder(w).Encode(body)
	})
}

// newRP makes a Public for the fixture (a replica of its own: own clock,
// own record of used sign-ins), with the provider cfg.
func newRP(clk *clocktesting.FakeClock, cfg statuspage.OIDC) *statuspage.Public {
	return &statuspage.Public{Reader: cached, Secrets: k8s, Store: db, Clock: clk, BaseURL: rpServer.URL,
		OIDC: cfg, SessionKey: []byte("sso-suite-session-key-0123456789")}
}

// browserClient is a cookie-keeping HTTP client that stops at the
// callback to the status pages, so tests can use (and misuse) it.
func browserClient() *http.Client {
	jar, err := cookiejar.New(nil)
	Expect(err).NotTo(HaveOccurred())
	return &http.Client{Jar: jar, Timeout: 30 * time.Second, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if req.URL.Path == statuspage.SSOCallbackPath {
			return http.ErrUseLastResponse
		}
		return nil
	}}
}

var loginFormID = regexp.MustCompile(`name="id" value="([^"]+)"`)

// signInAtProvider opens the page, follows it to the provider's form, signs
// in there and returns the callback URL the provider sends the browser to.
func signInAtProvider(c *http.Client, slug, user, password string) *url.URL {
	resp, err := c.Get(rpServer.URL + "/s/" + slug)
	Expect(err).NotTo(HaveOccurred())
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	Expect(resp.Request.URL.String()).To(HavePrefix(op.Issuer+"/login/username"), "the page redirects to the provider's login form")
	m := loginFormID.FindSubmatch(body)
	Expect(m).NotTo(BeNil(), string(body))
	resp, err = c.PostForm(op.Issuer+"/login/username", url.Values{"id": {string(m[1])}, "username": {user}, "password": {password}})
	Expect(err).NotTo(HaveOccurred())
	resp.Body.Close()
	Expect(resp.StatusCode).To(Equal(http.StatusFound))
	cb, err := resp.Location()
	Expect(err).NotTo(HaveOccurred())
	Expect(cb.Path).To(Equal(statuspage.SSOCallbackPath))
	Expect(cb.Query().Get("code")).NotTo(BeEmpty())
	return cb
}

// get fetches a status page URL with c, not following redirects.
func get(c *http.Client, target string) (*http.Response, string) {
	nc := *c
	nc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := nc.Get(target)
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// resign re-signs an ID token's claims, changed by edit, with a key of the
// attacker's.
func resign(raw string, edit func(map[string]any)) string {
	parts := strings.Split(raw, ".")
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	Expect(err).NotTo(HaveOccurred())
	var claims map[string]any
	Expect(json.Unmarshal(payload, &claims)).To(Succeed())
	edit(claims)
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	Expect(err).NotTo(HaveOccurred())
	hdr, _ := base64.RawURLEncoding.DecodeString(parts[0])
	var h map[string]any
	Expect(json.Unmarshal(hdr, &h)).To(Succeed())
	kid, _ := h["kid"].(string)
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key}, (&jose.SignerOptions{}).WithHeader("kid", kid))
	Expect(err).NotTo(HaveOccurred())
	body, _ := json.Marshal(claims)
	jws, err := signer.Sign(body)
	Expect(err).NotTo(HaveOccurred())
	out, err := jws.CompactSerialize()
	Expect(err).NotTo(HaveOccurred())
	return out
}

// tamper changes the claims of an ID token and keeps its signature.
func tamper(raw string, edit func(map[string]any)) string {
	parts := strings.Split(raw, ".")
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var claims map[string]any
	Expect(json.Unmarshal(payload, &claims)).To(Succeed())
	edit(claims)
	body, _ := json.Marshal(claims)
	return parts[0] + "." + base64.RawURLEncoding.EncodeToString(body) + "." + parts[2]
}

var _ = Describe("Single sign-on status pages", Ordered, func() {
	const (
		ssoNS = "intranet-team"
		slug  = "intranet"
	)
	var sclk *clocktesting.FakeClock
	var cfg statuspage.OIDC

	setRevokedAt := func(at time.Time) {
		var page monv1.StatusPage
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ssoNS, Name: slug}, &page)).To(Succeed())
		page.Spec.Access.SessionsRevokedAt = &metav1.Time{Time: at}
		Expect(k8s.Update(ctx, &page)).To(Succeed())
		Eventually(func(g Gomega) {
			var c monv1.StatusPage
			g.Expect(cached.Get(ctx, client.ObjectKeyFromObject(&page), &c)).To(Succeed())
			g.Expect(c.Spec.Access.SessionsRevokedAt).NotTo(BeNil())
			g.Expect(c.Spec.Access.SessionsRevokedAt.Time.Equal(at.Truncate(time.Second))).To(BeTrue())
		}).Should(Succeed())
	}

	BeforeAll(func() {
		cfg = statuspage.OIDC{IssuerURL: op.Issuer, ClientID: ssoClientID, ClientSecret: ssoClientSecret}
		sclk = clocktesting.NewFakeClock(time.Now())
		rp.Store(newRP(sclk, cfg))
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ssoNS}})).To(Succeed())
		page := &monv1.StatusPage{
			ObjectMeta: metav1.ObjectMeta{Namespace: ssoNS, Name: slug},
			Spec: monv1.StatusPageSpec{Title: "Intranet", IsPublic: true,
				Access: &monv1.StatusPageAccess{Mode: monv1.AccessSSO, SSO: &monv1.StatusPageSSO{
					AllowedGroups: []string{"sre"}, AllowedEmailDomains: []string{"ops.example.com"}}}},
		}
		Expect(k8s.Create(ctx, page)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(cached.Get(ctx, client.ObjectKeyFromObject(page), &monv1.StatusPage{})).To(Succeed())
		}).Should(Succeed())
	})

	// The provider's tokens carry real time: each spec starts the pages'
	// clock there (specs move it to expire tokens and sessions).
	BeforeEach(func() { sclk.SetTime(time.Now()) })

	It("signs an allowed user in with the provider in headless Chromium; revoke-sessions signs them out", func() {
		chromium := testutil.Chromium(GinkgoT())
		actx, cancelAlloc := chromedp.NewExecAllocator(ctx, chromedp.ExecPath(chromium),
			chromedp.Flag("headless", true), chromedp.Flag("no-sandbox", true), chromedp.Flag("disable-gpu", true),
			chromedp.Flag("disable-quic", true), chromedp.Flag("no-first-run", true),
			chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
			chromedp.Flag("disable-sync", true), chromedp.Flag("disable-dev-shm-usage", true),
			chromedp.UserDataDir(GinkgoT().TempDir()))
		defer cancelAlloc()
		bctx, cancelBrowser := chromedp.NewContext(actx)
		defer cancelBrowser()
		// The first run starts the browser: without a timeout (see Run).
		Expect(chromedp.Do(bctx, chromedp.Navigate("about:blank"))).To(Succeed())
		tctx, cancel := context.WithTimeout(bctx, 90*time.Second)
		defer cancel()
		location := func() string {
			at, err := chromedp.Run(tctx, chromedp.Location())
			Expect(err).NotTo(HaveOccurred())
			return at
		}
		text := func(sel string) string {
			t, err := chromedp.Run(tctx, chromedp.Text(chromedp.CSS(sel)))
			Expect(err).NotTo(HaveOccurred())
			return t
		}
		signIn := func(user, password string) {
			Expect(chromedp.Do(tctx,
				chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
					_, err := cdp.Call(ctx, t, network.ClearBrowserCookies, cdp.Empty{})
					return err
				}),
				chromedp.Navigate(rpServer.URL+"/s/"+slug),
				chromedp.WaitVisible(chromedp.CSS("#username")),
			)).To(Succeed())
			Expect(location()).To(HavePrefix(op.Issuer+"/login/username"), "the page sends the visitor to the provider's login form")
			Expect(chromedp.Do(tctx,
				chromedp.SendKeys(chromedp.CSS("#username"), user),
				chromedp.SendKeys(chromedp.CSS("#password"), password),
				chromedp.Click(chromedp.CSS(`button[type="submit"]`)),
			)).To(Succeed())
		}

		By("an allowed user (group sre) sees the page")
		signIn("alice", "alice-password")
		Expect(chromedp.Do(tctx, chromedp.WaitVisible(chromedp.CSS("[data-signed-in-as]")))).To(Succeed())
		Expect(location()).To(Equal(rpServer.URL + "/s/" + slug))
		Expect(text("h1")).To(Equal("Intranet"))
		Expect(text("[data-signed-in-as]")).To(Equal("alice@example.com"))
		status, err := chromedp.Run(tctx, chromedp.Evaluate[int](`fetch("/status/`+slug+`").then(r => r.status)`, chromedp.EvalAwaitPromise))
		Expect(err).NotTo(HaveOccurred())
		Expect(status).To(Equal(http.StatusOK), "the JSON endpoint works for the signed-in viewer")

		By("revoke-sessions signs the user out: the page sends them to the provider again")
		setRevokedAt(sclk.Now().Add(time.Second))
		sclk.Step(2 * time.Second)
		Expect(chromedp.Do(tctx,
			chromedp.Navigate(rpServer.URL+"/s/"+slug),
			chromedp.WaitVisible(chromedp.CSS("#username")),
		)).To(Succeed())
		Expect(location()).To(HavePrefix(op.Issuer + "/login/username"))

		By("a user outside the allowed set gets the 403 page naming them, not a loop")
		signIn("bob", "bob-password")
		Expect(chromedp.Do(tctx, chromedp.WaitVisible(chromedp.CSS("#message-heading")))).To(Succeed())
		Expect(location()).To(HavePrefix(rpServer.URL + statuspage.SSOCallbackPath))
		main := text("main")
		Expect(main).To(ContainSubstring("No access to this page"))
		Expect(main).To(ContainSubstring("You are signed in as bob@other.example"))
		Expect(main).To(ContainSubstring("does not have access"))
		Expect(main).To(ContainSubstring("Sign in with another account"))
	})

	It("serves every endpoint but the feed to a signed-in viewer, until sign-out or the ID token's expiry", func() {
		c := browserClient()
		cb := signInAtProvider(c, slug, "alice", "alice-password")
		resp, _ := get(c, cb.String())
		Expect(resp.StatusCode).To(Equal(http.StatusSeeOther))
		Expect(resp.Header.Get("Location")).To(Equal("/s/" + slug))
		var sess *http.Cookie
		for _, ck := range resp.Cookies() {
			if ck.Name == "uo_status_"+slug {
				sess = ck
			}
		}
		Expect(sess).NotTo(BeNil())
		Expect(sess.HttpOnly).To(BeTrue())
		Expect(sess.SameSite).To(Equal(http.SameSiteLaxMode))
		Expect(sess.Expires).To(BeTemporally("<=", time.Now().Add(ssoTokenLifetime+time.Minute)), "no longer than the ID token")
		Expect(len(sess.Value)).To(BeNumerically("<", 600), "the cookie holds no token")

		resp, body := get(c, rpServer.URL+"/s/"+slug)
		Expect(resp.StatusCode).To(Equal(http.StatusOK))
		Expect(body).To(ContainSubstring("<h1>Intranet</h1>"))
		Expect(resp.Header.Get("Cache-Control")).To(Equal("private, no-store"))
		for _, rest := range []string{"", "/history", "/badge.svg"} {
			resp, _ = get(c, rpServer.URL+"/status/"+slug+rest)
			Expect(resp.StatusCode).To(Equal(http.StatusOK), rest)
		}
		resp, _ = get(c, rpServer.URL+"/status/"+slug+"/feed.xml")
		Expect(resp.StatusCode).To(Equal(http.StatusNotFound), "private pages have no feed")

		By("without the session the JSON is refused")
		resp, _ = get(&http.Client{}, rpServer.URL+"/status/"+slug)
		Expect(resp.StatusCode).To(Equal(http.StatusUnauthorized))

		By("the session ends with the ID token")
		sclk.Step(ssoTokenLifetime + time.Second)
		resp, _ = get(c, rpServer.URL+"/s/"+slug)
		Expect(resp.StatusCode).To(Equal(http.StatusSeeOther))
		Expect(resp.Header.Get("Location")).To(HavePrefix(op.Issuer))

		By("sign-out ends the session")
		sclk.SetTime(time.Now()) // the ID token is valid again: so is the session
		resp, _ = get(c, rpServer.URL+"/s/"+slug)
		Expect(resp.StatusCode).To(Equal(http.StatusOK))
		out, err := c.Post(rpServer.URL+"/s/"+slug+"/logout", "application/x-www-form-urlencoded", nil)
		Expect(err).NotTo(HaveOccurred())
		out.Body.Close()
		Expect(out.StatusCode).To(Equal(http.StatusOK))
		resp, _ = get(c, rpServer.URL+"/s/"+slug)
		Expect(resp.StatusCode).To(Equal(http.StatusSeeOther))
	})

	It("refuses a wrong state and a replayed code", func() {
		c := browserClient()
		cb := signInAtProvider(c, slug, "alice", "alice-password")

		By("a wrong state")
		wrong := *cb
		q := wrong.Query()
		q.Set("state", strings.Repeat("A", len(q.Get("state"))))
		wrong.RawQuery = q.Encode()
		resp, body := get(c, wrong.String())
		Expect(resp.StatusCode).To(Equal(http.StatusBadRequest))
		Expect(body).To(ContainSubstring("Sign-in not recognised"))
		Expect(resp.Cookies()).NotTo(ContainElement(HaveField("Name", "uo_status_"+slug)))

		By("the right state signs in once")
		u, _ := url.Parse(rpServer.URL)
		stateCookies := c.Jar.Cookies(&url.URL{Scheme: "http", Host: u.Host, Path: statuspage.SSOCallbackPath})
		Expect(stateCookies).NotTo(BeEmpty())
		resp, _ = get(c, cb.String())
		Expect(resp.StatusCode).To(Equal(http.StatusSeeOther))

		By("the same callback again, with the state cookie kept, is refused")
		replay := browserClient()
		replay.Jar.SetCookies(&url.URL{Scheme: "http", Host: u.Host, Path: statuspage.SSOCallbackPath}, stateCookies)
		resp, body = get(replay, cb.String())
		Expect(resp.StatusCode).To(Equal(http.StatusBadRequest))
		Expect(body).To(ContainSubstring("already used"))

		By("another replica, which has not seen the state, is refused by the provider (the code is spent)")
		rp.Store(newRP(sclk, cfg))
		replay = browserClient()
		replay.Jar.SetCookies(&url.URL{Scheme: "http", Host: u.Host, Path: statuspage.SSOCallbackPath}, stateCookies)
		resp, body = get(replay, cb.String())
		Expect(resp.StatusCode).To(Equal(http.StatusUnauthorized))
		Expect(body).To(ContainSubstring("could not be verified"))
		Expect(resp.Cookies()).NotTo(ContainElement(HaveField("Name", "uo_status_"+slug)))
	})

	It("refuses forged, tampered and expired ID tokens", func() {
		DeferCleanup(func() { forge.Store(nil) })
		for name, f := range map[string]func(string) string{
			"signed with another key": func(raw string) string { return resign(raw, func(map[string]any) {}) },
			"claims changed": func(raw string) string {
				return tamper(raw, func(c map[string]any) { c["email"] = "root@ops.example.com" })
			},
			"another audience": func(raw string) string { return resign(raw, func(c map[string]any) { c["aud"] = "someone-else" }) },
			"unsigned (alg none)": func(raw string) string {
				parts := strings.Split(raw, ".")
				return base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none"}`)) + "." + parts[1] + "."
			},
		} {
			By(name)
			forge.Store(&f)
			c := browserClient()
			cb := signInAtProvider(c, slug, "bob", "bob-password")
			resp, body := get(c, cb.String())
			Expect(resp.StatusCode).To(Equal(http.StatusUnauthorized), name)
			Expect(body).To(ContainSubstring("could not be verified"), name)
			Expect(resp.Cookies()).NotTo(ContainElement(HaveField("Name", "uo_status_"+slug)), name)
		}
		forge.Store(nil)

		By("an ID token that expired before the callback")
		c := browserClient()
		cb := signInAtProvider(c, slug, "alice", "alice-password")
		sclk.Step(ssoTokenLifetime + time.Minute) // the sign-in itself stays valid for 10 minutes
		resp, body := get(c, cb.String())
		Expect(resp.StatusCode).To(Equal(http.StatusUnauthorized))
		Expect(body).To(ContainSubstring("could not be verified"))
	})

	It("answers a clear 503, never the page, when the provider is down or not configured", func() {
		down := httptest.NewServer(http.NotFoundHandler())
		downURL := down.URL
		down.Close()
		for name, c := range map[string]statuspage.OIDC{
			"down":           {IssuerURL: downURL, ClientID: ssoClientID},
			"not configured": {},
		} {
			rp.Store(newRP(sclk, c))
			resp, body := get(browserClient(), rpServer.URL+"/s/"+slug)
			Expect(resp.StatusCode).To(Equal(http.StatusServiceUnavailable), name)
			Expect(body).To(ContainSubstring("Sign-in unavailable"), name)
			Expect(body).NotTo(ContainSubstring("data-json"), name)
			resp, _ = get(browserClient(), rpServer.URL+"/status/"+slug)
			Expect(resp.StatusCode).To(Equal(http.StatusUnauthorized), name)
		}
		rp.Store(newRP(sclk, cfg))
		Expect(statuspage.SSOUnavailable(statuspage.OIDC{}, rpServer.URL)).To(ContainSubstring("--oidc-issuer-url"))
		Expect(statuspage.SSOUnavailable(statuspage.OIDC{IssuerURL: op.Issuer}, rpServer.URL)).To(ContainSubstring("--oidc-client-id"))
		Expect(statuspage.SSOUnavailable(cfg, "")).To(ContainSubstring("--public-url"))
		Expect(statuspage.SSOUnavailable(cfg, rpServer.URL)).To(BeEmpty())
	})

	It("signs everyone out when the page's sso rules change", func() {
		c := browserClient()
		cb := signInAtProvider(c, slug, "alice", "alice-password")
		get(c, cb.String())
		resp, _ := get(c, rpServer.URL+"/s/"+slug)
		Expect(resp.StatusCode).To(Equal(http.StatusOK))
		var page monv1.StatusPage
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ssoNS, Name: slug}, &page)).To(Succeed())
		page.Spec.Access.SSO.AllowedGroups = []string{"sre", "support"}
		Expect(k8s.Update(ctx, &page)).To(Succeed())
		Eventually(func() int {
			resp, _ := get(c, rpServer.URL+"/s/"+slug)
			return resp.StatusCode
		}).Should(Equal(http.StatusSeeOther))
	})
})
