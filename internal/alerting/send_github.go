package alerting

import "context"

// gitHubSender opens, comments on and closes the incident's issue
// (codehost.go). Events it does not take are delivered as nothing to do.
var gitHubSender = sender{takes: incidentEvents, build: func(ctx context.Context, d *delivery) (*outgoing, error) {
	if !incidentEvent(d.kind) {
		return &outgoing{skip: true}, nil
	}
	token, err := d.secret(ctx, d.ch.Spec.TokenFrom, "the access token")
	if err != nil {
		return nil, err
	}
	return d.github(ctx, d.ch, d.kind, d.sum, token)
}}
