package stats

import (
	"context"
	"net/http"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// Routes registers /stats/{id}: a monitor's statistics, check history, incidents, charts, uptime history, region statuses and pause windows (1000 per minute per address, plain-text 429).
func (h *Handlers) Routes(rt *core.Router) {
	stats := core.WithLimit(rt.Limits.Stats)
	rt.Handle(http.MethodGet, "/stats/{id}/stats", h.statsSummary, stats)
	rt.Handle(http.MethodGet, "/stats/{id}/checks", h.statsChecks, stats)
	rt.Handle(http.MethodGet, "/stats/{id}/incidents", h.statsIncidents, stats)
	rt.Handle(http.MethodGet, "/stats/{id}/response-time-chart", h.responseTimeChart, stats)
	rt.Handle(http.MethodGet, "/stats/{id}/response-series", h.responseSeries, stats)
	rt.Handle(http.MethodGet, "/stats/{id}/uptime-history", h.uptimeHistory, stats)
	rt.Handle(http.MethodGet, "/stats/{id}/24h-bars", h.dailyBars, stats)
	rt.Handle(http.MethodGet, "/stats/{id}/region-statuses", h.regionStatuses, stats)
	rt.Handle(http.MethodGet, "/stats/{id}/pause-windows", h.pauseWindows, stats)
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
