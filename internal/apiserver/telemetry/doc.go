// Package telemetry serves /automation/otel: the OpenTelemetry export of a
// workspace's check results (internal/otelexport), its settings in the
// history store, their delivery status and a test span.
package telemetry
