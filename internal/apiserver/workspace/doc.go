// Package workspace serves /automation/whoami (the caller's key level,
// role, plan and limits) and /regions (the probe regions with their agents).
package workspace
