package core

import (
	"net/http"
	"slices"
	"strings"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/monitor"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
)

// Reads of a workspace's monitors that several resources show.

// NewestFirst orders monitors by creation, newest first, then by name
// (descending), then namespace: a total order.
func NewestFirst(a, b *monv1.Monitor) int {
	if c := b.CreationTimestamp.Compare(a.CreationTimestamp.Time); c != 0 {
		return c
	}
	if c := strings.Compare(b.Name, a.Name); c != 0 {
		return c
	}
	return strings.Compare(a.Namespace, b.Namespace)
}

// LiveMonitors are the monitors of items not being deleted, newest first.
func LiveMonitors(items []monv1.Monitor) []monv1.Monitor {
	out := make([]monv1.Monitor, 0, len(items))
	for i := range items {
		if items[i].DeletionTimestamp == nil {
			out = append(out, items[i])
		}
	}
	slices.SortFunc(out, func(a, b monv1.Monitor) int { return NewestFirst(&a, &b) })
	return out
}

// Summarize counts monitors by status and averages their 24-hour uptime.
func Summarize(items []monv1.Monitor) restapi.MonitorSummary {
	sum := restapi.MonitorSummary{Counts: map[string]int{}}
	for _, st := range []monv1.MonitorStatusValue{monv1.StatusUp, monv1.StatusDown, monv1.StatusDegraded, monv1.StatusBlocked,
		monv1.StatusUnknown, monv1.StatusPending, monv1.StatusPaused, monv1.StatusMaintenance} {
		sum.Counts[string(st)] = 0
	}
	var total float64
	n := 0
	for i := range items {
		m := &items[i]
		st := string(m.Status.CurrentStatus)
		switch {
		case m.Spec.Paused:
			st = string(monv1.StatusPaused)
		case st == "" || st == string(monv1.StatusPaused):
			st = string(monv1.StatusPending)
		}
		sum.Total++
		sum.Counts[st]++
		if m.Status.OpenIncident != nil {
			sum.OpenIncidents++
		}
		if p := monitor.ParsePercent(m.Status.Uptime24h); p != nil {
			total += *p
			n++
		}
	}
	if n > 0 {
		avg := total / float64(n)
		sum.Uptime24h = &avg
	}
	return sum
}

// NamespaceMonitors are the live monitors of the caller's workspace.
func (d *Deps) NamespaceMonitors(r *http.Request) ([]monv1.Monitor, error) {
	var list monv1.MonitorList
	if err := d.List(r.Context(), &list, CallerFrom(r.Context()).Namespace); err != nil {
		return nil, err
	}
	return LiveMonitors(list.Items), nil
}
