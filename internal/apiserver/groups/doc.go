// Package groups serves /monitor-groups: a workspace's MonitorGroup custom
// resources with a summary of their member monitors.
package groups
