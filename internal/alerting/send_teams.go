package alerting

import (
	"context"
	"strings"
)

// teamsSender posts the summary as a Microsoft Teams MessageCard, with an
// Open button when the event links somewhere.
var teamsSender = sender{takes: incidentAndRoutedEvents, build: func(ctx context.Context, d *delivery) (*outgoing, error) {
	u, err := d.hookURL(ctx)
	if err != nil {
		return nil, err
	}
	sum := d.sum
	card := map[string]any{
		"@type": "MessageCard", "@context": "https://schema.org/extensions",
		"summary": sum.Title, "title": sum.Title, "text": strings.Join(sum.Lines, "\n\n"),
		"themeColor": sum.color(),
	}
	if sum.Link != "" {
		card["potentialAction"] = []map[string]any{{
			"@type": "OpenUri", "name": "Open",
			"targets": []map[string]string{{"os": "default", "uri": sum.Link}},
		}}
	}
	return jsonPost(u, card)
}}
