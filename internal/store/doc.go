// Package store defines where uptime-operator keeps history: check results and
// their rollups, incidents with their timelines, notes and postmortems, the
// alerting outbox and its deliveries, deploy events, DNS answers, pause windows,
// heartbeat pings and API key usage. Configuration lives in CRDs; everything that
// grows with time lives behind the Store interface.
//
// Two backends implement Store and pass the same conformance suite
// (package storetest): package sqlite (embedded default, a single batching
// writer) and package postgres (scale and HA replicas).
//
// # Time
//
// Every timestamp is stored in UTC with microsecond precision; the store
// truncates finer precision on write and returns exactly what was stored, so a
// timestamp read back can be used as a pagination cursor without rounding.
//
// # Rollups
//
// Checks are rolled up while they are written, in the same transaction, into
// buckets of one minute, one hour and one UTC day per monitor and region. A bucket
// holds the count of checks per status and the sum, minimum and maximum response
// time of the up and degraded checks (the response time of a failed check is
// mostly its timeout, which would distort charts and averages). Queries over an
// arbitrary range [from, to) read whole days, hours and minutes from the rollups
// and only the partial minutes at either edge from the raw checks (see
// SplitRange), so uptime over a year is a query over a few hundred rows and
// equals the uptime computed from the raw checks exactly, as long as those are
// retained.
//
// Uptime counts up and degraded checks as up; blocked and unknown checks are
// excluded from both the numerator and the denominator.
//
// # Incidents
//
// A monitor has at most one open (unresolved) incident: the backends enforce it
// with a unique partial index, so two manager replicas racing to open an
// incident cannot both succeed; the loser gets ErrIncidentOpen. State changes
// append timeline events and enqueue outbox events in the same transaction.
//
// # Outbox
//
// Alerts are outbox events written in the same transaction as the state change
// that caused them, with one delivery per target alert channel. Senders lease
// due deliveries (LeaseDeliveries); a lease is exclusive until it expires, so
// two replicas never send one delivery at the same time, and a crashed sender's
// deliveries are picked up again after the lease. Completing, retrying or
// failing a delivery requires still holding its lease (ErrLeaseLost otherwise).
package store
