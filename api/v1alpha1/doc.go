// Package v1alpha1 contains the monitoring.uptime-operator.io/v1alpha1 API:
// the custom resources through which cluster admins, Helm, GitOps tools and the
// REST API configure uptime-operator.
//
// Configuration lives in these objects; history (checks, incidents, deliveries)
// lives in the store. Field names follow Kubernetes conventions; the REST layer
// maps them to the snake_case JSON of the product specification. Every limit the
// specification states is enforced here with markers and CEL where it fits, and
// otherwise by the rules of internal/monitor (called by the admission webhooks
// and the REST layer) and the webhooks, with the same messages.
//
// +kubebuilder:object:generate=true
// +groupName=monitoring.uptime-operator.io
package v1alpha1
