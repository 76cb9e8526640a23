// Package reliability serves /reliability: SLO targets, monitor
// dependencies, the health overview of a workspace and of one monitor,
// GET /monitors/{id}/flakiness, and the rollout gates of a monitor and of an
// SLO target (gate.go).
package reliability
