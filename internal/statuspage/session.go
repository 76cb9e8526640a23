package statuspage

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/ratelimit"
)

// Sessions of private (password) pages.
const (
	// SessionTTL is how long a visitor stays signed in.
	SessionTTL = 30 * 24 * time.Hour
	// sessionCookiePrefix + slug names a page's session cookie.
	sessionCookiePrefix = "uo_status_"
	// maxPasswordBytes bounds the login form.
	maxPasswordBytes = 4096
)

// session is the signed content of a session cookie. It names the page by
// UID, so a later page that reuses the slug does not accept it, and carries
// the page's generation: of its password, so a new password signs everyone
// out, or of its sso rules, so new rules do.
type session struct {
	// Page is the StatusPage's UID.
	Page string `json:"p"`
	// Generation is the password or sso generation at sign-in.
	Generation string `json:"g"`
	// IssuedAt is in Unix milliseconds.
	IssuedAt int64 `json:"i"`
	// Expires, in Unix milliseconds, ends an sso session with the ID
	// token it began with (0: SessionTTL after IssuedAt).
	Expires int64 `json:"e,omitempty"`
	// Who names the signed-in sso user on the page.
	Who string `json:"w,omitempty"`
}

// sessionKey returns the HMAC key, creating a random one on first use.
func (p *Public) sessionKey() []byte {
	p.keyOnce.Do(func() {
		if len(p.SessionKey) > 0 {
			p.key = p.SessionKey
			return
		}
		p.key = make([]byte, 32)
		if _, err := rand.Read(p.key); err != nil {
			panic(fmt.Sprintf("statuspage: read random session key: %v", err))
		}
	})
	return p.key
}

// mac is the HMAC-SHA256 of payload under the session key for one purpose
// (sessions, sign-in state, generations), so a value signed for one is
// never accepted as another.
func (p *Public) mac(purpose string, payload []byte) []byte {
	m := hmac.New(sha256.New, p.sessionKey())
	m.Write([]byte(purpose + "\x00"))
	m.Write(payload)
	return m.Sum(nil)
}

// passwordGeneration names one password of one page without revealing
// anything about it: a keyed digest (an unkeyed hash in a cookie would let a
// visitor guess the password offline). Any change of the password changes
// it.
func (p *Public) passwordGeneration(pageUID string, password []byte) string {
	m := hmac.New(sha256.New, p.sessionKey())
	m.Write([]byte("statuspage-password-generation\x00"))
	m.Write([]byte(pageUID))
	m.Write([]byte{0})
	m.Write(password)
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:12])
}

// currentGeneration is the page's password generation. The password Secret
// is read at most once per cache TTL per page (a page view must not cost an
// API request), so a new password signs visitors out within that time.
func (p *Public) currentGeneration(ctx context.Context, page *monv1.StatusPage) (string, error) {
	uid, now := string(page.UID), p.now()
	p.genMu.Lock()
	e, ok := p.generations[uid]
	p.genMu.Unlock()
	if ok && now.Sub(e.at) < p.cacheTTL() {
		return e.gen, nil
	}
	pw, err := p.password(ctx, page)
	if err != nil {
		return "", err
	}
	gen := p.passwordGeneration(uid, pw)
	p.rememberGeneration(uid, gen, now)
	return gen, nil
}

func (p *Public) rememberGeneration(uid, gen string, now time.Time) {
	p.genMu.Lock()
	defer p.genMu.Unlock()
	if p.generations == nil || len(p.generations) > 10000 {
		p.generations = map[string]generationEntry{}
	}
	p.generations[uid] = generationEntry{gen: gen, at: now}
}

type generationEntry struct {
	gen string
	at  time.Time
}

// issueSession makes the cookie value of a new session for the page at the
// password generation gen.
func (p *Public) issueSession(page *monv1.StatusPage, gen string, now time.Time) string {
	return p.signed(sessionPurpose, session{Page: string(page.UID), Generation: gen, IssuedAt: now.UnixMilli()})
}

// sessionPurpose is the MAC purpose of session cookies.
const sessionPurpose = "statuspage-session"

// readSession returns the session r carries for the page, if its cookie is
// signed with our key and names this page's UID.
func (p *Public) readSession(r *http.Request, page *monv1.StatusPage) (session, bool) {
	var s session
	c, err := r.Cookie(sessionCookiePrefix + Slug(page))
	if err != nil || !p.unsigned(sessionPurpose, c.Value, &s) || s.Page == "" || s.Page != string(page.UID) {
		return session{}, false
	}
	return s, true
}

// validSession reports whether r carries a valid session for the page:
// signed with our key, for this page's UID and current password or sso
// generation, not expired, and not issued before the page's
// sessionsRevokedAt. A password that cannot be read fails closed.
func (p *Public) validSession(r *http.Request, page *monv1.StatusPage, now time.Time) bool {
	s, ok := p.readSession(r, page)
	if !ok {
		return false
	}
	issued := time.UnixMilli(s.IssuedAt)
	if issued.After(now.Add(time.Minute)) || now.Sub(issued) > SessionTTL {
		return false
	}
	if s.Expires != 0 && !now.Before(time.UnixMilli(s.Expires)) {
		return false
	}
	if a := page.Spec.Access; a != nil && a.SessionsRevokedAt != nil && issued.Before(a.SessionsRevokedAt.Time) {
		return false
	}
	var gen string
	switch accessMode(page) {
	case monv1.AccessPassword:
		var err error
		if gen, err = p.currentGeneration(r.Context(), page); err != nil {
			return false
		}
	case monv1.AccessSSO:
		gen = p.ssoGeneration(page)
	default:
		return false
	}
	return hmac.Equal([]byte(gen), []byte(s.Generation))
}

// setSession sets the page's session cookie, valid until expires.
func (p *Public) setSession(w http.ResponseWriter, r *http.Request, page *monv1.StatusPage, s session, expires time.Time) {
	http.SetCookie(w, &http.Cookie{
		Name:     sessionCookiePrefix + Slug(page),
		Value:    p.signed(sessionPurpose, s),
		Path:     "/",
		Expires:  expires,
		MaxAge:   max(1, int(expires.Sub(p.now())/time.Second)),
		HttpOnly: true,
		Secure:   p.secureCookies(r),
		SameSite: http.SameSiteLaxMode,
	})
}

// secureCookies reports whether cookies are marked Secure: when served over
// TLS or when the public URL is https.
func (p *Public) secureCookies(r *http.Request) bool {
	return r.TLS != nil || strings.HasPrefix(p.BaseURL, "https://")
}

// accessMode is the page's effective access mode.
func accessMode(page *monv1.StatusPage) monv1.StatusPageAccessMode {
	if page.Spec.Access == nil || page.Spec.Access.Mode == "" {
		return monv1.AccessPublic
	}
	return page.Spec.Access.Mode
}

// authorized reports whether the request may read the page.
func (p *Public) authorized(r *http.Request, page *monv1.StatusPage) bool {
	switch accessMode(page) {
	case monv1.AccessPublic:
		return true
	case monv1.AccessPassword, monv1.AccessSSO:
		return p.validSession(r, page, p.now())
	}
	return false
}

// errNoPassword means the page's password Secret or key is missing.
var errNoPassword = errors.New("status page password is not configured")

// password reads the page's password from its Secret (trailing newlines
// removed: `kubectl create secret --from-file` keeps them).
func (p *Public) password(ctx context.Context, page *monv1.StatusPage) ([]byte, error) {
	a := page.Spec.Access
	if a == nil || a.PasswordSecretRef == nil {
		return nil, errNoPassword
	}
	var s corev1.Secret
	err := p.secrets().Get(ctx, client.ObjectKey{Namespace: page.Namespace, Name: a.PasswordSecretRef.Name}, &s)
	if apierrors.IsNotFound(err) {
		return nil, errNoPassword
	}
	if err != nil {
		return nil, fmt.Errorf("get password secret %s: %w", a.PasswordSecretRef.Name, err)
	}
	want := []byte(strings.TrimRight(string(s.Data[a.PasswordSecretRef.Key]), "\r\n"))
	if len(want) == 0 {
		return nil, errNoPassword
	}
	return want, nil
}

// checkPassword compares the submitted password with the page's Secret in
// constant time and returns the password's generation on a match.
func (p *Public) checkPassword(ctx context.Context, page *monv1.StatusPage, submitted string) (string, bool, error) {
	want, err := p.password(ctx, page)
	if err != nil {
		return "", false, err
	}
	// Compare digests so the comparison time does not depend on the length
	// of either value.
	got := sha256.Sum256([]byte(submitted))
	exp := sha256.Sum256(want)
	if subtle.ConstantTimeCompare(got[:], exp[:]) != 1 {
		return "", false, nil
	}
	gen := p.passwordGeneration(string(page.UID), want)
	p.rememberGeneration(string(page.UID), gen, p.now())
	return gen, true, nil
}

// Failed sign-ins are limited per client address and per page, in fixed
// windows: the per-address limit slows one guesser, the per-page limit
// bounds guessing from many addresses. Visitors already signed in are not
// affected; new sign-ins to a page under attack wait for the window's end.
const (
	LoginFailuresPerAddress = 10
	LoginFailuresPerPage    = 100
	LoginFailureWindow      = 15 * time.Minute
)

// failureLimits returns the limiters of failed sign-ins, made on first use.
func (p *Public) failureLimits() (byAddr, byPage *ratelimit.Limiter) {
	f := &p.loginFailures
	f.once.Do(func() {
		f.byAddr = ratelimit.New(LoginFailuresPerAddress, LoginFailureWindow)
		f.byPage = ratelimit.New(LoginFailuresPerPage, LoginFailureWindow)
	})
	return f.byAddr, f.byPage
}

// loginBlocked answers 429 when the client address or the page has used up
// its failed sign-ins; it reports whether it did.
func (p *Public) loginBlocked(w http.ResponseWriter, r *http.Request, page *monv1.StatusPage) bool {
	now := p.now()
	byAddr, byPage := p.failureLimits()
	addr, pg := byAddr.Peek(ratelimit.ClientKey(r), now), byPage.Peek(string(page.UID), now)
	if addr.Allowed && pg.Allowed {
		return false
	}
	wait := time.Duration(0)
	for _, d := range []ratelimit.Decision{addr, pg} {
		if !d.Allowed {
			wait = max(wait, d.Reset)
		}
	}
	w.Header().Set("Retry-After", strconv.Itoa(ratelimit.Seconds(wait)))
	writeError(w, http.StatusTooManyRequests, CodeRateLimited, "Too many failed sign-in attempts, please try again later")
	return true
}

func (p *Public) loginFailed(r *http.Request, page *monv1.StatusPage) {
	now := p.now()
	byAddr, byPage := p.failureLimits()
	byAddr.Take(ratelimit.ClientKey(r), now)
	byPage.Take(string(page.UID), now)
}

// ServeLogin handles POST /s/:slug/login: the form field password is checked
// against the page's Secret; a match sets the session cookie and redirects
// (303) to the page, a mismatch answers 401 with the login form.
func (p *Public) ServeLogin(w http.ResponseWriter, r *http.Request, slug string) {
	page, ok := p.pageFor(w, r, slug, http.MethodPost)
	if !ok {
		return
	}
	if accessMode(page) != monv1.AccessPassword {
		http.Redirect(w, r, "/s/"+Slug(page), http.StatusSeeOther)
		return
	}
	if p.loginBlocked(w, r, page) {
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxPasswordBytes)
	if err := r.ParseForm(); err != nil {
		writeError(w, http.StatusBadRequest, CodeBadRequest, "Invalid form")
		return
	}
	gen, good, err := p.checkPassword(r.Context(), page, r.PostForm.Get("password"))
	if err != nil && !errors.Is(err, errNoPassword) {
		p.internalError(w, r, err)
		return
	}
	if !good {
		p.loginFailed(r, page)
		p.renderLogin(w, r, page, http.StatusUnauthorized, true)
		return
	}
	now := p.now()
	p.setSession(w, r, page, session{Page: string(page.UID), Generation: gen, IssuedAt: now.UnixMilli()}, now.Add(SessionTTL))
	http.Redirect(w, r, "/s/"+Slug(page), http.StatusSeeOther)
}

// ServeLogout handles POST /s/:slug/logout: the visitor's session of the
// page (password or sso) ends in this browser. It does not sign the visitor
// out of the identity provider.
func (p *Public) ServeLogout(w http.ResponseWriter, r *http.Request, slug string) {
	page, ok := p.pageFor(w, r, slug, http.MethodPost)
	if !ok {
		return
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookiePrefix + Slug(page), Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: p.secureCookies(r), SameSite: http.SameSiteLaxMode})
	text := "You are signed out of this status page."
	if accessMode(page) == monv1.AccessSSO {
		text += " You may still be signed in at your identity provider."
	}
	p.answer(w, r, page, false, http.StatusOK, nil, "Signed out", text)
}
