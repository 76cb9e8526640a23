// Package ratelimit is the one request limiter of the operator's HTTP
// servers: the REST API's Limits table, the public status pages, the MCP
// server's session limits and the probe API's failed-authentication limit all
// count with it.
//
// A Limiter is a fixed-window counter: at most Limit events per Window and
// key. Fixed windows give the specification's "blocks the IP for the rest of
// the window" and a RateLimit-Reset that clients can wait for, and one
// counter per key is cheap enough to keep for every client address.
//
// Keys say who is counted. ClientKey is the key of every per-address limit:
// the client address as clientip resolves it, with IPv6 addresses grouped by
// /64 (one host, or one customer of a provider, usually holds a whole /64, so
// counting per /128 would let one client rotate through 2^64 buckets).
//
// Refuse answers 429 the way the specification asks: Retry-After and the
// RateLimit-Limit/-Remaining/-Reset headers, with a JSON error body (code
// RATE_LIMITED) or the plain-text body some limits use.
package ratelimit
