package apiserver

import (
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/incidentcomms"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/incidents"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/integrations"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/monitors"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/reliability"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/stats"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/telemetry"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/thirdpartystatus"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/websitehealth"
	"github.com/uptime-operator/uptime-operator/internal/recipients"
)

// Store is the part of the history store (internal/store) that the REST API
// uses: the union of the store interfaces the resource packages declare,
// the last use of API keys (the core router) and what the recipient
// confirmer needs when none is configured. It holds only these methods, so
// the dependency is visible here and a test can fake or wrap it; every
// store backend satisfies it.
type Store interface {
	core.KeyStore
	recipients.Store
	monitors.Store
	stats.Store
	incidents.Store
	incidentcomms.Store
	integrations.Store
	reliability.Store
	websitehealth.Store
	telemetry.Store
	thirdpartystatus.Store
}
