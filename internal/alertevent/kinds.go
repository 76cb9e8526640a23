package alertevent

// Event kinds of spec/webhooks.md. The X-Service-Event header and the
// payload's event field carry them; the outbox stores them as the event kind.
const (
	MonitorDown           = "monitor.down"
	MonitorUp             = "monitor.up"
	IncidentResolved      = "incident.resolved"
	Test                  = "test"
	SSLExpiring           = "ssl.expiring"
	DomainExpiring        = "domain.expiring"
	MaintenanceStarted    = "maintenance.started"
	MaintenanceEnded      = "maintenance.ended"
	SiteHealthIssues      = "site_health.issues"
	ThirdPartyIncident    = "third_party.incident"
	ThirdPartyResolved    = "third_party.resolved"
	ThirdPartyMaintenance = "third_party.maintenance"
	LastMileUnreachable   = "last_mile.unreachable"
	LastMileRecovered     = "last_mile.recovered"
)

// SLO notice kinds, sent when an SLO starts burning its error budget or
// exhausts it. They follow the routing of the SLO's monitor.
const (
	SLOBurningFast     = "slo.burning_fast"
	SLOBurningSlow     = "slo.burning_slow"
	SLOBudgetExhausted = "slo.budget_exhausted"
)

// Request headers of webhook deliveries (the neutral names of the
// specification). Alert webhooks and status page subscriber webhooks both
// carry them.
const (
	HeaderEvent     = "X-Service-Event"
	HeaderDelivery  = "X-Service-Delivery"
	HeaderTimestamp = "X-Service-Timestamp"
	HeaderSignature = "X-Service-Signature"
	// UserAgent identifies webhook deliveries.
	UserAgent = "Service-Webhooks/1.0"
)
