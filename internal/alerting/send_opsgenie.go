package alerting

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/uptime-operator/uptime-operator/internal/textutil"
)

// opsgenieSender creates an Opsgenie alert aliased by the incident, and
// closes it on recovery, in the channel's region (US or EU).
var opsgenieSender = sender{takes: incidentEvents, build: func(ctx context.Context, d *delivery) (*outgoing, error) {
	key, err := d.secret(ctx, d.ch.Spec.APIKeyFrom, "the API key")
	if err != nil {
		return nil, err
	}
	base := d.endpoints.OpsgenieUS
	if d.ch.Spec.Region == "eu" {
		base = d.endpoints.OpsgenieEU
	}
	base = strings.TrimRight(base, "/")
	sum := d.sum
	var out *outgoing
	if sum.resolves() {
		out, _ = jsonPost(base+"/v2/alerts/"+url.PathEscape(sum.dedupKey(d.id))+"/close?identifierType=alias",
			map[string]string{"source": "uptime-operator", "note": sum.Title})
	} else {
		details := map[string]string{}
		for k, v := range sum.Fields {
			if v != nil {
				details[k] = fmt.Sprint(v)
			}
		}
		out, _ = jsonPost(base+"/v2/alerts", map[string]any{
			"message": textutil.Truncate(sum.Title, 130), "alias": sum.dedupKey(d.id),
			"description": textutil.Truncate(strings.Join(sum.Lines, "\n"), 15000), "priority": "P1",
			"source": "uptime-operator", "details": details,
		})
	}
	out.header.Set("Authorization", "GenieKey "+key)
	return out, nil
}}
