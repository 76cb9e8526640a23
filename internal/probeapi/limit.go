package probeapi

import "time"

// Failed requests (401 and 403) a client address may make per window
// before the probe API answers its every request 429 until the window
// ends. An agent with a good token never fails, so the limit is low: it
// is what bounds the TokenReviews and Secret reads an anonymous caller
// can cause with fresh tokens (each of which misses the token cache).
// The counting is internal/ratelimit's, the one limiter of the operator,
// keyed by ratelimit.ClientKey (IPv6 grouped by /64).
const (
	FailureLimit  = 10
	FailureWindow = time.Minute
)
