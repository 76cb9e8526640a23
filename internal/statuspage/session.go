package statuspage

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
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

// session is the signed content of a session cookie.
type session struct {
	Slug string `json:"s"`
	// IssuedAt is in Unix milliseconds.
	IssuedAt int64 `json:"i"`
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

func (p *Public) sign(payload []byte) []byte {
	m := hmac.New(sha256.New, p.sessionKey())
	m.Write([]byte("statuspage-session\x00"))
	m.Write(payload)
	return m.Sum(nil)
}

// issueSession makes the cookie value of a new session for slug.
func (p *Public) issueSession(slug string, now time.Time) string {
	payload, _ := json.Marshal(session{Slug: slug, IssuedAt: now.UnixMilli()})
	enc := base64.RawURLEncoding
	return enc.EncodeToString(payload) + "." + enc.EncodeToString(p.sign(payload))
}

// validSession reports whether r carries a valid session for the page: signed
// with our key, for this slug, not expired, and not issued before the page's
// sessionsRevokedAt.
func (p *Public) validSession(r *http.Request, page *monv1.StatusPage, now time.Time) bool {
	slug := Slug(page)
	c, err := r.Cookie(sessionCookiePrefix + slug)
	if err != nil {
		return false
	}
	body, sig, ok := strings.Cut(c.Value, ".")
	if !ok {
		return false
	}
	enc := base64.RawURLEncoding
	payload, err1 := enc.DecodeString(body)
	mac, err2 := enc.DecodeString(sig)
	if err1 != nil || err2 != nil || !hmac.Equal(mac, p.sign(payload)) {
		return false
	}
	var s session
	if json.Unmarshal(payload, &s) != nil || s.Slug != slug {
		return false
	}
	issued := time.UnixMilli(s.IssuedAt)
	if issued.After(now.Add(time.Minute)) || now.Sub(issued) > SessionTTL {
		return false
	}
	if a := page.Spec.Access; a != nil && a.SessionsRevokedAt != nil && issued.Before(a.SessionsRevokedAt.Time) {
		return false
	}
	return true
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
	case monv1.AccessPassword:
		return p.validSession(r, page, p.now())
	}
	return false // sso is not served by this package yet
}

// errNoPassword means the page's password Secret or key is missing.
var errNoPassword = errors.New("status page password is not configured")

// checkPassword compares the submitted password with the page's Secret in
// constant time.
func (p *Public) checkPassword(ctx context.Context, page *monv1.StatusPage, submitted string) (bool, error) {
	a := page.Spec.Access
	if a == nil || a.PasswordSecretRef == nil {
		return false, errNoPassword
	}
	var s corev1.Secret
	err := p.secrets().Get(ctx, client.ObjectKey{Namespace: page.Namespace, Name: a.PasswordSecretRef.Name}, &s)
	if apierrors.IsNotFound(err) {
		return false, errNoPassword
	}
	if err != nil {
		return false, fmt.Errorf("get password secret %s: %w", a.PasswordSecretRef.Name, err)
	}
	want, ok := s.Data[a.PasswordSecretRef.Key]
	if !ok || len(want) == 0 {
		return false, errNoPassword
	}
	// Compare digests so the comparison time does not depend on the length
	// of either value.
	got := sha256.Sum256([]byte(submitted))
	exp := sha256.Sum256([]byte(strings.TrimRight(string(want), "\r\n")))
	return subtle.ConstantTimeCompare(got[:], exp[:]) == 1, nil
}

// ServeLogin handles POST /s/:slug/login: the form field password is checked
// against the page's Secret; a match sets the session cookie and redirects
// (303) to the page, a mismatch answers 401 with the login form.
func (p *Public) ServeLogin(w http.ResponseWriter, r *http.Request, slug string) {
	p.init()
	if !p.allow(w, r) {
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, http.StatusMethodNotAllowed, "", "Method not allowed")
		return
	}
	page, ok := p.lookup(w, r, slug)
	if !ok {
		return
	}
	if accessMode(page) != monv1.AccessPassword {
		http.Redirect(w, r, "/s/"+Slug(page), http.StatusSeeOther)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxPasswordBytes)
	if err := r.ParseForm(); err != nil {
		writeError(w, http.StatusBadRequest, CodeBadRequest, "Invalid form")
		return
	}
	good, err := p.checkPassword(r.Context(), page, r.PostForm.Get("password"))
	if err != nil && !errors.Is(err, errNoPassword) {
		p.internalError(w, r, err)
		return
	}
	if !good {
		p.renderLogin(w, r, page, http.StatusUnauthorized, true)
		return
	}
	now := p.now()
	http.SetCookie(w, &http.Cookie{
		Name:     sessionCookiePrefix + Slug(page),
		Value:    p.issueSession(Slug(page), now),
		Path:     "/",
		Expires:  now.Add(SessionTTL),
		MaxAge:   int(SessionTTL / time.Second),
		HttpOnly: true,
		Secure:   r.TLS != nil || strings.HasPrefix(p.BaseURL, "https://"),
		SameSite: http.SameSiteLaxMode,
	})
	http.Redirect(w, r, "/s/"+Slug(page), http.StatusSeeOther)
}
