package statuspage

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
	ctrl "sigs.k8s.io/controller-runtime"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/trust"
)

// Single sign-on (sso pages): the authorization-code flow of OpenID Connect
// with PKCE, state and nonce, against one provider configured for the
// install. The manager keeps nothing of it: the flow's secrets (state,
// nonce, PKCE verifier) travel in a signed, short-lived cookie of the
// visitor's browser, and a successful sign-in ends in the page session that
// password pages use. Tokens are read once and dropped.

// SSOCallbackPath is the redirect URI's path: <public URL>/sso/callback,
// the one URL to register with the provider for every page.
const SSOCallbackPath = "/sso/callback"

const (
	// ssoStateCookiePrefix + a prefix of the state names a sign-in's cookie,
	// so sign-ins started in several tabs do not overwrite each other.
	ssoStateCookiePrefix = "uo_sso_"
	// ssoStateTTL is how long a started sign-in may take at the provider.
	ssoStateTTL = 10 * time.Minute
	// providerRetry is how long a failed discovery is remembered before
	// the provider is asked again (a down provider is not asked on every
	// page view).
	providerRetry = 5 * time.Second
	// providerTimeout bounds each request to the provider.
	providerTimeout = 10 * time.Second
	// defaultGroupsClaim is the ID token claim with the user's groups.
	defaultGroupsClaim = "groups"
)

// OIDC is the install's OpenID Connect provider, which sso pages sign in
// with (the manager's --oidc-* flags, the chart's oidc values).
type OIDC struct {
	// IssuerURL is the provider's issuer; its discovery document is read
	// from IssuerURL/.well-known/openid-configuration.
	IssuerURL string
	// ClientID is the client registered at the provider, with the redirect
	// URI <public URL>/sso/callback.
	ClientID string
	// ClientSecret authenticates the client at the token endpoint; empty
	// for a public client (PKCE alone).
	ClientSecret string
	// Scopes are requested besides openid; DefaultOIDCScopes when empty.
	Scopes []string
	// GroupsClaim is the ID token claim that lists the user's groups
	// ("groups" when empty).
	GroupsClaim string
	// HTTPClient makes the requests to the provider; nil: a client that
	// trusts the system and --trusted-ca-file roots, with a timeout.
	HTTPClient *http.Client
}

// DefaultOIDCScopes are the scopes requested when OIDC.Scopes is empty.
var DefaultOIDCScopes = []string{"email", "profile", "groups"}

// SSOUnavailable names the setting that sso pages lack on an install with
// the provider cfg and the public URL publicURL, or returns "" when sso
// pages can be served. Admission and the REST API refuse sso pages with
// this message.
func SSOUnavailable(cfg OIDC, publicURL string) string {
	var missing []string
	if cfg.IssuerURL == "" {
		missing = append(missing, "the manager flag --oidc-issuer-url (Helm value oidc.issuerURL)")
	}
	if cfg.ClientID == "" {
		missing = append(missing, "the manager flag --oidc-client-id (Helm value oidc.clientID)")
	}
	if publicURL == "" {
		missing = append(missing, "the manager flag --public-url (Helm value publicURL), which the redirect URI is made from")
	}
	if len(missing) == 0 {
		return ""
	}
	return "single sign-on needs an OpenID Connect provider configured for the install: set " + strings.Join(missing, " and ")
}

// ssoProvider is the discovered provider, found on first use and kept; a
// failure is kept for providerRetry.
type ssoProvider struct {
	mu       sync.Mutex
	provider *oidc.Provider
	failed   error
	failedAt time.Time
}

func (c *OIDC) httpClient() *http.Client {
	if c.HTTPClient != nil {
		return c.HTTPClient
	}
	return &http.Client{Timeout: providerTimeout, Transport: &http.Transport{
		Proxy: http.ProxyFromEnvironment, TLSClientConfig: trust.ClientConfig(), ForceAttemptHTTP2: true,
		TLSHandshakeTimeout: providerTimeout, ResponseHeaderTimeout: providerTimeout,
	}}
}

func (c *OIDC) groupsClaim() string {
	if c.GroupsClaim == "" {
		return defaultGroupsClaim
	}
	return c.GroupsClaim
}

// errSSOUnconfigured means the install has no provider for sso pages.
var errSSOUnconfigured = errors.New("single sign-on is not configured")

// provider returns the discovered provider and the OAuth 2.0 client of the
// flow.
func (p *Public) provider() (*oidc.Provider, *oauth2.Config, error) {
	if SSOUnavailable(p.OIDC, p.BaseURL) != "" {
		return nil, nil, errSSOUnconfigured
	}
	s := &p.sso
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.provider == nil {
		if s.failed != nil && p.now().Sub(s.failedAt) < providerRetry {
			return nil, nil, s.failed
		}
		// The provider keeps the context's client for its key set, and
		// outlives the request: not the request's context.
		dctx, cancel := context.WithTimeout(oidc.ClientContext(context.Background(), p.OIDC.httpClient()), providerTimeout)
		defer cancel()
		prov, err := oidc.NewProvider(dctx, p.OIDC.IssuerURL)
		if err != nil {
			s.failed, s.failedAt = fmt.Errorf("discover the OpenID provider %s: %w", p.OIDC.IssuerURL, err), p.now()
			return nil, nil, s.failed
		}
		s.provider, s.failed = prov, nil
	}
	scopes := p.OIDC.Scopes
	if len(scopes) == 0 {
		scopes = DefaultOIDCScopes
	}
	cfg := &oauth2.Config{
		ClientID:     p.OIDC.ClientID,
		ClientSecret: p.OIDC.ClientSecret,
		Endpoint:     s.provider.Endpoint(),
		RedirectURL:  strings.TrimSuffix(p.BaseURL, "/") + SSOCallbackPath,
		Scopes:       append([]string{oidc.ScopeOpenID}, slices.DeleteFunc(slices.Clone(scopes), func(s string) bool { return s == oidc.ScopeOpenID })...),
	}
	return s.provider, cfg, nil
}

// ssoState is the signed content of a sign-in's cookie: what the callback
// needs to finish it and check that this browser started it.
type ssoState struct {
	State    string `json:"s"`
	Nonce    string `json:"n"`
	Verifier string `json:"v"`
	// Page is the page's UID, Slug its slug at the start.
	Page string `json:"p"`
	Slug string `json:"g"`
	// IssuedAt is in Unix milliseconds.
	IssuedAt int64 `json:"i"`
}

func randomToken() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("statuspage: read random: %v", err))
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// signed encodes v with an HMAC under the session key and purpose.
func (p *Public) signed(purpose string, v any) string {
	payload, _ := json.Marshal(v)
	enc := base64.RawURLEncoding
	return enc.EncodeToString(payload) + "." + enc.EncodeToString(p.mac(purpose, payload))
}

// unsigned decodes a value of signed into v, reporting whether its MAC
// under purpose is good.
func (p *Public) unsigned(purpose, value string, v any) bool {
	body, sig, ok := strings.Cut(value, ".")
	if !ok {
		return false
	}
	enc := base64.RawURLEncoding
	payload, err1 := enc.DecodeString(body)
	mac, err2 := enc.DecodeString(sig)
	if err1 != nil || err2 != nil || !hmac.Equal(mac, p.mac(purpose, payload)) {
		return false
	}
	return json.Unmarshal(payload, v) == nil
}

// ssoStateCookie names the cookie of the sign-in with this state.
func ssoStateCookie(state string) string {
	if len(state) > 16 {
		state = state[:16]
	}
	return ssoStateCookiePrefix + state
}

// startSSO sends the visitor to the provider's sign-in. A page served on a
// custom domain signs in at the public URL (the redirect URI's host, where
// the callback can read the sign-in's cookie).
func (p *Public) startSSO(w http.ResponseWriter, r *http.Request, page *monv1.StatusPage, prompt string) {
	if pub, err := url.Parse(p.BaseURL); err == nil && pub.Host != "" && !strings.EqualFold(hostOnly(r.Host), hostOnly(pub.Host)) {
		http.Redirect(w, r, strings.TrimSuffix(p.BaseURL, "/")+"/s/"+Slug(page)+"/sso", http.StatusSeeOther)
		return
	}
	_, cfg, err := p.provider()
	if err != nil {
		p.ssoUnavailable(w, r, page, err)
		return
	}
	now := p.now()
	st := ssoState{State: randomToken(), Nonce: randomToken(), Verifier: oauth2.GenerateVerifier(),
		Page: string(page.UID), Slug: Slug(page), IssuedAt: now.UnixMilli()}
	http.SetCookie(w, &http.Cookie{
		Name:     ssoStateCookie(st.State),
		Value:    p.signed("statuspage-sso-state", st),
		Path:     SSOCallbackPath,
		Expires:  now.Add(ssoStateTTL),
		MaxAge:   int(ssoStateTTL / time.Second),
		HttpOnly: true,
		Secure:   p.secureCookies(r),
		// Lax: the provider's redirect back is a top-level GET from
		// another site.
		SameSite: http.SameSiteLaxMode,
	})
	opts := []oauth2.AuthCodeOption{oidc.Nonce(st.Nonce), oauth2.S256ChallengeOption(st.Verifier)}
	if prompt != "" {
		opts = append(opts, oauth2.SetAuthURLParam("prompt", prompt))
	}
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, cfg.AuthCodeURL(st.State, opts...), http.StatusSeeOther)
}

// ssoUnavailable answers a sign-in that cannot start or finish because of
// the install's provider: 503 with a page that says so, and a log line for
// the operator. The page itself is never shown.
func (p *Public) ssoUnavailable(w http.ResponseWriter, r *http.Request, page *monv1.StatusPage, err error) {
	log := ctrl.LoggerFrom(r.Context())
	text := "Sign-in is unavailable: the identity provider could not be reached. Try again in a few minutes; if it persists, tell the page owner."
	if errors.Is(err, errSSOUnconfigured) {
		log.Error(err, "status page needs single sign-on but the install has no OpenID provider",
			"page", page.Name, "namespace", page.Namespace, "missing", SSOUnavailable(p.OIDC, p.BaseURL))
		text = "Sign-in is unavailable: single sign-on is not configured on this installation. Tell the page owner."
	} else {
		log.Error(err, "unable to use the OpenID provider for a status page sign-in", "page", page.Name, "namespace", page.Namespace, "issuer", p.OIDC.IssuerURL)
	}
	p.ssoMessage(w, r, page, http.StatusServiceUnavailable, "Sign-in unavailable", text, "", "")
}

// ssoMessage writes the message page of a sign-in; page may be nil when the
// sign-in cannot be tied to a page.
func (p *Public) ssoMessage(w http.ResponseWriter, r *http.Request, page *monv1.StatusPage, code int, heading, text, link, linkText string) {
	w.Header().Set("Cache-Control", "no-store")
	d := &messagePage{Title: "Status", Heading: heading, Text: text, Error: code >= 400,
		Link: link, LinkText: linkText, CSS: pageCSS, Accent: "#0969da", Favicon: defaultFavicon}
	if page != nil {
		d.Title, d.Back = page.Spec.Title, "/s/"+Slug(page)
		if hexColor.MatchString(page.Spec.AccentColor) {
			d.Accent = template.CSS(page.Spec.AccentColor)
		}
	}
	p.render(w, r, "message.html.tmpl", code, d, true)
}

// ServeSSOStart handles GET /s/:slug/sso: a new sign-in at the provider,
// even with a session (the "sign in with another account" link of the
// access-denied page asks the provider to let the visitor choose).
func (p *Public) ServeSSOStart(w http.ResponseWriter, r *http.Request, slug string) {
	page, ok := p.readPage(w, r, slug)
	if !ok {
		return
	}
	if accessMode(page) != monv1.AccessSSO {
		http.Redirect(w, r, "/s/"+Slug(page), http.StatusSeeOther)
		return
	}
	prompt := ""
	if r.URL.Query().Get("prompt") == "select_account" {
		prompt = "select_account"
	}
	p.startSSO(w, r, page, prompt)
}

// usedStates remembers the states of finished sign-ins until they expire,
// so a callback URL (code and state) is honoured once even by a client
// that keeps the deleted cookie. The provider refuses a second use of a
// code too; this replica does not even ask.
type usedStates struct {
	mu   sync.Mutex
	seen map[string]time.Time
}

// use records state and reports whether it was new.
func (u *usedStates) use(state string, now time.Time) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.seen == nil {
		u.seen = map[string]time.Time{}
	}
	if len(u.seen) > 10000 {
		for s, at := range u.seen {
			if now.Sub(at) > ssoStateTTL {
				delete(u.seen, s)
			}
		}
	}
	if _, dup := u.seen[state]; dup {
		return false
	}
	u.seen[state] = now
	return true
}

// ssoClaims are the ID token claims a sign-in reads.
type ssoClaims struct {
	Subject       string `json:"sub"`
	Email         string `json:"email"`
	EmailVerified *bool  `json:"email_verified"`
	Name          string `json:"name"`
	Username      string `json:"preferred_username"`
}

// ssoUser is who signed in, as the access rules see them.
type ssoUser struct {
	Email         string
	EmailVerified bool
	Groups        []string
	// Display names the user on pages: e-mail, else name, else subject.
	Display string
}

// ServeSSOCallback handles GET /sso/callback, where the provider sends the
// visitor back: it checks the state against the sign-in's cookie (once),
// exchanges the code with the PKCE verifier, verifies the ID token with the
// provider's keys and the nonce, and signs the visitor in to the page when
// the page's sso rules allow them (403 with who they are otherwise).
func (p *Public) ServeSSOCallback(w http.ResponseWriter, r *http.Request) {
	p.init()
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		writeError(w, http.StatusMethodNotAllowed, "", "Method not allowed")
		return
	}
	ctx, log := r.Context(), ctrl.LoggerFrom(r.Context())
	q := r.URL.Query()
	state := q.Get("state")
	var st ssoState
	c, err := r.Cookie(ssoStateCookie(state))
	now := p.now()
	if state == "" || err != nil || !p.unsigned("statuspage-sso-state", c.Value, &st) ||
		!hmac.Equal([]byte(st.State), []byte(state)) || now.Sub(time.UnixMilli(st.IssuedAt)) > ssoStateTTL {
		log.V(1).Info("status page sign-in refused: unknown or expired state")
		p.ssoMessage(w, r, nil, http.StatusBadRequest, "Sign-in not recognised",
			"This sign-in was not started in this browser or has expired. Open the status page again to sign in.", "", "")
		return
	}
	// The sign-in's cookie is spent whatever happens next.
	http.SetCookie(w, &http.Cookie{Name: ssoStateCookie(state), Value: "", Path: SSOCallbackPath, MaxAge: -1,
		HttpOnly: true, Secure: p.secureCookies(r), SameSite: http.SameSiteLaxMode})
	pages, err := ListBy(ctx, p.Reader, IndexSlug, st.Slug)
	if err != nil {
		p.internalError(w, r, err)
		return
	}
	page := Owner(pages)
	if page == nil || !page.Spec.IsPublic || string(page.UID) != st.Page {
		p.ssoMessage(w, r, nil, http.StatusNotFound, "Status page not found", "The status page of this sign-in no longer exists.", "", "")
		return
	}
	if accessMode(page) != monv1.AccessSSO {
		http.Redirect(w, r, "/s/"+Slug(page), http.StatusSeeOther)
		return
	}
	if !p.usedStates.use(state, now) {
		log.V(1).Info("status page sign-in refused: state used before", "page", page.Name)
		p.ssoMessage(w, r, page, http.StatusBadRequest, "Sign-in not recognised",
			"This sign-in was already used. Open the status page again to sign in.", "", "")
		return
	}
	if e := q.Get("error"); e != "" {
		log.Info("the OpenID provider refused a status page sign-in", "page", page.Name, "error", e, "description", q.Get("error_description"))
		p.ssoMessage(w, r, page, http.StatusUnauthorized, "Sign-in failed",
			"The identity provider did not sign you in ("+e+"). Try again, or ask the page owner for access.", "/s/"+Slug(page)+"/sso", "Try again")
		return
	}
	prov, cfg, err := p.provider()
	if err != nil {
		p.ssoUnavailable(w, r, page, err)
		return
	}
	user, err := p.exchange(ctx, prov, cfg, q.Get("code"), st)
	if err != nil {
		var refused *signInRefused
		if errors.As(err, &refused) {
			log.Info("status page sign-in refused", "page", page.Name, "namespace", page.Namespace, "reason", err.Error())
			p.ssoMessage(w, r, page, http.StatusUnauthorized, "Sign-in failed",
				"The sign-in could not be verified. Open the status page again to sign in.", "", "")
			return
		}
		p.ssoUnavailable(w, r, page, err)
		return
	}
	if !ssoAllows(page.Spec.Access.SSO, user.ssoUser) {
		log.V(1).Info("status page sign-in of a user without access", "page", page.Name, "namespace", page.Namespace, "user", user.Display)
		p.ssoMessage(w, r, page, http.StatusForbidden, "No access to this page",
			"You are signed in as "+user.Display+", who does not have access to this status page. Ask the page owner for access, or sign in with another account.",
			"/s/"+Slug(page)+"/sso?prompt=select_account", "Sign in with another account")
		return
	}
	p.setSession(w, r, page, session{Page: string(page.UID), Generation: p.ssoGeneration(page),
		IssuedAt: now.UnixMilli(), Expires: user.expires.UnixMilli(), Who: user.Display}, user.expires)
	http.Redirect(w, r, "/s/"+Slug(page), http.StatusSeeOther)
}

// signInRefused is a sign-in refused for what the provider or browser
// sent (a bad code, token or nonce), as opposed to a provider that cannot
// be reached.
type signInRefused struct{ err error }

func (e *signInRefused) Error() string { return e.err.Error() }
func (e *signInRefused) Unwrap() error { return e.err }

// signedInUser is an ssoUser with the end of their ID token's validity.
type signedInUser struct {
	ssoUser
	expires time.Time
}

// exchange redeems the code and returns the verified user. A provider that
// answers with an OAuth error (a spent or unknown code) or a token that
// does not verify is a signInRefused; a provider that cannot be reached is
// another error.
func (p *Public) exchange(ctx context.Context, prov *oidc.Provider, cfg *oauth2.Config, code string, st ssoState) (*signedInUser, error) {
	if code == "" {
		return nil, &signInRefused{errors.New("no authorization code")}
	}
	ctx = oidc.ClientContext(ctx, p.OIDC.httpClient())
	tok, err := cfg.Exchange(ctx, code, oauth2.VerifierOption(st.Verifier))
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.Response != nil && re.Response.StatusCode >= 400 && re.Response.StatusCode < 500 {
			return nil, &signInRefused{fmt.Errorf("redeem the authorization code: %w", err)}
		}
		return nil, fmt.Errorf("redeem the authorization code: %w", err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return nil, &signInRefused{errors.New("the token response has no id_token")}
	}
	return p.verifyIDToken(ctx, prov, raw, st.Nonce)
}

// verifyIDToken checks the ID token's signature with the provider's keys,
// its issuer, audience and expiry (go-oidc), and its nonce.
func (p *Public) verifyIDToken(ctx context.Context, prov *oidc.Provider, raw, nonce string) (*signedInUser, error) {
	idt, err := prov.Verifier(&oidc.Config{ClientID: p.OIDC.ClientID, Now: p.now}).Verify(ctx, raw)
	if err != nil {
		return nil, &signInRefused{fmt.Errorf("verify the ID token: %w", err)}
	}
	if !hmac.Equal([]byte(idt.Nonce), []byte(nonce)) {
		return nil, &signInRefused{errors.New("the ID token's nonce is not the sign-in's")}
	}
	var cl ssoClaims
	var all map[string]json.RawMessage
	if err := idt.Claims(&cl); err != nil {
		return nil, &signInRefused{fmt.Errorf("read the ID token's claims: %w", err)}
	}
	if err := idt.Claims(&all); err != nil {
		return nil, &signInRefused{fmt.Errorf("read the ID token's claims: %w", err)}
	}
	u := &signedInUser{expires: idt.Expiry}
	u.Email = strings.TrimSpace(cl.Email)
	// Providers that do not say whether an address is verified (some
	// enterprise directories) are trusted to have verified it.
	u.EmailVerified = u.Email != "" && (cl.EmailVerified == nil || *cl.EmailVerified)
	u.Groups = claimStrings(all[p.OIDC.groupsClaim()])
	switch {
	case u.Email != "":
		u.Display = u.Email
	case cl.Username != "":
		u.Display = cl.Username
	case cl.Name != "":
		u.Display = cl.Name
	default:
		u.Display = cl.Subject
	}
	if max := p.now().Add(SessionTTL); u.expires.After(max) {
		u.expires = max
	}
	return u, nil
}

// claimStrings reads a claim that is a list of strings or one string.
func claimStrings(raw json.RawMessage) []string {
	if len(raw) == 0 {
		return nil
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return list
	}
	var one string
	if json.Unmarshal(raw, &one) == nil && one != "" {
		return []string{one}
	}
	return nil
}

// ssoAllows reports whether the page's sso rules let the user view it: a
// verified e-mail address that is listed or whose domain is listed, or a
// listed group. No rules allow nobody.
func ssoAllows(rules *monv1.StatusPageSSO, u ssoUser) bool {
	if rules == nil {
		return false
	}
	if u.EmailVerified {
		for _, e := range rules.AllowedEmails {
			if strings.EqualFold(e, u.Email) {
				return true
			}
		}
		if at := strings.LastIndexByte(u.Email, '@'); at >= 0 {
			domain := u.Email[at+1:]
			for _, d := range rules.AllowedEmailDomains {
				if strings.EqualFold(strings.TrimPrefix(d, "@"), domain) {
					return true
				}
			}
		}
	}
	for _, g := range u.Groups {
		if slices.Contains(rules.AllowedGroups, g) {
			return true
		}
	}
	return false
}

// ssoGeneration names a page's sso rules in its sessions, so that changing
// who may view the page signs everyone out (they sign in again, checked
// against the new rules).
func (p *Public) ssoGeneration(page *monv1.StatusPage) string {
	var rules monv1.StatusPageSSO
	if a := page.Spec.Access; a != nil && a.SSO != nil {
		rules = *a.SSO
	}
	b, _ := json.Marshal(rules)
	m := p.mac("statuspage-sso-generation", append([]byte(string(page.UID)+"\x00"), b...))
	return "sso:" + base64.RawURLEncoding.EncodeToString(m[:12])
}
