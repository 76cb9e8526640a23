package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MonitorGroupSpec groups monitors for summaries, routing and maintenance.
type MonitorGroupSpec struct {
	// name is the display name (1-255 characters). Defaults to metadata.name.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	Name string `json:"name,omitempty"`
	// description says what the group holds (up to 1000 characters).
	// +optional
	// +kubebuilder:validation:MaxLength=1000
	Description string `json:"description,omitempty"`
	// notificationEmails receive alerts of the group's monitors (up to 20;
	// owner only through the REST API).
	// +optional
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:items:MaxLength=254
	// +listType=set
	NotificationEmails []string `json:"notificationEmails,omitempty"`
}

// MonitorGroupStatus is the observed state of a group.
type MonitorGroupStatus struct {
	// observedGeneration is the generation this status describes; -1 until
	// a controller first writes status, so kstatus reports InProgress.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// monitors counts the group's monitors.
	// +optional
	Monitors int32 `json:"monitors,omitempty"`
	// down counts its monitors with an open incident.
	// +optional
	Down int32 `json:"down,omitempty"`
	// conditions: Ready.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// MonitorGroup is a named set of monitors.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=mg,categories=uptime
// +kubebuilder:printcolumn:name="Name",type=string,JSONPath=`.spec.name`
// +kubebuilder:printcolumn:name="Monitors",type=integer,JSONPath=`.status.monitors`
// +kubebuilder:printcolumn:name="Down",type=integer,JSONPath=`.status.down`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type MonitorGroup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec MonitorGroupSpec `json:"spec,omitempty"`
	// +optional
	// +kubebuilder:default={"observedGeneration":-1}
	Status MonitorGroupStatus `json:"status,omitempty"`
}

// MonitorGroupList is a list of MonitorGroups.
// +kubebuilder:object:root=true
type MonitorGroupList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MonitorGroup `json:"items"`
}

// EscalationPolicySpec escalates unacknowledged incidents step by step.
type EscalationPolicySpec struct {
	// description says when the policy applies (up to 1000 characters).
	// +optional
	// +kubebuilder:validation:MaxLength=1000
	Description string `json:"description,omitempty"`
	// steps run in order while the incident stays unacknowledged (1-10).
	// +required
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=10
	// +listType=atomic
	Steps []EscalationStep `json:"steps"`
	// repeat runs the steps again this many times (0-10).
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10
	Repeat int32 `json:"repeat,omitempty"`
}

// EscalationStep notifies channels and people after a delay.
// +kubebuilder:validation:XValidation:rule="(has(self.channels) && size(self.channels) > 0) || (has(self.emails) && size(self.emails) > 0) || (has(self.onCall) && size(self.onCall) > 0)",message="a step needs channels, emails or onCall"
type EscalationStep struct {
	// delayMinutes after the incident opened (or the previous step) before
	// this step fires (0-1440).
	// +required
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1440
	DelayMinutes int32 `json:"delayMinutes"`
	// channels are AlertChannel names notified (up to 20).
	// +optional
	// +kubebuilder:validation:MaxItems=20
	// +listType=atomic
	Channels []LocalObjectReference `json:"channels,omitempty"`
	// emails are notified (up to 20).
	// +optional
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:items:MaxLength=254
	// +listType=set
	Emails []string `json:"emails,omitempty"`
	// onCall names OnCallSchedules of the namespace; whoever is on call in
	// each when the step fires is emailed (up to 10).
	// +optional
	// +kubebuilder:validation:MaxItems=10
	// +listType=atomic
	OnCall []LocalObjectReference `json:"onCall,omitempty"`
}

// EscalationPolicyStatus is the observed state of a policy.
type EscalationPolicyStatus struct {
	// observedGeneration is the generation this status describes; -1 until
	// a controller first writes status, so kstatus reports InProgress.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// conditions: Ready (False while a channel reference is missing).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// EscalationPolicy escalates incidents that nobody acknowledges.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=escpol,categories=uptime
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type EscalationPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec EscalationPolicySpec `json:"spec"`
	// +optional
	// +kubebuilder:default={"observedGeneration":-1}
	Status EscalationPolicyStatus `json:"status,omitempty"`
}

// EscalationPolicyList is a list of EscalationPolicies.
// +kubebuilder:object:root=true
type EscalationPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []EscalationPolicy `json:"items"`
}

// Continent of a probe region.
// +kubebuilder:validation:Enum=africa;antarctica;asia;europe;north-america;oceania;south-america
type Continent string

// ProbeRegionSpec describes a vantage point checks run from. Regions are
// cluster-scoped: every workspace may use those its plan allows.
type ProbeRegionSpec struct {
	// code is the region code monitors name (defaults to metadata.name).
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`
	Code string `json:"code,omitempty"`
	// displayName is the human label (up to 100 characters).
	// +optional
	// +kubebuilder:validation:MaxLength=100
	DisplayName string `json:"displayName,omitempty"`
	// city of the vantage point.
	// +optional
	// +kubebuilder:validation:MaxLength=100
	City string `json:"city,omitempty"`
	// country as ISO 3166-1 alpha-2.
	// +optional
	// +kubebuilder:validation:Pattern=`^[A-Z]{2}$`
	Country string `json:"country,omitempty"`
	// continent of the vantage point.
	// +optional
	Continent Continent `json:"continent,omitempty"`
	// isp names the access network of a last-mile vantage point. Failures
	// only from ISP regions while other regions reach the target raise
	// last-mile notices instead of incidents.
	// +optional
	// +kubebuilder:validation:MaxLength=100
	ISP string `json:"isp,omitempty"`
	// placement says where the region's probe agents run.
	// +optional
	Placement ProbePlacement `json:"placement,omitempty"`
	// browser says where the region's browser checks get their browser
	// and how many each agent runs at once.
	// +optional
	Browser *ProbeRegionBrowser `json:"browser,omitempty"`
}

// PlacementMode says who runs a region's agents.
// +kubebuilder:validation:Enum=managed;remote;local
type PlacementMode string

// Placement modes.
const (
	// PlacementManaged: the manager runs a probe Deployment in this cluster.
	PlacementManaged PlacementMode = "managed"
	// PlacementRemote: agents run elsewhere (another cluster) with a region token.
	PlacementRemote PlacementMode = "remote"
	// PlacementLocal: the manager checks in-process (dev mode).
	PlacementLocal PlacementMode = "local"
)

// ProbePlacement configures a region's probe Deployment.
type ProbePlacement struct {
	// mode: managed (default), remote or local.
	// +optional
	Mode PlacementMode `json:"mode,omitempty"`
	// replicas of the probe Deployment (1-20). Defaults to 1.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=20
	Replicas int32 `json:"replicas,omitempty"`
	// nodeSelector places the agents.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// tolerations of the agents.
	// +optional
	// +kubebuilder:validation:MaxItems=20
	// +listType=atomic
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
	// resources of the agent container. Empty: requests of 50m CPU and 64Mi
	// memory and a 256Mi memory limit (ProbeDefaultResources).
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
	// affinity of the agent Pods.
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`
	// topologySpreadConstraints of the agent Pods; a constraint without a
	// labelSelector selects the region's agents. Empty with replicas > 1:
	// one soft spread over kubernetes.io/hostname.
	// +optional
	// +kubebuilder:validation:MaxItems=8
	// +listType=atomic
	TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`
	// imagePullSecrets of the agent Pods, added to the ones the manager
	// passes to every probe Deployment (the chart's imagePullSecrets).
	// +optional
	// +kubebuilder:validation:MaxItems=8
	// +listType=atomic
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`
	// priorityClassName of the agent Pods.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	PriorityClassName string `json:"priorityClassName,omitempty"`
	// netRaw grants the agent container the NET_RAW capability for ping
	// monitors. Off by default: agent Pods set the safe sysctl
	// net.ipv4.ping_group_range instead, which Pod Security baseline and
	// restricted allow, while NET_RAW violates both; turn it on only where
	// a cluster refuses that sysctl and the region's namespace allows
	// NET_RAW (the agent runs as non-root, so the capability also needs the
	// image's file capability to take effect).
	// +optional
	NetRaw bool `json:"netRaw,omitempty"`
	// tokenSecretRef is the region token remote agents present.
	// +optional
	TokenSecretRef *SecretKeySelector `json:"tokenSecretRef,omitempty"`
	// namespace of remote region token secrets and managed Deployments.
	// Defaults to the manager's namespace.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`
}

// ProbeRegionStatus is the observed state of a region.
type ProbeRegionStatus struct {
	// observedGeneration is the generation this status describes; -1 until
	// a controller first writes status, so kstatus reports InProgress.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// online is true while at least one agent contacted the manager recently.
	// +optional
	Online bool `json:"online,omitempty"`
	// onlineAgents counts agents seen recently.
	// +optional
	OnlineAgents int32 `json:"onlineAgents,omitempty"`
	// lastContact is the last time an agent of the region contacted the manager.
	// +optional
	LastContact *metav1.Time `json:"lastContact,omitempty"`
	// monitors counts monitors assigned to the region.
	// +optional
	Monitors int32 `json:"monitors,omitempty"`
	// bufferedResults sums the results the region's online agents still
	// held, waiting for delivery, when each last pushed to a manager
	// replica (any replica: it is shared through the store). It is not zero
	// while agents replay what they buffered when they could not reach the
	// manager; an agent that cannot reach it at all is not online, so it is
	// not counted here (its own uptime_probe_buffered_results metric is).
	// +optional
	// +kubebuilder:validation:Minimum=0
	BufferedResults int64 `json:"bufferedResults,omitempty"`
	// replayedResults counts the results the region's agents delivered late
	// and the managers accepted (each stored once, however often it was
	// sent): held back by failed pushes (a cut link, a refused token) or
	// left on disk by an earlier run of an agent. It only grows.
	// +optional
	// +kubebuilder:validation:Minimum=0
	ReplayedResults int64 `json:"replayedResults,omitempty"`
	// lastReplay is the last time results of the region were replayed.
	// +optional
	LastReplay *metav1.Time `json:"lastReplay,omitempty"`
	// conditions: Ready, and ProbePods for managed regions (whether the
	// probe Deployment can create its Pods; False with the Deployment's
	// ReplicaFailure message, for example a Pod Security refusal).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ProbeRegion condition types and reasons.
const (
	// ProbeRegionConditionProbePods is True while the managed probe
	// Deployment can create its Pods.
	ProbeRegionConditionProbePods = "ProbePods"
	// ReasonPodsCreated means the probe Deployment reports no failure to
	// create its Pods.
	ReasonPodsCreated = "PodsCreated"
	// ReasonPodsRefused means the probe Deployment's ReplicaSet cannot
	// create Pods (its ReplicaFailure condition, for example FailedCreate
	// by Pod Security admission or a ResourceQuota); the message is the
	// Deployment's.
	ReasonPodsRefused = "PodsRefused"
	// ReasonScaledToZero means no monitor uses the region, so its probe
	// Deployment runs no Pods.
	ReasonScaledToZero = "ScaledToZero"
)

// ProbeRegion is a vantage point that runs checks.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=preg,categories=uptime
// +kubebuilder:printcolumn:name="Code",type=string,JSONPath=`.spec.code`
// +kubebuilder:printcolumn:name="City",type=string,JSONPath=`.spec.city`
// +kubebuilder:printcolumn:name="Mode",type=string,JSONPath=`.spec.placement.mode`
// +kubebuilder:printcolumn:name="Online",type=boolean,JSONPath=`.status.online`
// +kubebuilder:printcolumn:name="Agents",type=integer,JSONPath=`.status.onlineAgents`,description="agents that contacted the manager within the last 90 s"
// +kubebuilder:printcolumn:name="Last Contact",type=date,JSONPath=`.status.lastContact`,description="the last time an agent of the region contacted the manager"
// +kubebuilder:printcolumn:name="Monitors",type=integer,JSONPath=`.status.monitors`
// +kubebuilder:printcolumn:name="Buffered",type=integer,JSONPath=`.status.bufferedResults`,description="results the online agents still held at their last push, waiting for delivery"
// +kubebuilder:printcolumn:name="Replayed",type=integer,JSONPath=`.status.replayedResults`,priority=1,description="results the agents delivered late, in all"
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,description="why the region is or is not ready (PodsRefused: the cluster refuses its probe Pods)"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ProbeRegion struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec ProbeRegionSpec `json:"spec,omitempty"`
	// +optional
	// +kubebuilder:default={"observedGeneration":-1}
	Status ProbeRegionStatus `json:"status,omitempty"`
}

// ProbeRegionList is a list of ProbeRegions.
// +kubebuilder:object:root=true
type ProbeRegionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ProbeRegion `json:"items"`
}

// Feature is a capability a plan can grant.
// +kubebuilder:validation:Enum=status-pages;white-label;webhooks;sms;slo;dependencies;deploy-events;website-health;third-party-status;ai-assist;telemetry-export
type Feature string

// Plan features.
const (
	FeatureStatusPages      Feature = "status-pages"
	FeatureWhiteLabel       Feature = "white-label"
	FeatureWebhooks         Feature = "webhooks"
	FeatureSMS              Feature = "sms"
	FeatureSLO              Feature = "slo"
	FeatureDependencies     Feature = "dependencies"
	FeatureDeployEvents     Feature = "deploy-events"
	FeatureWebsiteHealth    Feature = "website-health"
	FeatureThirdPartyStatus Feature = "third-party-status"
	FeatureAIAssist         Feature = "ai-assist"
	FeatureTelemetryExport  Feature = "telemetry-export"
)

// PlanLimits are the counts and floors a plan imposes. Zero means unlimited
// (and for minIntervalSeconds, the API minimum of 15).
type PlanLimits struct {
	// monitors is the most monitors a workspace may have.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Monitors int32 `json:"monitors,omitempty"`
	// minIntervalSeconds is the shortest check interval allowed (15-900).
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=900
	MinIntervalSeconds int32 `json:"minIntervalSeconds,omitempty"`
	// probeLocations is the most regions one monitor may use.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=50
	ProbeLocations int32 `json:"probeLocations,omitempty"`
	// statusPages is the most status pages a workspace may have.
	// +optional
	// +kubebuilder:validation:Minimum=0
	StatusPages int32 `json:"statusPages,omitempty"`
	// apiKeys is the most API keys a workspace may have; keys over it are
	// disabled, not deleted.
	// +optional
	// +kubebuilder:validation:Minimum=0
	APIKeys int32 `json:"apiKeys,omitempty"`
	// historyDays is how far back uptime history reaches (default 365).
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=3650
	HistoryDays int32 `json:"historyDays,omitempty"`
}

// PlanSpec is what a workspace on this plan may do.
type PlanSpec struct {
	// displayName is the plan's label (up to 100 characters).
	// +optional
	// +kubebuilder:validation:MaxLength=100
	DisplayName string `json:"displayName,omitempty"`
	// limits are the plan's counts and floors.
	// +optional
	Limits PlanLimits `json:"limits,omitempty"`
	// regions are the region codes allowed; empty allows every region.
	// +optional
	// +kubebuilder:validation:MaxItems=200
	// +listType=set
	Regions []string `json:"regions,omitempty"`
	// defaultRegions are used by monitors that name none; empty means every
	// allowed region (up to probeLocations).
	// +optional
	// +kubebuilder:validation:MaxItems=50
	// +listType=set
	DefaultRegions []string `json:"defaultRegions,omitempty"`
	// features are the capabilities granted.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	// +listType=set
	Features []Feature `json:"features,omitempty"`
}

// Plan is a cluster-scoped set of limits and features. A Namespace selects one
// with the uptime-operator.io/plan label; others get the manager's default.
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories=uptime
// +kubebuilder:printcolumn:name="Display Name",type=string,JSONPath=`.spec.displayName`
// +kubebuilder:printcolumn:name="Monitors",type=integer,JSONPath=`.spec.limits.monitors`
// +kubebuilder:printcolumn:name="Min Interval",type=integer,JSONPath=`.spec.limits.minIntervalSeconds`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Plan struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec PlanSpec `json:"spec,omitempty"`
}

// PlanList is a list of Plans.
// +kubebuilder:object:root=true
type PlanList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Plan `json:"items"`
}

func init() {
	SchemeBuilder.Register(&MonitorGroup{}, &MonitorGroupList{})
	SchemeBuilder.Register(&EscalationPolicy{}, &EscalationPolicyList{})
	SchemeBuilder.Register(&ProbeRegion{}, &ProbeRegionList{})
	SchemeBuilder.Register(&Plan{}, &PlanList{})
}
