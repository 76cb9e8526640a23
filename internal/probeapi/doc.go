// Package probeapi is the wire contract between the manager and its probe
// agents. Both sides import it; nothing else defines these shapes.
//
// # Transport
//
// Agents talk HTTPS (plain HTTP only on loopback in dev mode and in tests) to
// the manager and authenticate every request with "Authorization: Bearer
// <token>", where the token is either the agent's projected ServiceAccount
// token (validated with a TokenReview) or the region token Secret. The server
// decides which it accepts; this package only carries the token.
// CATransport verifies the manager's serving certificate against a CA file
// that may be rotated under a running agent.
//
// # Endpoints
//
//	GET  /probe/v1/assignments?region=CODE&revision=R&wait=30s&agent=ID
//
// Long poll for the region's monitor assignments. When the server's current
// revision differs from R (or R is empty) it answers 200 at once with an
// AssignmentList. Otherwise it holds the request for up to wait (default 30s,
// at most 60s) and answers 200 as soon as the revision changes, or
// 304 Not Modified when wait elapses with no change. agent names the calling
// agent as its result batches do (agent_id), so that a long poll and a push
// count as one agent in the region's online count.
//
//	POST /probe/v1/results
//
// Body: a ResultBatch. Answer 200 with a ResultsResponse giving the number of
// results accepted. Each Result carries an agent-generated UUID; the server
// ignores results whose id it has already stored, so a batch that is retried
// after a lost response is applied once.
//
// A token speaks for exactly one region. The server authenticates it from
// the request's headers before it reads a body, and answers 403 when the
// region a long poll asks for, a batch's region or any result's region is
// another one; an empty region in a batch or result is the token's. A result
// for a monitor the region does not check, or with a status other than the
// Status constants, is left out and counted in ResultsResponse.Refused.
//
// Errors are JSON bodies {"error": {"code": ..., "message": ...}} with 400 for a
// malformed request, 401 for a missing or invalid token, 403 when the token
// may not act for the region, 429 (with Retry-After) once a client address
// had FailureLimit 401 or 403 answers within FailureWindow, 5xx for server
// faults. The Client retries network errors, 429 and 5xx with exponential
// backoff with jitter and never retries other 4xx answers.
//
// # Types
//
// An Assignment is one monitor as one agent must run it: identity, type,
// interval, effective timeout and a Config. Config IS the REST API's monitor
// config object: the same keys and units (config.timeout in seconds for
// ping, port, udp and dns), decoded by the REST layer into this very type
// and translated to and from the Monitor's spec only by package monitor.
// In an assignment, header values that reference Secrets are already
// resolved to text. A Result is one check record, the same fields as a check record
// in the REST API plus timings, TLS certificate data and type-specific Details.
package probeapi
