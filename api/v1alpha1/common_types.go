package v1alpha1

// LocalObjectReference names an object of a known kind in the same namespace.
type LocalObjectReference struct {
	// name is the metadata.name of the referenced object.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// SecretKeySelector selects one key of a Secret in the object's namespace.
type SecretKeySelector struct {
	// name is the Secret's metadata.name.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// key is the data key inside the Secret.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Key string `json:"key"`
}

// Labels and annotations the operator reads or writes.
const (
	// PlanLabel on a Namespace selects the Plan that governs the workspace.
	// Without it the manager's default plan applies.
	PlanLabel = "uptime-operator.io/plan"
	// MonitorKeyField is the field selector on spec.key (a selectable field
	// of the Monitor CRD): kube-apiserver filters keyed monitors in its
	// watch cache, so admission does not read the whole namespace.
	MonitorKeyField = "spec.key"
	// UIDIndex is the manager's cache field index on metadata.uid (of
	// Monitors and every kind the REST API addresses by id): one indexed
	// read finds an object by id instead of copying its namespace.
	UIDIndex = "metadata.uid"
	// HistoryFinalizer keeps a Monitor until its history is retired in the
	// store: kept there for a re-created Monitor to adopt (see
	// AdoptHistoryFromAnnotation), pruned after the retention otherwise.
	HistoryFinalizer = "monitoring.uptime-operator.io/history"
)

// Common condition types shared by several kinds.
const (
	// ConditionReady is True when the object is fully reconciled and in effect.
	ConditionReady = "Ready"
)

// Common condition reasons shared by several kinds.
const (
	// ReasonReconciled means the last reconciliation succeeded.
	ReasonReconciled = "Reconciled"
	// ReasonReferenceNotFound means a referenced object does not exist.
	ReasonReferenceNotFound = "ReferenceNotFound"
	// ReasonSecretNotFound means a referenced Secret or key does not exist.
	ReasonSecretNotFound = "SecretNotFound"
	// ReasonPaused means the object is paused by its spec.
	ReasonPaused = "Paused"
	// ReasonReconcileError means reconciliation failed; the message says why.
	ReasonReconcileError = "ReconcileError"
	// ReasonNotStarted means an OnCallSchedule's rotation has not begun yet.
	ReasonNotStarted = "NotStarted"
)
