// Package discovery is the pure logic of monitor discovery: which
// MonitorTemplate serves an Ingress, Gateway API route or Service (Claim),
// what the object offers to check (FromIngress, FromHTTPRoute,
// FromGRPCRoute, FromService: hosts, paths, TLS), and the Monitors a
// template makes of it (Plan: stable names, specs built from the
// template's monitor section, the per-object bound, annotation overrides).
// The discovery controller (controllers/monitortemplate_controller.go)
// reads objects, calls these functions and writes what they return; every
// rule is here, covered by table tests. docs/discovery.md is the user's
// view.
package discovery
