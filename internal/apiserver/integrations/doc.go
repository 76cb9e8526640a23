// Package integrations serves the alerting side of a workspace: alert
// channels (AlertChannel custom resources, /integrations) with their
// routing, secrets and tests; alert email recipients and the public link
// that confirms them; the escalation, on-call and notification settings;
// and a monitor's notification recipients and test email.
package integrations
