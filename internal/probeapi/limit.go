package probeapi

import "time"

// Failed requests (401 and 403) a client address may make per window
// before the probe API answers its requests 429 until the window ends,
// except those whose token the server recognizes (Server.Recognize): a
// good token is never refused for another client's failures. An agent
// with a good token never fails, so the limit is low: it is what bounds
// the TokenReviews an anonymous caller can cause with fresh tokens (each
// of which misses the token cache).
// The counting is internal/ratelimit's, the one limiter of the operator,
// keyed by ratelimit.ClientKey (IPv6 grouped by /64).
const (
	FailureLimit  = 10
	FailureWindow = time.Minute
)

// MinRegionTokenLength is the shortest region token the manager accepts and
// an agent sends: a region token is a long-lived shared secret that anyone
// who reaches the probe API may guess at, so it must be long and random
// (`openssl rand -hex 32` gives 64 characters). A shorter token Secret
// speaks for no region.
const MinRegionTokenLength = 32
