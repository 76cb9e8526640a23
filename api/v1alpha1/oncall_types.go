package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OnCallParticipant is a person in an on-call rotation.
type OnCallParticipant struct {
	// name is how the person is shown (1-100 characters).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=100
	Name string `json:"name"`
	// email receives escalation emails while the person is on call.
	// +required
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:MaxLength=254
	Email string `json:"email"`
}

// OnCallOverride puts someone on call for a period instead of the rotation.
// +kubebuilder:validation:XValidation:rule="self.endsAt > self.startsAt",message="endsAt must be after startsAt",fieldPath=".endsAt"
type OnCallOverride struct {
	// participant is on call during the override.
	// +required
	Participant OnCallParticipant `json:"participant"`
	// startsAt begins the override.
	// +required
	StartsAt metav1.Time `json:"startsAt"`
	// endsAt ends it.
	// +required
	EndsAt metav1.Time `json:"endsAt"`
}

// OnCallScheduleSpec is a rotation of people taking turns on call, with
// overrides. Escalation policy steps name schedules to email whoever is on
// call when the step fires.
type OnCallScheduleSpec struct {
	// description says what the schedule covers (up to 1000 characters).
	// +optional
	// +kubebuilder:validation:MaxLength=1000
	Description string `json:"description,omitempty"`
	// participants take turns in this order (1-50).
	// +required
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=50
	// +listType=atomic
	Participants []OnCallParticipant `json:"participants"`
	// shiftHours is the length of one turn (1-720). Defaults to 168 (a week).
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=720
	ShiftHours int32 `json:"shiftHours,omitempty"`
	// startsAt is the first handoff: the first participant's turn starts then.
	// +required
	StartsAt metav1.Time `json:"startsAt"`
	// timeZone is the IANA zone handoffs are shown in. Defaults to UTC.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	TimeZone string `json:"timeZone,omitempty"`
	// overrides replace the rotation for their period (up to 100).
	// +optional
	// +kubebuilder:validation:MaxItems=100
	// +listType=atomic
	Overrides []OnCallOverride `json:"overrides,omitempty"`
}

// OnCallScheduleStatus is who is on call now.
type OnCallScheduleStatus struct {
	// observedGeneration is the generation this status describes; -1 until
	// a controller first writes status, so kstatus reports InProgress.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// current is on call now; absent before the schedule starts.
	// +optional
	Current *OnCallParticipant `json:"current,omitempty"`
	// currentUntil is when the current turn or override ends.
	// +optional
	CurrentUntil *metav1.Time `json:"currentUntil,omitempty"`
	// conditions: Ready.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// OnCallSchedule is a rotation of people on call.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=oncall,categories=uptime
// +kubebuilder:printcolumn:name="On Call",type=string,JSONPath=`.status.current.name`
// +kubebuilder:printcolumn:name="Until",type=date,JSONPath=`.status.currentUntil`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type OnCallSchedule struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec OnCallScheduleSpec `json:"spec"`
	// +optional
	// +kubebuilder:default={"observedGeneration":-1}
	Status OnCallScheduleStatus `json:"status,omitempty"`
}

// OnCallScheduleList is a list of OnCallSchedules.
// +kubebuilder:object:root=true
type OnCallScheduleList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OnCallSchedule `json:"items"`
}

func init() {
	SchemeBuilder.Register(&OnCallSchedule{}, &OnCallScheduleList{})
}
