package stats

import (
	"context"
	"net/http"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/apidoc"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// Routes registers /stats/{id}: a monitor's statistics, check history, incidents, charts, uptime history, region statuses and pause windows (1000 per minute per address, plain-text 429).
func (h *Handlers) Routes(rt *core.Router) {
	stats := core.WithLimit(rt.Limits.Stats)
	rt.Handle(http.MethodGet, "/stats/{id}/stats", h.statsSummary, stats, core.Doc(apidoc.Op{
		Tag:     "Stats",
		Summary: "Uptime summary",
		Query:   []apidoc.Param{apidoc.Q("days", apidoc.With(apidoc.Bounds(apidoc.Integer("Up to the plan's history."), 1, 730), "default", 30), "")},
		Resp:    restapi.Stats{},
	}))
	rt.Handle(http.MethodGet, "/stats/{id}/checks", h.statsChecks, stats, core.Doc(apidoc.Op{
		Tag:     "Stats",
		Summary: "Recent checks",
		Query:   []apidoc.Param{apidoc.IntQ("limit", 1, 5000, 100, ""), apidoc.Q("region", apidoc.Str(""), "Probe region code.")},
		Resp:    restapi.CheckList{},
	}))
	rt.Handle(http.MethodGet, "/stats/{id}/incidents", h.statsIncidents, stats, core.Doc(apidoc.Op{
		Tag:     "Stats",
		Summary: "Incident history",
		Query:   []apidoc.Param{apidoc.IntQ("limit", 1, 500, 50, "")},
		Resp:    restapi.IncidentList{},
	}))
	rt.Handle(http.MethodGet, "/stats/{id}/response-time-chart", h.responseTimeChart, stats, core.Doc(apidoc.Op{
		Tag:     "Stats",
		Summary: "Response times over time",
		Query: append([]apidoc.Param{apidoc.IntQ("days", 1, 730, 7, ""), apidoc.Q("region", apidoc.Str(""), "Probe region code.")}, []apidoc.Param{
			apidoc.Q("tzOffsetMinutes", apidoc.Bounds(apidoc.Integer(""), -840, 840), "Offset of the local time zone from UTC in minutes."),
			apidoc.Q("timeZone", apidoc.Str(""), "IANA time zone (instead of tzOffsetMinutes)."),
		}...),
		Resp: restapi.ResponseTimeChart{},
	}))
	rt.Handle(http.MethodGet, "/stats/{id}/response-series", h.responseSeries, stats, core.Doc(apidoc.Op{
		Tag:     "Stats",
		Summary: "Response time series",
		Query:   []apidoc.Param{apidoc.Q("range", apidoc.With(apidoc.Enum("", "1h", "6h", "24h", "7d", "30d"), "default", "24h"), ""), apidoc.Q("region", apidoc.Str(""), "Probe region code.")},
		Resp:    restapi.ResponseSeries{},
	}))
	rt.Handle(http.MethodGet, "/stats/{id}/uptime-history", h.uptimeHistory, stats, core.Doc(apidoc.Op{
		Tag:     "Stats",
		Summary: "Daily uptime",
		Query: append([]apidoc.Param{apidoc.IntQ("days", 1, 730, 90, "Up to the plan's history.")}, []apidoc.Param{
			apidoc.Q("tzOffsetMinutes", apidoc.Bounds(apidoc.Integer(""), -840, 840), "Offset of the local time zone from UTC in minutes."),
			apidoc.Q("timeZone", apidoc.Str(""), "IANA time zone (instead of tzOffsetMinutes)."),
		}...),
		Resp: restapi.Days{},
	}))
	rt.Handle(http.MethodGet, "/stats/{id}/24h-bars", h.dailyBars, stats, core.Doc(apidoc.Op{
		Tag:     "Stats",
		Summary: "Daily status bars",
		Query: append([]apidoc.Param{apidoc.IntQ("days", 1, 730, 90, ""), apidoc.Q("endDate", apidoc.With(apidoc.Str(""), "format", "date"), "Last day (YYYY-MM-DD).")}, []apidoc.Param{
			apidoc.Q("tzOffsetMinutes", apidoc.Bounds(apidoc.Integer(""), -840, 840), "Offset of the local time zone from UTC in minutes."),
			apidoc.Q("timeZone", apidoc.Str(""), "IANA time zone (instead of tzOffsetMinutes)."),
		}...),
		Resp: restapi.Days{},
	}))
	rt.Handle(http.MethodGet, "/stats/{id}/region-statuses", h.regionStatuses, stats, core.Doc(apidoc.Op{
		Tag:     "Stats",
		Summary: "Latest status per region",
		Resp:    restapi.RegionStatuses{},
	}))
	rt.Handle(http.MethodGet, "/stats/{id}/pause-windows", h.pauseWindows, stats, core.Doc(apidoc.Op{
		Tag:     "Stats",
		Summary: "When the monitor was paused",
		Query:   []apidoc.Param{apidoc.IntQ("hours", 1, 8760, 720, "")},
		Resp:    restapi.PauseWindows{},
	}))
}

// Store is what the statistics read from the history store.
type Store interface {
	ListChecks(ctx context.Context, q store.ChecksQuery) (items []store.Check, nextBefore *time.Time, err error)
	LatestChecks(ctx context.Context, monitorID string) ([]store.Check, error)
	Stats(ctx context.Context, q store.StatsQuery) (store.Stats, error)
	UptimeDaily(ctx context.Context, monitorID string, days int, loc *time.Location) ([]store.DailyUptime, error)
	ResponseSeries(ctx context.Context, q store.SeriesQuery) ([]store.SeriesPoint, error)
	ListIncidents(ctx context.Context, q store.IncidentQuery) (store.IncidentList, error)
	ListPauseWindows(ctx context.Context, monitorID string, since time.Time) ([]store.PauseWindow, error)
}

// Handlers serve /stats/{id}.
type Handlers struct {
	d  *core.Deps
	st Store
}

// New returns the handlers over d and st.
func New(d *core.Deps, st Store) *Handlers { return &Handlers{d: d, st: st} }
