// Package probes runs monitor checks: one CheckFunc per monitor type in its
// own file (http.go, ping.go, port.go, udp.go, dns.go, multistep.go, mcp.go),
// a registry mapping type names to them, the scheduler that runs each
// assignment at a fixed phase of its interval, and the agent that pulls
// assignments from the manager and pushes results back (package probeapi).
//
// Every outbound connection goes through the address guard
// (internal/netguard) at dial time. Run maps the outcomes onto the check
// statuses: a guard refusal is "blocked", a fault on the probe side (its own
// resolver failing, no sockets, a panic) is "unknown"; both abstain from the
// incident quorum on the manager.
//
// Cron monitors have no entry in the registry: they are heartbeat monitors
// that the manager evaluates itself when pings arrive or fail to arrive, so
// they are never assigned to agents.
package probes
