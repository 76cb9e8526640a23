// Package maintenance serves /maintenance: the maintenance windows of a
// workspace, as MaintenanceWindow custom resources.
package maintenance
