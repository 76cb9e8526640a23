// Package reliability serves /reliability: SLO targets, monitor
// dependencies, the health overview of a workspace and of one monitor, and
// GET /monitors/{id}/flakiness.
package reliability
