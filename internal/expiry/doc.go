// Package expiry watches the TLS certificates and domain registrations of
// monitors and sends the ssl.expiring and domain.expiring notices of the
// webhook specification.
//
// Certificates are not fetched by this package on a schedule: probe agents
// report the leaf certificate of every TLS check, and the engine hands it to
// ObserveTLS, which keeps the newest certificate per monitor and region in the
// store. Domain registrations are looked up over RDAP (the registry's
// events[eventAction=expiration]) at most once a day per registrable domain,
// through the store, so every replica shares one cache.
//
// The Checker runs on the leader. Each sweep works out, for every monitor,
// the notice stage that applies now (pre_15d, pre_7d, pre_2d, pre_24h, an
// early pre_<N>d reminder from the monitor's
// uptime-operator.io/expiry-reminder-days annotation, post_1d, post_2d,
// post_3d) and records it together with the outbox event in one store
// transaction keyed by monitor, kind, expiry date and stage. A stage is
// therefore sent once per expiry date, whichever replica or retry gets there
// first; a renewed certificate or registration has a new date and starts
// over. Only the most advanced stage due is sent, so a certificate first seen
// five days before expiry produces pre_7d, not pre_15d as well. The sweep
// sleeps until the next stage boundary of any monitor (at most Interval), so
// notices go out when their stage begins.
package expiry
