// Package thirdparty follows the status pages of third-party providers (the
// services a workspace depends on) and sends the third_party.incident,
// third_party.resolved and third_party.maintenance notices of the webhook
// specification.
//
// Providers come from a Catalog: a built-in list of well-known providers,
// changed or extended by the uptime-operator-providers ConfigMap in the
// manager's namespace or by Go options. A provider publishes either a
// Statuspage-compatible API (summary.json, incidents.json) or an RSS/Atom
// status feed.
//
// The Service's poller runs on the leader. Every few minutes it fetches each
// followed provider once, with If-None-Match and If-Modified-Since so an
// unchanged page costs a 304, parses it into a Snapshot and diffs it against
// the snapshot stored by the previous poll. Every Change (an incident
// opened, updated or resolved, a maintenance started or completed, a
// component degraded or recovered) is matched against each subscription's
// component and keyword filters and minimum severity, and the notices are
// stored together with the new snapshot in one transaction: a notice is
// enqueued exactly when the state it came from is recorded. The first poll
// of a provider only records a baseline, so following a provider does not
// replay its open incidents.
package thirdparty
