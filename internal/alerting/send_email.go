package alerting

import "context"

// emailSender mails the summary to the channel's addresses that have
// confirmed alert emails, over SMTP or the email relay.
var emailSender = sender{takes: incidentAndRoutedEvents, build: func(ctx context.Context, d *delivery) (*outgoing, error) {
	to, err := d.confirmedOnly(ctx, d.ch.Namespace, d.ch.Spec.Emails)
	if err != nil {
		return nil, err
	}
	return d.email(MailMessage{To: to, Subject: d.sum.Title, Text: d.sum.plain()})
}}
