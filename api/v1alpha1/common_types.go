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
	// CredentialsLabel on a Secret, with the value CredentialsLabelValue,
	// lets the Monitors of its namespace read it through a header's
	// valueFrom. A Monitor writer may not be allowed to read Secrets, while
	// the manager resolves references with its own permission: without an
	// opt-in every Monitor writer could send any Secret of the namespace to
	// a server of their choice (a confused deputy). Whoever labels a Secret
	// may write Secrets, so the label is their consent, as cert-manager and
	// Flux scope what a resource may reference. A Monitor's own credentials
	// Secret (<monitor>-credentials, made by the REST API) needs no label;
	// Secrets the operator makes (signing secrets, status page passwords,
	// API keys, other Monitors' credentials) are never readable, labelled
	// or not. docs/security.md, "Credentials", has the rule.
	CredentialsLabel = "monitoring.uptime-operator.io/credentials"
	// CredentialsLabelValue is the value of CredentialsLabel that opts in.
	CredentialsLabelValue = "true"
	// CredentialsOfLabel marks a Monitor's own credentials Secret, made by
	// the REST API; its value is the Monitor's name.
	CredentialsOfLabel = "monitoring.uptime-operator.io/credentials-of"
	// CredentialsPendingAnnotation, "true" on a credentials Secret, marks
	// one the REST API made for a Monitor it is about to create (so not
	// owned yet); the API owns the Secret by the Monitor's UID right after
	// and removes the mark. A Monitor's own Secret is otherwise recognised
	// by its owner's UID only, never by name (credentials.IsOwn).
	CredentialsPendingAnnotation = "monitoring.uptime-operator.io/credentials-pending"
	// ManagedByLabel with the value ManagedByValue marks objects the
	// operator makes for itself.
	ManagedByLabel = "app.kubernetes.io/managed-by"
	// ManagedByValue is the value of ManagedByLabel on the operator's own
	// objects.
	ManagedByValue = "uptime-operator"
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
	// ReasonSecretNotAllowed means a referenced Secret may not be read by
	// the object: it is made by the operator, or it neither belongs to the
	// object nor opts in with CredentialsLabel.
	ReasonSecretNotAllowed = "SecretNotAllowed"
	// ReasonPaused means the object is paused by its spec.
	ReasonPaused = "Paused"
	// ReasonReconcileError means reconciliation failed; the message says why.
	ReasonReconcileError = "ReconcileError"
	// ReasonNotStarted means an OnCallSchedule's rotation has not begun yet.
	ReasonNotStarted = "NotStarted"
)
