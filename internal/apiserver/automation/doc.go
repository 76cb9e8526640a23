// Package automation serves monitoring as code (/automation/monitors): a
// plan of what a list of monitor specs would change, its apply (guarded by
// the plan's fingerprint when it deletes or replaces), and monitors
// addressed by key. A keyed monitor is a Monitor whose spec.key is set, so
// kubectl apply, Helm and this API manage the same object. The monitor
// writes themselves are the monitor handlers' (package monitors, through
// the Monitors interface this package declares).
package automation
