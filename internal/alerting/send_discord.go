package alerting

import (
	"context"

	"github.com/uptime-operator/uptime-operator/internal/textutil"
)

// discordSender posts the summary as a Discord webhook message, within
// Discord's 2,000 characters.
var discordSender = sender{takes: incidentAndRoutedEvents, build: func(ctx context.Context, d *delivery) (*outgoing, error) {
	u, err := d.hookURL(ctx)
	if err != nil {
		return nil, err
	}
	return jsonPost(u, map[string]string{"content": textutil.Truncate(d.sum.markdown("**"), 2000)})
}}
