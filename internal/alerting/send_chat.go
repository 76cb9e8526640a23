package alerting

import "context"

// chatSender posts the summary as {"text": …} to a Slack-compatible
// incoming webhook (Slack, Google Chat, Mattermost); bold is the
// emphasis mark of the product's markdown.
func chatSender(bold string) sender {
	return sender{takes: incidentAndRoutedEvents, build: func(ctx context.Context, d *delivery) (*outgoing, error) {
		u, err := d.hookURL(ctx)
		if err != nil {
			return nil, err
		}
		return jsonPost(u, map[string]string{"text": d.sum.markdown(bold)})
	}}
}
