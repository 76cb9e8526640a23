package probeserver

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
	"slices"
	"strings"
	"sync"
	"time"

	authv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	utilcache "k8s.io/apimachinery/pkg/util/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/metrics"
	"github.com/uptime-operator/uptime-operator/internal/monitor"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

// How long who a token is, and what a region token Secret holds, are
// remembered. A token that speaks for a region is trusted for TokenTTL
// after it was checked (a deleted ServiceAccount or a rotated region
// token stops working within that time) and then checked again; it stays
// known (KnownTokenTTL) so that the check again happens before the
// per-address failure limit, not behind it. One that speaks for none is
// refused for FailureTTL without a look, so retrying one bad token costs
// nothing. Region token Secrets are read at most once per RegionTokenTTL,
// found or not, so made-up tokens, each of which misses the token cache,
// cost no Secret reads.
const (
	TokenTTL       = 30 * time.Second
	KnownTokenTTL  = 2 * time.Hour
	FailureTTL     = 10 * time.Second
	RegionTokenTTL = 30 * time.Second
	// maxCachedTokens bounds the token cache; the least recently used
	// token is forgotten first.
	maxCachedTokens = 4096
)

// authCache holds what Authenticate learnt: tokens by their keyed hash
// (the tokens themselves are not kept) and region token Secrets.
type authCache struct {
	// key keys the token hashes, so that the cache's keys tell nothing
	// about the tokens and cannot be chosen to collide.
	key    []byte
	tokens *utilcache.LRUExpireCache

	mu      sync.Mutex
	secrets map[secretKey]regionToken
}

// secretKey names one key of one Secret.
type secretKey struct {
	secret client.ObjectKey
	key    string
}

// regionToken is a region token Secret's value as read at a time; nil
// when the Secret or its key was missing.
type regionToken struct {
	value []byte
	at    time.Time
}

// tokenAnswer is a cached authentication: the region, "" when refused,
// and when it was checked.
type tokenAnswer struct {
	region  string
	checked time.Time
}

type clockFunc func() time.Time

func (f clockFunc) Now() time.Time { return f() }

func newAuthCache(now func() time.Time) *authCache {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		panic(err) // crypto/rand does not fail
	}
	return &authCache{key: key, tokens: utilcache.NewLRUExpireCacheWithClock(maxCachedTokens, clockFunc(now)),
		secrets: map[secretKey]regionToken{}}
}

func (c *authCache) tokenKey(token string) string {
	h := hmac.New(sha256.New, c.key)
	h.Write([]byte(token))
	return string(h.Sum(nil))
}

// Authenticate returns the one region token speaks for: a region whose
// token Secret holds it, or the managed region whose ServiceAccount a
// TokenReview says it belongs to (with the probe audience). A token that
// matches two regions (one Secret shared by two regions) speaks for
// neither. Answers are cached (TokenTTL, FailureTTL); errors reading the
// API are not.
func (p *Server) Authenticate(ctx context.Context, token string) (string, error) {
	if token == "" {
		metrics.ProbeRefusals.WithLabelValues(metrics.RefusedUnauthenticated).Inc()
		return "", probeapi.ErrUnauthorized
	}
	key := p.auth.tokenKey(token)
	if v, ok := p.auth.tokens.Get(key); ok {
		a := v.(tokenAnswer)
		if a.region == "" {
			metrics.ProbeRefusals.WithLabelValues(metrics.RefusedUnauthenticated).Inc()
			return "", probeapi.ErrUnauthorized
		}
		if p.opts.Now().Sub(a.checked) < TokenTTL {
			return a.region, nil
		}
	}
	return p.check(ctx, key, token, true)
}

// Recognize returns the region of a token that is known good: one checked
// within TokenTTL; one that was good before (checked again now, which an
// anonymous caller cannot cause, since it has no such token); or one a
// region token Secret holds (compared in constant time with each region
// token as last read; the Secrets are read at most once per
// RegionTokenTTL whatever the requests). It answers "" for any other
// token, without a TokenReview.
func (p *Server) Recognize(ctx context.Context, token string) (string, error) {
	if token == "" {
		return "", nil
	}
	key := p.auth.tokenKey(token)
	if v, ok := p.auth.tokens.Get(key); ok {
		a := v.(tokenAnswer)
		switch {
		case a.region == "":
			return "", nil
		case p.opts.Now().Sub(a.checked) < TokenTTL:
			return a.region, nil
		}
		region, err := p.check(ctx, key, token, true)
		if errors.Is(err, probeapi.ErrUnauthorized) {
			return "", nil
		}
		return region, err
	}
	regions, err := p.identify(ctx, token, false)
	if err != nil || len(regions) == 0 {
		return "", err
	}
	// A region token Secret holds it: the full check decides whether
	// another region claims it too.
	region, err := p.check(ctx, key, token, true)
	if errors.Is(err, probeapi.ErrUnauthorized) {
		return "", nil
	}
	return region, err
}

// check identifies token and caches the answer under key.
func (p *Server) check(ctx context.Context, key, token string, review bool) (string, error) {
	regions, err := p.identify(ctx, token, review)
	if err != nil {
		return "", err
	}
	now := p.opts.Now()
	if len(regions) == 1 {
		p.auth.tokens.Add(key, tokenAnswer{region: regions[0], checked: now}, KnownTokenTTL)
		return regions[0], nil
	}
	if len(regions) > 1 {
		p.opts.Log.Info("refused a probe token that more than one region accepts; give each region a token of its own", "regions", regions)
	}
	p.auth.tokens.Add(key, tokenAnswer{checked: now}, FailureTTL)
	metrics.ProbeRefusals.WithLabelValues(metrics.RefusedUnauthenticated).Inc()
	return "", probeapi.ErrUnauthorized
}

// identify lists every region token accepts; without review, only the
// regions whose token Secret holds it (no TokenReview is asked for).
func (p *Server) identify(ctx context.Context, token string, review bool) ([]string, error) {
	var list monv1.ProbeRegionList
	if err := p.opts.Client.List(ctx, &list); err != nil {
		return nil, fmt.Errorf("list probe regions: %w", err)
	}
	var matches []string
	subject := ""
	if review {
		subject = unverifiedSubject(token)
	}
	for i := range list.Items {
		pr := &list.Items[i]
		code := monitor.RegionCode(pr)
		if ref := pr.Spec.Placement.TokenSecretRef; ref != nil {
			ns := pr.Spec.Placement.Namespace
			if ns == "" {
				ns = p.opts.ManagerNamespace
			}
			want, err := p.regionToken(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, ref.Key)
			if err != nil {
				return nil, err
			}
			if len(want) > 0 && subtle.ConstantTimeCompare(want, []byte(token)) == 1 {
				matches = append(matches, code)
				continue
			}
		}
		if managed(pr) && subject != "" && subject == serviceAccountUser(p.opts.ManagerNamespace, monitor.RegionServiceAccount(code)) {
			ok, err := p.reviewToken(ctx, token, subject)
			if err != nil {
				return nil, err
			}
			if ok {
				matches = append(matches, code)
			}
		}
	}
	return matches, nil
}

// managed reports whether the manager runs pr's agents (and so their
// ServiceAccount).
func managed(pr *monv1.ProbeRegion) bool {
	return pr.Spec.Placement.Mode == monv1.PlacementManaged || pr.Spec.Placement.Mode == ""
}

func serviceAccountUser(ns, name string) string { return "system:serviceaccount:" + ns + ":" + name }

// reviewToken asks kube-apiserver whether token is a valid token of user
// for the probe audience.
func (p *Server) reviewToken(ctx context.Context, token, user string) (bool, error) {
	tr := &authv1.TokenReview{Spec: authv1.TokenReviewSpec{Token: token, Audiences: []string{monitor.ProbeTokenAudience}}}
	if err := p.opts.Client.Create(ctx, tr); err != nil {
		return false, fmt.Errorf("review token: %w", err)
	}
	st := tr.Status
	return st.Authenticated && st.User.Username == user && slices.Contains(st.Audiences, monitor.ProbeTokenAudience), nil
}

// regionToken returns the value of key in the region token Secret at
// name, read at most once per RegionTokenTTL whether it exists or not.
func (p *Server) regionToken(ctx context.Context, name client.ObjectKey, key string) ([]byte, error) {
	now := p.opts.Now()
	at := secretKey{secret: name, key: key}
	p.auth.mu.Lock()
	e, ok := p.auth.secrets[at]
	p.auth.mu.Unlock()
	if !ok || now.Sub(e.at) >= RegionTokenTTL {
		var s corev1.Secret
		e = regionToken{at: now}
		err := p.opts.Secrets.Get(ctx, name, &s)
		switch {
		case err == nil:
			e.value = s.Data[key]
			if n := len(e.value); n > 0 && n < probeapi.MinRegionTokenLength {
				// A short token is guessable: it speaks for no region.
				p.opts.Log.Info("ignored a region token shorter than the minimum; put a longer random token in its Secret (openssl rand -hex 32)",
					"secret", name.String(), "key", key, "length", n, "minimum", probeapi.MinRegionTokenLength)
				e.value = nil
			}
		case client.IgnoreNotFound(err) != nil:
			return nil, fmt.Errorf("read region token %s: %w", name, err)
		}
		p.auth.mu.Lock()
		p.auth.secrets[at] = e
		p.auth.mu.Unlock()
	}
	return e.value, nil
}

// unverifiedSubject is the sub claim of token if it has the shape of a
// JWT, else "". It is read only to decide whether a TokenReview is worth
// asking for: the review, not this, says whether the token is good, and a
// token that is no ServiceAccount token of a region costs none.
func unverifiedSubject(token string) string {
	parts := strings.Split(token, ".")
	if len(parts) != 3 || len(parts[1]) > 8<<10 {
		return ""
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return ""
	}
	var claims struct {
		Sub string `json:"sub"`
	}
	if json.Unmarshal(raw, &claims) != nil {
		return ""
	}
	return claims.Sub
}
