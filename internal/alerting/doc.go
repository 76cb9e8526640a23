// Package alerting turns incident and notice events into outbox entries and
// delivers them to alert channels.
//
// The Router builds the payloads of spec/webhooks.md and picks the channels
// whose routing covers an event; the engine hands the resulting
// store.OutboxEvent to the store in the same transaction as the state change,
// so an alert is enqueued exactly when its incident changes. The Worker
// leases due deliveries from the store (several replicas may run one each:
// a lease gives one owner a delivery at a time), sends them (webhooks signed
// with HMAC-SHA256, other channel types in their product's incoming format),
// records every attempt, retries on the specification's schedule and keeps
// each AlertChannel's delivery status and Failing condition current.
// Delivery is at least once: receivers de-duplicate on the delivery id.
// Other services put their own messages in the same outbox (status page
// subscriber notifications, alert recipients' confirmation emails) and
// register a Target for their channel-id prefix: the Worker delivers those
// with the same leases, attempt log and retry schedule.
//
// Email goes over SMTP (SMTP), phone alerts through a Twilio-compatible API
// (Twilio), and the code-hosting channel links the issue it opens to its
// incident. The Escalator fires the steps of escalation policies for
// incidents nobody acknowledges, recording each step in the incident's
// timeline so that it fires once.
package alerting
