// Package trust holds the certificate authorities that this process's TLS
// clients verify servers against: the system roots plus an optional bundle of
// private CAs (`--trusted-ca-file` of the manager, the probe agent and dev).
//
// An in-cluster monitor watches internal HTTPS services, and internal webhook
// receivers often carry certificates from a company CA. Every outbound TLS
// client (probes of http, api, multistep, mcp and port monitors, webhook and
// chat deliveries, status page subscriber webhooks, the website-health
// crawler, OpenTelemetry export, SMTP) must trust the same set, the way Go's
// SSL_CERT_FILE would make it trust one, so the pool is one process-wide
// value set once at start-up rather than a setting threaded through every
// component. Verification is never turned off: the bundle only adds roots.
package trust
