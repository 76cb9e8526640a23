package manager

import (
	"reflect"

	"github.com/uptime-operator/uptime-operator/controllers"
	"github.com/uptime-operator/uptime-operator/internal/alerting"
	"github.com/uptime-operator/uptime-operator/internal/apiserver"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/incidentcomms"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/incidents"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/integrations"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/monitors"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/reliability"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/stats"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/telemetry"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/thirdpartystatus"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/websitehealth"
	"github.com/uptime-operator/uptime-operator/internal/assist"
	"github.com/uptime-operator/uptime-operator/internal/engine"
	"github.com/uptime-operator/uptime-operator/internal/expiry"
	"github.com/uptime-operator/uptime-operator/internal/otelexport"
	"github.com/uptime-operator/uptime-operator/internal/recipients"
	"github.com/uptime-operator/uptime-operator/internal/sitehealth"
	"github.com/uptime-operator/uptime-operator/internal/statuspage"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/thirdparty"
)

// consumerStores lists the store interfaces that the consumers of the
// history store declare, each holding only the methods its package calls
// (docs/architecture.md). Each entry converts a store.Store to the
// consumer's interface, so a change to store.Store that one of them no
// longer fits fails to build here, next to the wiring; the test measures
// each against store.Store.
var consumerStores = []reflect.Type{
	fits(func(s store.Store) engine.Store { return s }),
	fits(func(s store.Store) apiserver.Store { return s }),
	fits(func(s store.Store) monitors.Store { return s }),
	fits(func(s store.Store) incidents.Store { return s }),
	fits(func(s store.Store) incidentcomms.Store { return s }),
	fits(func(s store.Store) integrations.Store { return s }),
	fits(func(s store.Store) reliability.Store { return s }),
	fits(func(s store.Store) stats.Store { return s }),
	fits(func(s store.Store) telemetry.Store { return s }),
	fits(func(s store.Store) thirdpartystatus.Store { return s }),
	fits(func(s store.Store) websitehealth.Store { return s }),
	fits(func(s store.Store) alerting.WorkerStore { return s }),
	fits(func(s store.Store) alerting.EscalationStore { return s }),
	fits(func(s store.Store) statuspage.NotifierStore { return s }),
	fits(func(s store.Store) statuspage.PublicStore { return s }),
	fits(func(s store.Store) expiry.Store { return s }),
	fits(func(s store.Store) sitehealth.Store { return s }),
	fits(func(s store.Store) sitehealth.ReportStore { return s }),
	fits(func(s store.Store) thirdparty.Store { return s }),
	fits(func(s store.Store) otelexport.Store { return s }),
	fits(func(s store.Store) assist.Store { return s }),
	fits(func(s store.Store) recipients.Store { return s }),
	fits(func(s store.Store) controllers.HistoryKeeper { return s }),
	fits(func(s store.Store) controllers.SLIStore { return s }),
	fits(func(s store.Store) controllers.EventQueue { return s }),
}

// fits returns the interface type T; the conversion it is given is what
// checks, at build time, that store.Store satisfies T.
func fits[T any](func(store.Store) T) reflect.Type { return reflect.TypeFor[T]() }
