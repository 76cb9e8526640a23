package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SLIType is how good events are counted.
// +kubebuilder:validation:Enum=availability;latency
type SLIType string

// SLI types.
const (
	// SLIAvailability counts up and degraded checks as good.
	SLIAvailability SLIType = "availability"
	// SLILatency counts checks faster than the latency threshold as good.
	SLILatency SLIType = "latency"
)

// SLOSpec is a service-level objective for one monitor.
type SLOSpec struct {
	// monitorRef names the Monitor of the same namespace; one SLO per monitor.
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="monitorRef cannot change; create a new SLO"
	MonitorRef LocalObjectReference `json:"monitorRef"`
	// targetPercentage is the objective (90-99.999).
	// +required
	// +kubebuilder:validation:Minimum=90
	// +kubebuilder:validation:Maximum=99.999
	TargetPercentage float64 `json:"targetPercentage"`
	// sliType is availability (default) or latency.
	// +optional
	SLIType SLIType `json:"sliType,omitempty"`
	// latencyThresholdMs is the threshold of a latency SLI. Defaults to the
	// monitor's degradedResponseTimeMs, else 1000.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=600000
	LatencyThresholdMs int32 `json:"latencyThresholdMs,omitempty"`
	// windowMinutes is the rolling compliance window (60-43200). Defaults to
	// 43200 (30 days).
	// +optional
	// +kubebuilder:validation:Minimum=60
	// +kubebuilder:validation:Maximum=43200
	WindowMinutes int32 `json:"windowMinutes,omitempty"`
	// burnRateFastThreshold alerts when the 1h and 5m burn rates both exceed it
	// (0.1-100). Defaults to 14.4.
	// +optional
	// +kubebuilder:validation:Minimum=0.1
	// +kubebuilder:validation:Maximum=100
	BurnRateFastThreshold float64 `json:"burnRateFastThreshold,omitempty"`
	// burnRateSlowThreshold alerts when the 6h and 30m burn rates both exceed it
	// (0.1-100). Defaults to 6.
	// +optional
	// +kubebuilder:validation:Minimum=0.1
	// +kubebuilder:validation:Maximum=100
	BurnRateSlowThreshold float64 `json:"burnRateSlowThreshold,omitempty"`
	// enabled turns evaluation and alerts on. Defaults to true.
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
}

// SLO condition types.
const (
	// SLOConditionBudgetExhausted is True when no error budget remains.
	SLOConditionBudgetExhausted = "BudgetExhausted"
	// SLOConditionBurningFast is True when the fast burn-rate alert fires.
	SLOConditionBurningFast = "BurningFast"
	// SLOConditionBurningSlow is True when the slow burn-rate alert fires.
	SLOConditionBurningSlow = "BurningSlow"
)

// SLO condition reasons.
const (
	// ReasonFastBurn means the 1 h and 5 m burn rates exceed the fast threshold.
	ReasonFastBurn = "FastBurn"
	// ReasonSlowBurn means the 6 h and 30 m burn rates exceed the slow threshold.
	ReasonSlowBurn = "SlowBurn"
	// ReasonBelowThreshold means a burn-rate alert does not fire.
	ReasonBelowThreshold = "BelowThreshold"
	// ReasonExhausted means no error budget remains.
	ReasonExhausted = "Exhausted"
	// ReasonBudgetLeft means error budget remains.
	ReasonBudgetLeft = "BudgetLeft"
	// ReasonDisabled means evaluation is turned off (spec.enabled is false).
	ReasonDisabled = "Disabled"
)

// SLOStatus is the observed state of an SLO.
type SLOStatus struct {
	// observedGeneration is the generation this status describes; -1 until
	// a controller first writes status, so kstatus reports InProgress.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// currentSLI is the share of good events over the window, in percent.
	// +optional
	CurrentSLI *float64 `json:"currentSLI,omitempty"`
	// errorBudgetMinutes is the window's total error budget.
	// +optional
	ErrorBudgetMinutes *float64 `json:"errorBudgetMinutes,omitempty"`
	// errorBudgetRemainingMinutes is what is left of it.
	// +optional
	ErrorBudgetRemainingMinutes *float64 `json:"errorBudgetRemainingMinutes,omitempty"`
	// errorBudgetRemainingPercent is what is left, in percent of the total.
	// +optional
	ErrorBudgetRemainingPercent *float64 `json:"errorBudgetRemainingPercent,omitempty"`
	// burnRates are the burn rates of the alert windows (5m, 30m, 1h, 6h).
	// +optional
	// +listType=map
	// +listMapKey=window
	BurnRates []BurnRate `json:"burnRates,omitempty"`
	// lastEvaluatedAt is when the SLI was last computed.
	// +optional
	LastEvaluatedAt *metav1.Time `json:"lastEvaluatedAt,omitempty"`
	// conditions: Ready, BudgetExhausted, BurningFast, BurningSlow.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// BurnRate is the error-budget burn rate over one window.
type BurnRate struct {
	// window is the window length, such as 1h.
	Window string `json:"window"`
	// rate is the burn rate (1 = exactly on budget).
	Rate float64 `json:"rate"`
}

// SLO is a service-level objective with an error budget and burn-rate alerts.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=uptime
// +kubebuilder:printcolumn:name="Monitor",type=string,JSONPath=`.spec.monitorRef.name`
// +kubebuilder:printcolumn:name="Target",type=number,JSONPath=`.spec.targetPercentage`
// +kubebuilder:printcolumn:name="SLI",type=number,JSONPath=`.status.currentSLI`
// +kubebuilder:printcolumn:name="Budget Left %",type=number,JSONPath=`.status.errorBudgetRemainingPercent`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type SLO struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the objective.
	// +required
	Spec SLOSpec `json:"spec"`
	// status is the observed state.
	// +optional
	// +kubebuilder:default={"observedGeneration":-1}
	Status SLOStatus `json:"status,omitempty"`
}

// SLOList is a list of SLOs.
// +kubebuilder:object:root=true
type SLOList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SLO `json:"items"`
}

func init() {
	SchemeBuilder.Register(&SLO{}, &SLOList{})
}
