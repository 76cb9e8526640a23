package alerting

import (
	"context"
	"strings"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/textutil"
)

// pagerDutySender triggers and resolves a PagerDuty alert through the
// Events API v2, de-duplicated on the incident.
var pagerDutySender = sender{takes: incidentEvents, build: func(ctx context.Context, d *delivery) (*outgoing, error) {
	key, err := d.secret(ctx, d.ch.Spec.IntegrationKeyFrom, "the integration key")
	if err != nil {
		return nil, err
	}
	sum := d.sum
	action := "trigger"
	if sum.resolves() {
		action = "resolve"
	}
	body := map[string]any{
		"routing_key": key, "event_action": action, "dedup_key": sum.dedupKey(d.id),
		"payload": map[string]any{
			"summary": textutil.Truncate(sum.Title, 1024), "source": sum.source(), "severity": "critical",
			"timestamp": d.now.UTC().Format(time.RFC3339), "custom_details": sum.Fields,
		},
	}
	if sum.Link != "" {
		body["links"] = []map[string]string{{"href": sum.Link, "text": "Details"}}
	}
	return jsonPost(strings.TrimRight(d.endpoints.PagerDuty, "/")+"/v2/enqueue", body)
}}
