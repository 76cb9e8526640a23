package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MaintenanceScope says what a maintenance window covers.
// +kubebuilder:validation:Enum=all;monitors;groups
type MaintenanceScope string

// Recurrence frequencies of maintenance windows.
// +kubebuilder:validation:Enum=none;daily;weekly;monthly
type RecurrenceFrequency string

// MaintenanceWindowSpec is a planned period in which alerts are suppressed and
// covered monitors show `maintenance`.
// +kubebuilder:validation:XValidation:rule="self.endsAt > self.startsAt",message="endsAt must be after startsAt",fieldPath=".endsAt"
// +kubebuilder:validation:XValidation:rule="self.scope != 'monitors' || (has(self.monitors) && size(self.monitors) > 0)",message="monitors is required when scope is monitors",fieldPath=".monitors"
// +kubebuilder:validation:XValidation:rule="self.scope != 'groups' || (has(self.groups) && size(self.groups) > 0)",message="groups is required when scope is groups",fieldPath=".groups"
type MaintenanceWindowSpec struct {
	// title names the window (1-255 characters).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	Title string `json:"title"`
	// description is shown on status pages (up to 5000 characters).
	// +optional
	// +kubebuilder:validation:MaxLength=5000
	Description string `json:"description,omitempty"`
	// startsAt is the first start.
	// +required
	StartsAt metav1.Time `json:"startsAt"`
	// endsAt is the first end.
	// +required
	EndsAt metav1.Time `json:"endsAt"`
	// timeZone is the IANA zone recurrences are computed in. Defaults to UTC.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	TimeZone string `json:"timeZone,omitempty"`
	// recurrence repeats the window.
	// +optional
	Recurrence *Recurrence `json:"recurrence,omitempty"`
	// scope: all monitors of the namespace, listed monitors, or listed groups.
	// +required
	Scope MaintenanceScope `json:"scope"`
	// monitors covered (scope monitors; up to 500).
	// +optional
	// +kubebuilder:validation:MaxItems=500
	// +listType=atomic
	Monitors []LocalObjectReference `json:"monitors,omitempty"`
	// groups covered (scope groups; up to 100).
	// +optional
	// +kubebuilder:validation:MaxItems=100
	// +listType=atomic
	Groups []LocalObjectReference `json:"groups,omitempty"`
	// impact: low, medium (default) or high.
	// +optional
	// +kubebuilder:validation:Enum=low;medium;high
	Impact string `json:"impact,omitempty"`
	// cancelled ends the window for good.
	// +optional
	Cancelled bool `json:"cancelled,omitempty"`
}

// Recurrence repeats a maintenance window.
type Recurrence struct {
	// frequency: none, daily, weekly or monthly.
	// +required
	Frequency RecurrenceFrequency `json:"frequency"`
	// interval repeats every N periods (1-52). Defaults to 1.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=52
	Interval int32 `json:"interval,omitempty"`
	// until ends the recurrence.
	// +optional
	Until *metav1.Time `json:"until,omitempty"`
}

// MaintenanceState is the live state of a window.
// +kubebuilder:validation:Enum=scheduled;ongoing;completed;cancelled
type MaintenanceState string

// Maintenance window live states.
const (
	MaintenanceScheduled MaintenanceState = "scheduled"
	MaintenanceOngoing   MaintenanceState = "ongoing"
	MaintenanceCompleted MaintenanceState = "completed"
	MaintenanceCancelled MaintenanceState = "cancelled"
)

// MaintenanceWindowStatus is the observed state of a window.
type MaintenanceWindowStatus struct {
	// observedGeneration is the generation this status describes; -1 until
	// a controller first writes status, so kstatus reports InProgress.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// state is scheduled, ongoing, completed or cancelled.
	// +optional
	State MaintenanceState `json:"state,omitempty"`
	// currentStart and currentEnd bound the occurrence now in effect or next.
	// +optional
	CurrentStart *metav1.Time `json:"currentStart,omitempty"`
	// +optional
	CurrentEnd *metav1.Time `json:"currentEnd,omitempty"`
	// conditions: Ready.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// MaintenanceWindow suppresses alerts for covered monitors while it is ongoing.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=mw,categories=uptime
// +kubebuilder:printcolumn:name="Title",type=string,JSONPath=`.spec.title`
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.state`
// +kubebuilder:printcolumn:name="Starts",type=date,JSONPath=`.spec.startsAt`
// +kubebuilder:printcolumn:name="Ends",type=date,JSONPath=`.spec.endsAt`
type MaintenanceWindow struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the window.
	// +required
	Spec MaintenanceWindowSpec `json:"spec"`
	// status is the observed state.
	// +optional
	// +kubebuilder:default={"observedGeneration":-1}
	Status MaintenanceWindowStatus `json:"status,omitempty"`
}

// MaintenanceWindowList is a list of MaintenanceWindows.
// +kubebuilder:object:root=true
type MaintenanceWindowList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MaintenanceWindow `json:"items"`
}

func init() {
	SchemeBuilder.Register(&MaintenanceWindow{}, &MaintenanceWindowList{})
}
