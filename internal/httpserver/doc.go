// Package httpserver builds every HTTP server of the operator (the direct
// and aggregated API listeners of the manager, `dev`, the hosted and
// stand-alone MCP servers, the probe agent's metrics and the site-health
// browser proxy) with the same connection limits, so that no listener holds
// a slow or idle client for ever:
//
//   - ReadHeaderTimeout bounds the request line and headers;
//   - ReadTimeout bounds reading the whole request, body included, from its
//     first byte (a client that trickles its body is cut off);
//   - IdleTimeout closes a keep-alive connection that waits for its next
//     request;
//   - MaxHeaderBytes bounds the header size.
//
// ReadTimeout does not bound the handler: net/http clears the connection's
// read deadline once the request has been read (when it starts watching the
// connection for the client going away), so a handler runs on its own
// deadline. The probe API's long poll waits up to 60 s on its own context,
// MCP's event streams and large CSV exports run as long as they need. A test
// of this package keeps that true across Go releases.
package httpserver
