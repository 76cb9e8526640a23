package alerting

import (
	"context"
	"fmt"
	"strconv"

	"github.com/uptime-operator/uptime-operator/internal/alertevent"
)

// webhookSender posts the event's payload as is, signed with the channel's
// signing secret (spec/webhooks.md).
var webhookSender = sender{takes: allEvents, build: func(ctx context.Context, d *delivery) (*outgoing, error) {
	out, err := rawPayload(ctx, d)
	if err != nil {
		return nil, err
	}
	sel := d.ch.SigningSecret()
	if sel == nil {
		// The controller has not generated the Secret yet: retried.
		return nil, fmt.Errorf("signing secret of channel %s is not ready", d.ch.Name)
	}
	key, err := d.secret(ctx, sel, "the signing secret")
	if err != nil {
		return nil, err
	}
	ts := strconv.FormatInt(d.now.Unix(), 10)
	out.header.Set(alertevent.HeaderTimestamp, ts)
	out.header.Set(alertevent.HeaderSignature, Sign([]byte(key), ts, d.payload))
	return out, nil
}}

// zapierSender posts the payload as a webhook does, unsigned and without a
// timestamp: automation platforms do not verify signatures.
var zapierSender = sender{takes: incidentEvents, build: rawPayload}

// rawPayload is the POST of the event's payload to the channel's webhook
// URL with the event and delivery headers.
func rawPayload(ctx context.Context, d *delivery) (*outgoing, error) {
	u, err := d.hookURL(ctx)
	if err != nil {
		return nil, err
	}
	out, _ := jsonPost(u, nil)
	out.body = d.payload
	out.header.Set(alertevent.HeaderEvent, d.kind)
	out.header.Set(alertevent.HeaderDelivery, d.id)
	return out, nil
}
