package apiserver

import (
	"net/http"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/ratelimit"
)

// limitScope is what a limit is counted per.
type limitScope int

const (
	// perKey counts per API key; through the aggregated door per
	// Kubernetes user.
	perKey limitScope = iota
	// perClient counts per client: the client address (IPv6 by /64) on the
	// direct listener, the Kubernetes user through the aggregated door. The
	// specification says "per IP"; behind the aggregated door every request
	// comes from kube-apiserver's address, so the address would put every
	// user of the cluster in one bucket.
	perClient
	// perWorkspace counts per namespace. The specification's "per account"
	// limits are counted per workspace too: an API key acts for the
	// workspace, not for a person.
	perWorkspace
	// perPath counts per request path (the heartbeat token).
	perPath
)

// limiter is one row of the specification's Limits table: a counter of the
// shared ratelimit package, what it counts per and the body of its 429.
type limiter struct {
	*ratelimit.Limiter
	name  string
	scope limitScope
	body  ratelimit.Body
}

func newLimiter(name string, limit int, window time.Duration, scope limitScope, body ratelimit.Body) *limiter {
	return &limiter{Limiter: ratelimit.New(limit, window), name: name, scope: scope, body: body}
}

// limits are the rate limits of the specification's Limits table, counted
// here in the REST core for every route, the public status pages included.
type limits struct {
	perKey         *limiter
	invalidKey     *limiter
	monitorWrite   *limiter
	runCheck       *limiter
	testNotify     *limiter
	export         *limiter
	dnsAccept      *limiter
	stats          *limiter
	channelTestWS  *limiter
	channelTestIP  *limiter
	apply          *limiter
	plan           *limiter
	keyedWrite     *limiter
	heartbeatToken *limiter
	heartbeatFail  *limiter
	public         *limiter
	// recipientConfirm bounds confirmation attempts (each is a store write)
	// per address; the tokens themselves cannot be guessed.
	recipientConfirm *limiter
}

func newLimits() *limits {
	const plain, json = ratelimit.Plain, ratelimit.JSON
	return &limits{
		perKey:           newLimiter("api-key", 1200, time.Minute, perKey, json),
		invalidKey:       newLimiter("invalid-key", 100, 15*time.Minute, perClient, json),
		monitorWrite:     newLimiter("monitor-write", 120, 15*time.Minute, perClient, plain),
		runCheck:         newLimiter("run-check", 30, 5*time.Minute, perWorkspace, plain),
		testNotify:       newLimiter("test-notification", 10, 15*time.Minute, perWorkspace, plain),
		export:           newLimiter("export", 20, 15*time.Minute, perWorkspace, plain),
		dnsAccept:        newLimiter("dns-accept", 120, 15*time.Minute, perClient, json),
		stats:            newLimiter("stats", 1000, time.Minute, perClient, plain),
		channelTestWS:    newLimiter("channel-test", 30, time.Hour, perWorkspace, json),
		channelTestIP:    newLimiter("channel-test-ip", 60, time.Hour, perClient, json),
		apply:            newLimiter("apply", 30, 15*time.Minute, perWorkspace, json),
		plan:             newLimiter("plan", 120, 15*time.Minute, perWorkspace, json),
		keyedWrite:       newLimiter("keyed-write", 600, 15*time.Minute, perWorkspace, json),
		heartbeatToken:   newLimiter("heartbeat", 60, time.Minute, perPath, plain),
		heartbeatFail:    newLimiter("heartbeat-failures", 600, time.Minute, perClient, plain),
		public:           newLimiter("public-status", 60, time.Minute, perClient, json),
		recipientConfirm: newLimiter("recipient-confirm", 30, 15*time.Minute, perClient, plain),
	}
}

// refuse answers the 429 of l for decision d.
func (l *limiter) refuse(w http.ResponseWriter, d ratelimit.Decision) {
	ratelimit.Refuse(w, d, l.body)
}

// key is the counting key of l for r.
func (l *limiter) key(r *http.Request) string {
	c := CallerFrom(r.Context())
	switch {
	case l.scope == perPath:
		return r.URL.Path
	case l.scope == perWorkspace && c != nil:
		return c.Namespace
	case l.scope == perKey && c != nil:
		return c.rateKey()
	}
	return clientKey(r)
}

// clientKey is who a per-client limit counts r against: the Kubernetes user
// of the aggregated door (kube-apiserver's address is the same for every
// user), else the client address, IPv6 grouped by /64.
func clientKey(r *http.Request) string {
	if c := CallerFrom(r.Context()); c != nil && c.Key == nil && c.User != "" {
		return "user:" + c.User
	}
	return ratelimit.ClientKey(r)
}
