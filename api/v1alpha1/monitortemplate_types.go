package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DiscoveredKind is a kind of object a MonitorTemplate makes Monitors of.
// +kubebuilder:validation:Enum=Ingress;HTTPRoute;GRPCRoute;Service
type DiscoveredKind string

// The kinds discovery reads: Ingresses (networking.k8s.io/v1), Gateway API
// routes (gateway.networking.k8s.io/v1, when its CRDs are installed) and
// Services.
const (
	KindIngress   DiscoveredKind = "Ingress"
	KindHTTPRoute DiscoveredKind = "HTTPRoute"
	KindGRPCRoute DiscoveredKind = "GRPCRoute"
	KindService   DiscoveredKind = "Service"
)

// DiscoveredKinds are the kinds discovery reads, in the order status lists
// them.
var DiscoveredKinds = []DiscoveredKind{KindIngress, KindHTTPRoute, KindGRPCRoute, KindService}

// Annotations and labels of discovery. An object opts in with
// MonitorAnnotation: "true" (no template needs to select it) or is
// selected by a MonitorTemplate's selector; "false" opts a selected object
// out. The other annotations override the template per object. A value
// discovery cannot read never blocks the object: it is ignored, reported as
// a Warning Event on the object and in the serving template's status.
const (
	// MonitorAnnotation "true" opts an Ingress, HTTPRoute, GRPCRoute or
	// Service in, "false" opts it out of every template.
	MonitorAnnotation = "uptime-operator.io/monitor"
	// MonitorPathAnnotation is the path checked on each host instead of
	// the object's own paths (e.g. /healthz).
	MonitorPathAnnotation = "uptime-operator.io/monitor-path"
	// MonitorIntervalAnnotation is the check interval in seconds (15-900).
	MonitorIntervalAnnotation = "uptime-operator.io/monitor-interval"
	// MonitorTemplateAnnotation names the MonitorTemplate of the object's
	// namespace that serves it, whether or not its selector matches.
	MonitorTemplateAnnotation = "uptime-operator.io/monitor-template"
	// MonitorPortAnnotation is the Service port checked (a port number or
	// a port name); Services only.
	MonitorPortAnnotation = "uptime-operator.io/monitor-port"
	// MonitorStatusPageAnnotation names the StatusPage of the namespace
	// the object's Monitors join; overrides the template's
	// statusPage.name.
	MonitorStatusPageAnnotation = "uptime-operator.io/monitor-status-page"

	// DiscoveredFromLabel on a Monitor names the MonitorTemplate that made
	// it; with ManagedByLabel it marks a Monitor the discovery controller
	// may update and delete (it also owns it by ownerReference).
	DiscoveredFromLabel = "monitoring.uptime-operator.io/template"
	// DiscoveredSourceAnnotation on a Monitor is the object it checks, as
	// Kind/name.
	DiscoveredSourceAnnotation = "monitoring.uptime-operator.io/source"

	// ImplicitTemplateName is the MonitorTemplate the controller creates in
	// a namespace for objects that opt in by annotation without naming a
	// template and that no template selects; it owns their Monitors, and
	// the controller deletes it when no object needs it any more.
	ImplicitTemplateName = "annotated"

	// MaxMonitorsPerObject is the most Monitors one object yields; further
	// host/path pairs are reported as skipped.
	MaxMonitorsPerObject = 20
)

// MonitorTemplate condition reasons (condition Ready).
const (
	// ReasonMonitorConflict means a Monitor (or SLO) of a wanted name exists
	// and was not made by this template; it is left alone.
	ReasonMonitorConflict = "MonitorConflict"
	// ReasonMonitorRefused means admission refused a Monitor (or SLO) the
	// template wanted (plan limits, references, private targets).
	ReasonMonitorRefused = "MonitorRefused"
)

// MonitorTemplateSpec says which objects of the namespace become Monitors
// and what the Monitors look like.
type MonitorTemplateSpec struct {
	// selector selects the namespace's objects by label. Absent, the
	// template serves only the objects that name it in the
	// uptime-operator.io/monitor-template annotation.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
	// kinds are the kinds the selector applies to (Ingress, HTTPRoute,
	// GRPCRoute, Service). Empty means all of them.
	// +optional
	// +kubebuilder:validation:MaxItems=4
	// +listType=set
	Kinds []DiscoveredKind `json:"kinds,omitempty"`
	// path, when set, is the one path checked on each host instead of the
	// paths of the object's rules (e.g. /healthz); the annotation
	// uptime-operator.io/monitor-path overrides it per object. It must
	// start with /.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^/[^\s?#]*$`
	Path string `json:"path,omitempty"`
	// maxMonitorsPerObject bounds the Monitors one object yields (1-20,
	// default 20); the host/path pairs beyond it are reported as skipped.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=20
	MaxMonitorsPerObject int32 `json:"maxMonitorsPerObject,omitempty"`
	// monitor is what every Monitor made from a selected object carries;
	// the url (or grpc target) and the display name come from the object.
	// +optional
	Monitor DiscoveredMonitorSpec `json:"monitor,omitempty"`
	// statusPage, when set, puts every Monitor the template makes on a
	// StatusPage of the namespace: the Monitors carry the label
	// monitoring.uptime-operator.io/status-page (StatusPageLabel), which
	// the page shows after its own list, so they join and leave the page
	// with the app while the page's spec stays untouched. The annotation
	// uptime-operator.io/monitor-status-page overrides the name per object.
	// +optional
	StatusPage *DiscoveredStatusPage `json:"statusPage,omitempty"`
	// slo, when set, gives every Monitor the template makes an SLO of the
	// same name with these settings, owned by the template like the
	// Monitor (the namespace's plan must allow SLOs).
	// +optional
	SLO *DiscoveredSLOSpec `json:"slo,omitempty"`
}

// DiscoveredStatusPage is the StatusPage discovered Monitors join.
type DiscoveredStatusPage struct {
	// name is the StatusPage's metadata.name, in the template's namespace
	// (a page that does not exist yet shows the Monitors once it is
	// created). It is a label value: at most 63 characters.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`
	// section is the heading the Monitors are shown under (up to 100
	// characters); empty shows them without one.
	// +optional
	// +kubebuilder:validation:MaxLength=100
	Section string `json:"section,omitempty"`
}

// DiscoveredSLOSpec is the part of an SLOSpec a template sets: each field
// is the SLOSpec field of the same name (see there); monitorRef is the
// discovered Monitor.
type DiscoveredSLOSpec struct {
	// targetPercentage is SLOSpec.targetPercentage (90-99.999).
	// +required
	// +kubebuilder:validation:Minimum=90
	// +kubebuilder:validation:Maximum=99.999
	TargetPercentage float64 `json:"targetPercentage"`
	// sliType is SLOSpec.sliType: availability (default) or latency.
	// +optional
	SLIType SLIType `json:"sliType,omitempty"`
	// latencyThresholdMs is SLOSpec.latencyThresholdMs (1-600000).
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=600000
	LatencyThresholdMs int32 `json:"latencyThresholdMs,omitempty"`
	// windowMinutes is SLOSpec.windowMinutes (60-43200).
	// +optional
	// +kubebuilder:validation:Minimum=60
	// +kubebuilder:validation:Maximum=43200
	WindowMinutes int32 `json:"windowMinutes,omitempty"`
}

// DiscoveredMonitorSpec is the part of a MonitorSpec a template sets: each
// field is the MonitorSpec field of the same name (see there), and the
// Monitors it makes go through the same admission as any other Monitor.
// The url, name and key come from the object; Secret references
// (header valueFrom) are refused, because the controller writes Monitors
// with its own identity and an app team that may edit an Ingress's host
// would otherwise send a Secret's value to a host of its choice.
// +kubebuilder:validation:XValidation:rule="!has(self.http) || !has(self.http.headers) || self.http.headers.all(h, !has(h.valueFrom))",message="discovered monitors take no Secret references: headers need a literal value",fieldPath=".http.headers"
// +kubebuilder:validation:XValidation:rule="!has(self.http) || !has(self.http.assertions) || size(self.http.assertions) == 0 || (has(self.type) && self.type == 'api')",message="assertions are only allowed for api monitors",fieldPath=".http.assertions"
type DiscoveredMonitorSpec struct {
	// type is http (default; grpc for GRPCRoutes) or api (http with
	// assertions). A GRPCRoute always yields grpc monitors.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self in ['http', 'api']",message="type must be http or api"
	Type MonitorType `json:"type,omitempty"`
	// intervalSeconds is MonitorSpec.intervalSeconds (15-900).
	// +optional
	// +kubebuilder:validation:Minimum=15
	// +kubebuilder:validation:Maximum=900
	IntervalSeconds int32 `json:"intervalSeconds,omitempty"`
	// groupRef is MonitorSpec.groupRef: AlertChannels routing by group
	// (routing.scope groups) alert on the discovered Monitors.
	// +optional
	GroupRef *LocalObjectReference `json:"groupRef,omitempty"`
	// escalationPolicyRef is MonitorSpec.escalationPolicyRef.
	// +optional
	EscalationPolicyRef *LocalObjectReference `json:"escalationPolicyRef,omitempty"`
	// tags is MonitorSpec.tags (up to 20).
	// +optional
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=32
	// +listType=atomic
	Tags []string `json:"tags,omitempty"`
	// regions is MonitorSpec.regions (up to 50).
	// +optional
	// +kubebuilder:validation:MaxItems=50
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=32
	// +listType=set
	Regions []string `json:"regions,omitempty"`
	// notificationEmails is MonitorSpec.notificationEmails (up to 20).
	// +optional
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:items:MaxLength=254
	// +listType=set
	NotificationEmails []string `json:"notificationEmails,omitempty"`
	// confirmation is MonitorSpec.confirmation, the quorum rule.
	// +optional
	Confirmation *ConfirmationSpec `json:"confirmation,omitempty"`
	// http is MonitorSpec.http of http and api monitors: expected status
	// codes, keyword, assertions (api), timeouts, literal headers.
	// +optional
	HTTP *HTTPConfig `json:"http,omitempty"`
}

// DiscoveredObject is what a template made of one object.
type DiscoveredObject struct {
	// kind is Ingress, HTTPRoute, GRPCRoute or Service.
	Kind DiscoveredKind `json:"kind"`
	// name is the object's metadata.name.
	Name string `json:"name"`
	// monitors are the names of the Monitors made of the object (and of
	// their SLOs, when the template sets slo).
	// +optional
	// +listType=atomic
	Monitors []string `json:"monitors,omitempty"`
	// skipped are the object's endpoints (host and path) that made no
	// Monitor, each with its reason.
	// +optional
	// +listType=atomic
	Skipped []SkippedEndpoint `json:"skipped,omitempty"`
	// warnings are annotations discovery could not read (ignored) and
	// fall-backs it took (a route's Gateway not found: http assumed).
	// +optional
	// +listType=atomic
	Warnings []string `json:"warnings,omitempty"`
}

// SkippedEndpoint is an endpoint of an object that made no Monitor.
type SkippedEndpoint struct {
	// endpoint is the host and path (or the rule) skipped.
	Endpoint string `json:"endpoint"`
	// reason says why: no host, a path that is not a plain URL path, over
	// the per-object bound, a conflicting Monitor, refused by admission.
	Reason string `json:"reason"`
}

// MonitorTemplateStatus is the observed state of a MonitorTemplate.
type MonitorTemplateStatus struct {
	// observedGeneration is the generation this status describes; -1 until
	// a controller first writes status, so kstatus reports InProgress.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// monitors counts the Monitors the template made.
	// +optional
	Monitors int32 `json:"monitors,omitempty"`
	// objects are the objects the template serves, by kind and name (up to
	// 100 listed; objectsTotal counts them all).
	// +optional
	// +listType=atomic
	Objects []DiscoveredObject `json:"objects,omitempty"`
	// objectsTotal counts the objects the template serves.
	// +optional
	ObjectsTotal int32 `json:"objectsTotal,omitempty"`
	// conditions: Ready (False with MonitorConflict or MonitorRefused when
	// a wanted Monitor could not be written), Reconciling and Stalled.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// MonitorTemplate makes Monitors of the Ingresses, Gateway API routes and
// Services of its namespace that its selector selects or that opt in by
// annotation, one per host and path, and keeps them following the objects.
// It owns the Monitors it makes (deleting the template deletes them;
// deleting the object deletes only its Monitors). docs/discovery.md.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=mtpl,categories=uptime
// +kubebuilder:printcolumn:name="Objects",type=integer,JSONPath=`.status.objectsTotal`
// +kubebuilder:printcolumn:name="Monitors",type=integer,JSONPath=`.status.monitors`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type MonitorTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec says which objects become Monitors and how.
	// +optional
	Spec MonitorTemplateSpec `json:"spec,omitempty"`
	// status is the observed state.
	// +optional
	// +kubebuilder:default={"observedGeneration":-1}
	Status MonitorTemplateStatus `json:"status,omitempty"`
}

// MonitorTemplateList is a list of MonitorTemplates.
// +kubebuilder:object:root=true
type MonitorTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MonitorTemplate `json:"items"`
}

func init() {
	SchemeBuilder.Register(&MonitorTemplate{}, &MonitorTemplateList{})
}
