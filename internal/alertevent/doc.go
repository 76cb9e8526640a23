// Package alertevent is the wire contract of alert events (spec/webhooks.md):
// the event kinds, the payload of each kind, the delivery headers, and the
// facts producers hand to alerting when something worth announcing happens.
//
// It sits at the bottom of the import graph, next to the API types, so that
// every producer (the incident engine, the SLO and MaintenanceWindow
// controllers, the expiry checker, website health, third-party status) and
// the alerting package that routes and delivers the events share one
// definition without importing each other: producers → alertevent ←
// alerting. Status page subscriber notifications reuse the delivery headers.
package alertevent
