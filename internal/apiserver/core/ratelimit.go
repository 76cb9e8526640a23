package core

import (
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/ratelimit"
)

// Scope is what a limit is counted per.
type Scope int

const (
	// PerKey counts per API key; through the aggregated door per
	// Kubernetes user.
	PerKey Scope = iota
	// PerClient counts per client: the client address (IPv6 by /64) on the
	// direct listener, the Kubernetes user through the aggregated door. The
	// specification says "per IP"; behind the aggregated door every request
	// comes from kube-apiserver's address, so the address would put every
	// user of the cluster in one bucket.
	PerClient
	// PerWorkspace counts per namespace. The specification's "per account"
	// limits are counted per workspace too: an API key acts for the
	// workspace, not for a person.
	PerWorkspace
	// PerPath counts per request path (the heartbeat token).
	PerPath
)

// Limiter is one row of the specification's Limits table: a counter of the
// shared ratelimit package, what it counts per and the body of its 429.
type Limiter struct {
	*ratelimit.Limiter
	name   string
	scope  Scope
	body   ratelimit.Body
	counts string // what is counted when not every request ("failed requests")
}

// NewLimiter makes a limiter of limit requests per window.
func NewLimiter(name string, limit int, window time.Duration, scope Scope, body ratelimit.Body) *Limiter {
	return &Limiter{Limiter: ratelimit.New(limit, window), name: name, scope: scope, body: body}
}

// Limits are the rate limits of the specification's Limits table, counted
// here in the REST core for every route, the public status pages included.
type Limits struct {
	PerKey         *Limiter
	InvalidKey     *Limiter
	MonitorWrite   *Limiter
	RunCheck       *Limiter
	TestNotify     *Limiter
	Export         *Limiter
	DNSAccept      *Limiter
	Stats          *Limiter
	ChannelTestWS  *Limiter
	ChannelTestIP  *Limiter
	Apply          *Limiter
	Plan           *Limiter
	KeyedWrite     *Limiter
	HeartbeatToken *Limiter
	HeartbeatFail  *Limiter
	Public         *Limiter
	// RecipientConfirm bounds confirmation attempts (each is a store write)
	// per address; the tokens themselves cannot be guessed.
	RecipientConfirm *Limiter
}

// NewLimits makes the limits of the table, each with empty counters.
func NewLimits() *Limits {
	const plain, json = ratelimit.Plain, ratelimit.JSON
	return &Limits{
		PerKey:           NewLimiter("api-key", 1200, time.Minute, PerKey, json),
		InvalidKey:       NewLimiter("invalid-key", 100, 15*time.Minute, PerClient, json).counting("invalid keys"),
		MonitorWrite:     NewLimiter("monitor-write", 120, 15*time.Minute, PerClient, plain).counting("monitor writes"),
		RunCheck:         NewLimiter("run-check", 30, 5*time.Minute, PerWorkspace, plain),
		TestNotify:       NewLimiter("test-notification", 10, 15*time.Minute, PerWorkspace, plain),
		Export:           NewLimiter("export", 20, 15*time.Minute, PerWorkspace, plain),
		DNSAccept:        NewLimiter("dns-accept", 120, 15*time.Minute, PerClient, json),
		Stats:            NewLimiter("stats", 1000, time.Minute, PerClient, plain),
		ChannelTestWS:    NewLimiter("channel-test", 30, time.Hour, PerWorkspace, json),
		ChannelTestIP:    NewLimiter("channel-test-ip", 60, time.Hour, PerClient, json),
		Apply:            NewLimiter("apply", 30, 15*time.Minute, PerWorkspace, json),
		Plan:             NewLimiter("plan", 120, 15*time.Minute, PerWorkspace, json),
		KeyedWrite:       NewLimiter("keyed-write", 600, 15*time.Minute, PerWorkspace, json),
		HeartbeatToken:   NewLimiter("heartbeat", 60, time.Minute, PerPath, plain),
		HeartbeatFail:    NewLimiter("heartbeat-failures", 600, time.Minute, PerClient, plain).counting("failed requests"),
		Public:           NewLimiter("public-status", 60, time.Minute, PerClient, json),
		RecipientConfirm: NewLimiter("recipient-confirm", 30, 15*time.Minute, PerClient, plain),
	}
}

func (l *Limiter) counting(what string) *Limiter {
	l.counts = what
	return l
}

// scopeWords are the words the documentation counts a limit per.
var scopeWords = map[Scope]string{PerKey: "key", PerClient: "IP", PerWorkspace: "workspace", PerPath: "URL"}

// String is the limit as the API's document and the docs write it: "20 per
// 15 minutes per workspace", "600 failed requests per minute per IP".
// docs_limits_test.go holds every such sentence in docs/ to a limiter.
func (l *Limiter) String() string {
	n := strconv.Itoa(l.Limit())
	if l.counts != "" {
		n += " " + l.counts
	}
	w := l.Window()
	window := map[time.Duration]string{time.Minute: "minute", time.Hour: "hour"}[w]
	if window == "" {
		window = fmt.Sprintf("%d minutes", int(w/time.Minute))
	}
	return n + " per " + window + " per " + scopeWords[l.scope]
}

// Scope is what l counts per.
func (l *Limiter) Scope() Scope { return l.scope }

// limitText is the x-rate-limit of a route counted against ls.
func limitText(ls []*Limiter) string {
	var parts []string
	plain := false
	for _, l := range ls {
		parts = append(parts, l.String())
		plain = plain || l.body == ratelimit.Plain
	}
	if plain {
		parts[len(parts)-1] += " (plain-text 429)"
	}
	return strings.Join(parts, " and ")
}

// all are the limiters of the table.
func (l *Limits) all() []*Limiter {
	var out []*Limiter
	v := reflect.ValueOf(l).Elem()
	for i := range v.NumField() {
		out = append(out, v.Field(i).Interface().(*Limiter))
	}
	return out
}

// Refuse answers the 429 of l for decision d.
func (l *Limiter) Refuse(w http.ResponseWriter, d ratelimit.Decision) {
	ratelimit.Refuse(w, d, l.body)
}

// Key is the counting key of l for r.
func (l *Limiter) Key(r *http.Request) string {
	c := CallerFrom(r.Context())
	switch {
	case l.scope == PerPath:
		return r.URL.Path
	case l.scope == PerWorkspace && c != nil:
		return c.Namespace
	case l.scope == PerKey && c != nil:
		return c.RateKey()
	}
	return ClientKey(r)
}

// ClientKey is who a per-client limit counts r against: the Kubernetes user
// of the aggregated door (kube-apiserver's address is the same for every
// user), else the client address, IPv6 grouped by /64.
func ClientKey(r *http.Request) string {
	if c := CallerFrom(r.Context()); c != nil && c.Key == nil && c.User != "" {
		return "user:" + c.User
	}
	return ratelimit.ClientKey(r)
}
