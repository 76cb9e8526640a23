// Package webhooks holds the admission webhooks of every kind: defaulting
// (names, intervals, normalised tags, slugs, SLO thresholds) and validation
// with field paths and the specification's messages, including the rules that
// read other objects (references, plan limits, uniqueness of slugs, keys and
// region codes).
//
// The rules that need no other object (monitor.ValidateMonitorSpec,
// monitor.DefaultMonitor and friends) live in internal/monitor, which the REST
// layer calls too, so both front doors refuse the same input with the same
// words; this package adds what reads the API server.
package webhooks

// +kubebuilder:webhook:path=/mutate-monitoring-uptime-operator-io-v1alpha1-monitor,mutating=true,failurePolicy=fail,sideEffects=None,groups=monitoring.uptime-operator.io,resources=monitors,verbs=create;update,versions=v1alpha1,name=mmonitor.uptime-operator.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-monitoring-uptime-operator-io-v1alpha1-monitor,mutating=false,failurePolicy=fail,sideEffects=None,groups=monitoring.uptime-operator.io,resources=monitors,verbs=create;update,versions=v1alpha1,name=vmonitor.uptime-operator.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/mutate-monitoring-uptime-operator-io-v1alpha1-monitorgroup,mutating=true,failurePolicy=fail,sideEffects=None,groups=monitoring.uptime-operator.io,resources=monitorgroups,verbs=create;update,versions=v1alpha1,name=mmonitorgroup.uptime-operator.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-monitoring-uptime-operator-io-v1alpha1-monitorgroup,mutating=false,failurePolicy=fail,sideEffects=None,groups=monitoring.uptime-operator.io,resources=monitorgroups,verbs=create;update,versions=v1alpha1,name=vmonitorgroup.uptime-operator.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/mutate-monitoring-uptime-operator-io-v1alpha1-statuspage,mutating=true,failurePolicy=fail,sideEffects=None,groups=monitoring.uptime-operator.io,resources=statuspages,verbs=create;update,versions=v1alpha1,name=mstatuspage.uptime-operator.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-monitoring-uptime-operator-io-v1alpha1-statuspage,mutating=false,failurePolicy=fail,sideEffects=None,groups=monitoring.uptime-operator.io,resources=statuspages,verbs=create;update,versions=v1alpha1,name=vstatuspage.uptime-operator.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/mutate-monitoring-uptime-operator-io-v1alpha1-alertchannel,mutating=true,failurePolicy=fail,sideEffects=None,groups=monitoring.uptime-operator.io,resources=alertchannels,verbs=create;update,versions=v1alpha1,name=malertchannel.uptime-operator.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-monitoring-uptime-operator-io-v1alpha1-alertchannel,mutating=false,failurePolicy=fail,sideEffects=None,groups=monitoring.uptime-operator.io,resources=alertchannels,verbs=create;update,versions=v1alpha1,name=valertchannel.uptime-operator.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/mutate-monitoring-uptime-operator-io-v1alpha1-slo,mutating=true,failurePolicy=fail,sideEffects=None,groups=monitoring.uptime-operator.io,resources=slos,verbs=create;update,versions=v1alpha1,name=mslo.uptime-operator.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-monitoring-uptime-operator-io-v1alpha1-slo,mutating=false,failurePolicy=fail,sideEffects=None,groups=monitoring.uptime-operator.io,resources=slos,verbs=create;update,versions=v1alpha1,name=vslo.uptime-operator.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/mutate-monitoring-uptime-operator-io-v1alpha1-maintenancewindow,mutating=true,failurePolicy=fail,sideEffects=None,groups=monitoring.uptime-operator.io,resources=maintenancewindows,verbs=create;update,versions=v1alpha1,name=mmaintenancewindow.uptime-operator.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-monitoring-uptime-operator-io-v1alpha1-maintenancewindow,mutating=false,failurePolicy=fail,sideEffects=None,groups=monitoring.uptime-operator.io,resources=maintenancewindows,verbs=create;update,versions=v1alpha1,name=vmaintenancewindow.uptime-operator.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-monitoring-uptime-operator-io-v1alpha1-escalationpolicy,mutating=false,failurePolicy=fail,sideEffects=None,groups=monitoring.uptime-operator.io,resources=escalationpolicies,verbs=create;update,versions=v1alpha1,name=vescalationpolicy.uptime-operator.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/mutate-monitoring-uptime-operator-io-v1alpha1-proberegion,mutating=true,failurePolicy=fail,sideEffects=None,groups=monitoring.uptime-operator.io,resources=proberegions,verbs=create;update,versions=v1alpha1,name=mproberegion.uptime-operator.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-monitoring-uptime-operator-io-v1alpha1-proberegion,mutating=false,failurePolicy=fail,sideEffects=None,groups=monitoring.uptime-operator.io,resources=proberegions,verbs=create;update,versions=v1alpha1,name=vproberegion.uptime-operator.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-monitoring-uptime-operator-io-v1alpha1-plan,mutating=false,failurePolicy=fail,sideEffects=None,groups=monitoring.uptime-operator.io,resources=plans,verbs=create;update,versions=v1alpha1,name=vplan.uptime-operator.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-monitoring-uptime-operator-io-v1alpha1-oncallschedule,mutating=false,failurePolicy=fail,sideEffects=None,groups=monitoring.uptime-operator.io,resources=oncallschedules,verbs=create;update,versions=v1alpha1,name=voncallschedule.uptime-operator.io,admissionReviewVersions=v1
