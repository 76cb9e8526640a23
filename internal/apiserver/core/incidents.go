package core

import (
	"context"
	"time"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/monitor"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// RegionLabels maps region codes to display labels.
type RegionLabels map[string]string

// Name is the label of code, or code when it has none.
func (l RegionLabels) Name(code string) string {
	if n, ok := l[code]; ok && n != "" {
		return n
	}
	return code
}

// RegionNames are the labels of the probe regions.
func (d *Deps) RegionNames(ctx context.Context) RegionLabels {
	var list monv1.ProbeRegionList
	out := RegionLabels{}
	if err := d.Client.List(ctx, &list); err != nil {
		return out
	}
	for _, pr := range list.Items {
		label := pr.Spec.DisplayName
		if label == "" && pr.Spec.City != "" {
			label = pr.Spec.City
		}
		out[monitor.RegionCode(&pr)] = label
	}
	return out
}

// IncidentObject is inc as responses show it; durations run to now.
func IncidentObject(inc store.Incident, regions RegionLabels, now time.Time) restapi.Incident {
	names := make([]string, 0, len(inc.ConfirmingRegions))
	for _, c := range inc.ConfirmingRegions {
		names = append(names, regions.Name(c))
	}
	return restapi.Incident{
		ID: inc.ID, MonitorID: inc.MonitorID, MonitorName: inc.MonitorName, MonitorURL: inc.MonitorURL, MonitorType: inc.MonitorType,
		StartedAt: ISOTime(inc.StartedAt), ResolvedAt: ISOTimePtr(inc.ResolvedAt), DurationSeconds: inc.DurationSeconds(now),
		AlertSuppressed: inc.AlertSuppressed, SuppressionReason: StrPtr(inc.SuppressionReason), IsFlapping: inc.IsFlapping,
		Confirmations: inc.Confirmations, ConfirmingRegions: NonNil(inc.ConfirmingRegions), ConfirmingRegionNames: names,
		RegionsTotal: inc.RegionsTotal, AcknowledgedAt: ISOTimePtr(inc.AcknowledgedAt), AcknowledgedByName: StrPtr(inc.AcknowledgedBy),
		SnoozedUntil: ISOTimePtr(inc.SnoozedUntil), ResolvedManually: inc.ResolvedManually, CodeHostIssueURL: StrPtr(inc.IssueURL),
	}
}
