// Package otelexport sends check results to a workspace's OpenTelemetry
// collector: one span per check and, per export, a response-time histogram
// and an up gauge per monitor and region, over OTLP (HTTP with protobuf or
// JSON bodies, or gRPC).
//
// The engine calls Exporter.Export for every ingested batch. Export never
// blocks: it appends to a bounded in-memory queue and drops (and counts) what
// does not fit. The Exporter's worker drains the queue every few seconds,
// groups the checks by workspace, and sends each workspace's share to its
// configured endpoint through the address guard, recording the outcome in
// the store's delivery status. Settings are read from the store and cached
// briefly; the REST API invalidates the cache when they change.
//
// Messages are built with the OTLP protocol bindings of the OpenTelemetry
// project (go.opentelemetry.io/proto/otlp): the same request is marshalled
// as protobuf, as OTLP/JSON (hex trace and span ids, enum numbers), or sent
// through the generated gRPC client.
package otelexport
