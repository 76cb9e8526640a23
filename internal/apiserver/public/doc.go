// Package public serves the endpoints of the REST listener that need no API
// key: heartbeat pings (/heartbeat/{token}) and the public status pages
// (/status/{slug}, /s/{slug}), counted against the Limits table like the
// rest of the API.
package public
