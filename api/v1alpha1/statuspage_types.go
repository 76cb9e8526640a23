package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// StatusPageAccessMode says who may view a status page.
// +kubebuilder:validation:Enum=public;password;sso
type StatusPageAccessMode string

// Status page access modes.
const (
	AccessPublic   StatusPageAccessMode = "public"
	AccessPassword StatusPageAccessMode = "password"
	AccessSSO      StatusPageAccessMode = "sso"
)

// StatusPageSpec is the desired configuration of a public status page.
type StatusPageSpec struct {
	// title is the page heading (1-255 characters).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	Title string `json:"title"`
	// description is shown under the title (up to 1000 characters).
	// +optional
	// +kubebuilder:validation:MaxLength=1000
	Description string `json:"description,omitempty"`
	// slug is the page's path segment (/s/<slug>, /status/<slug>): 3-64
	// lower-case letters, digits and dashes, unique in the cluster. Defaults to
	// metadata.name.
	// +optional
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`
	Slug string `json:"slug,omitempty"`
	// isPublic publishes the page. An unpublished page answers 404 publicly.
	// +optional
	IsPublic bool `json:"isPublic,omitempty"`
	// logoURL is an https URL of the logo.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:Pattern=`^https://[^\s]+$`
	LogoURL string `json:"logoURL,omitempty"`
	// faviconURL is an https URL of the favicon; needs a white-label plan.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:Pattern=`^https://[^\s]+$`
	FaviconURL string `json:"faviconURL,omitempty"`
	// accentColor is a hex colour such as #1f6feb.
	// +optional
	// +kubebuilder:validation:Pattern=`^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$`
	AccentColor string `json:"accentColor,omitempty"`
	// hidePoweredBy removes the "powered by" line; needs a white-label plan.
	// +optional
	HidePoweredBy bool `json:"hidePoweredBy,omitempty"`
	// showResponseTimes shows response-time sparklines.
	// +optional
	ShowResponseTimes bool `json:"showResponseTimes,omitempty"`
	// monitors are shown on the page in order (up to 500). Monitors of the
	// namespace labelled monitoring.uptime-operator.io/status-page: <this
	// page's name> are shown after them unless listed here (discovered
	// Monitors join that way; docs/status-pages.md); a page shows at most
	// 500 monitors in all.
	// +optional
	// +kubebuilder:validation:MaxItems=500
	// +listType=atomic
	Monitors []StatusPageMonitor `json:"monitors,omitempty"`
	// access says who may view the page. Defaults to public.
	// +optional
	Access *StatusPageAccess `json:"access,omitempty"`
	// languages are the page's languages and translations.
	// +optional
	Languages *StatusPageLanguages `json:"languages,omitempty"`
	// customDomain serves the page when the Host header matches (owner only).
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$`
	CustomDomain string `json:"customDomain,omitempty"`
}

// A Monitor joins a status page by label, without an entry in the page's
// spec: the way discovered Monitors (MonitorTemplate spec.statusPage) follow
// the app onto a page and off it again, while the page's own list stays
// the page owner's (or their GitOps tool's) alone.
const (
	// StatusPageLabel on a Monitor names a StatusPage of its namespace
	// that shows it, after the monitors the page lists in spec.monitors
	// (a monitor listed there keeps its place, section and display name).
	// Removing the label, or the Monitor, takes it off the page.
	StatusPageLabel = "monitoring.uptime-operator.io/status-page"
	// StatusPageSectionAnnotation on a Monitor joining a page by
	// StatusPageLabel is the section it is shown under (up to 100
	// characters; longer is cut).
	StatusPageSectionAnnotation = "monitoring.uptime-operator.io/status-page-section"

	// MaxStatusPageMonitors is the most monitors a page shows: listed and
	// joined by label together; joined ones beyond it are left off (and
	// reported in the page's Ready condition).
	MaxStatusPageMonitors = 500
)

// StatusPageMonitor is one monitor shown on a page.
type StatusPageMonitor struct {
	// monitorRef names a Monitor in the page's namespace.
	// +required
	MonitorRef LocalObjectReference `json:"monitorRef"`
	// section groups monitors under a heading (up to 100 characters).
	// +optional
	// +kubebuilder:validation:MaxLength=100
	Section string `json:"section,omitempty"`
	// displayName overrides the monitor's name on the page.
	// +optional
	// +kubebuilder:validation:MaxLength=255
	DisplayName string `json:"displayName,omitempty"`
}

// StatusPageAccess is who may view a page.
// +kubebuilder:validation:XValidation:rule="self.mode != 'password' || has(self.passwordSecretRef)",message="passwordSecretRef is required for password access",fieldPath=".passwordSecretRef"
// +kubebuilder:validation:XValidation:rule="self.mode != 'sso' || (has(self.sso) && ((has(self.sso.allowedEmailDomains) && size(self.sso.allowedEmailDomains) > 0) || (has(self.sso.allowedEmails) && size(self.sso.allowedEmails) > 0) || (has(self.sso.allowedGroups) && size(self.sso.allowedGroups) > 0)))",message="sso access needs at least one of allowedEmailDomains, allowedEmails or allowedGroups",fieldPath=".sso"
type StatusPageAccess struct {
	// mode is public, password or sso. sso pages are served to visitors
	// who sign in with the install's OpenID Connect provider (the manager's
	// --oidc-* flags, Helm values oidc.*) and are allowed by sso.
	// +required
	Mode StatusPageAccessMode `json:"mode"`
	// passwordSecretRef holds the page password (password mode).
	// +optional
	PasswordSecretRef *SecretKeySelector `json:"passwordSecretRef,omitempty"`
	// sso says who may view the page in sso mode; a signed-in user matching
	// any of its lists may. Changing it signs every visitor out.
	// +optional
	SSO *StatusPageSSO `json:"sso,omitempty"`
	// sessionsRevokedAt signs out every visitor session issued before it; the
	// revoke-sessions endpoint sets it.
	// +optional
	SessionsRevokedAt *metav1.Time `json:"sessionsRevokedAt,omitempty"`
}

// StatusPageSSO is who may view an sso page: a user signed in with the
// install's OpenID Connect provider whose verified e-mail address is listed,
// whose e-mail domain is listed, or who is in a listed group (the provider's
// groups claim). Comparisons ignore case for e-mail addresses and domains,
// not for groups. An empty list allows nobody through that list.
type StatusPageSSO struct {
	// allowedEmailDomains are e-mail domains (example.com) whose users may
	// view the page; only verified addresses count (up to 100).
	// +optional
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:items:Pattern=`^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$`
	// +listType=set
	AllowedEmailDomains []string `json:"allowedEmailDomains,omitempty"`
	// allowedEmails are e-mail addresses that may view the page; only
	// verified addresses count (up to 500).
	// +optional
	// +kubebuilder:validation:MaxItems=500
	// +kubebuilder:validation:items:MinLength=3
	// +kubebuilder:validation:items:MaxLength=254
	// +kubebuilder:validation:items:Pattern=`^[^@\s]+@[^@\s]+$`
	// +listType=set
	AllowedEmails []string `json:"allowedEmails,omitempty"`
	// allowedGroups are groups (values of the provider's groups claim) whose
	// members may view the page (up to 100).
	// +optional
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=256
	// +listType=set
	AllowedGroups []string `json:"allowedGroups,omitempty"`
}

// StatusPageLanguages are a page's languages.
type StatusPageLanguages struct {
	// default is the BCP 47 tag shown first. Defaults to en.
	// +optional
	// +kubebuilder:validation:MaxLength=16
	Default string `json:"default,omitempty"`
	// enabled are further BCP 47 tags offered (up to 20).
	// +optional
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:items:MaxLength=16
	// +listType=set
	Enabled []string `json:"enabled,omitempty"`
	// translations override page texts per language (up to 20).
	// +optional
	// +kubebuilder:validation:MaxItems=20
	// +listType=map
	// +listMapKey=language
	Translations []StatusPageTranslation `json:"translations,omitempty"`
}

// StatusPageTranslation holds a page's texts in one language.
type StatusPageTranslation struct {
	// language is the BCP 47 tag.
	// +required
	// +kubebuilder:validation:MinLength=2
	// +kubebuilder:validation:MaxLength=16
	Language string `json:"language"`
	// title in this language.
	// +optional
	// +kubebuilder:validation:MaxLength=255
	Title string `json:"title,omitempty"`
	// description in this language.
	// +optional
	// +kubebuilder:validation:MaxLength=1000
	Description string `json:"description,omitempty"`
}

// StatusPage condition reasons.
const (
	// ReasonSlugTaken means another page in the cluster has the slug.
	ReasonSlugTaken = "SlugTaken"
	// ReasonTooManyMonitors means Monitors joining the page by label were
	// left off: the page would show more than MaxStatusPageMonitors.
	ReasonTooManyMonitors = "TooManyMonitors"
)

// StatusPageStatus is the observed state of a StatusPage.
type StatusPageStatus struct {
	// observedGeneration is the generation this status describes; -1 until
	// a controller first writes status, so kstatus reports InProgress.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// url is the page's public path or URL.
	// +optional
	URL string `json:"url,omitempty"`
	// overallStatus is operational, degraded, partial_outage, major_outage or
	// maintenance.
	// +optional
	OverallStatus string `json:"overallStatus,omitempty"`
	// monitors is the state of each listed monitor.
	// +optional
	// +listType=atomic
	Monitors []StatusPageMonitorState `json:"monitors,omitempty"`
	// conditions: Ready.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// StatusPageMonitorState is the state of one monitor of a page.
type StatusPageMonitorState struct {
	// name is the Monitor's metadata.name.
	Name string `json:"name"`
	// status is the monitor's current status, or missing.
	Status string `json:"status"`
}

// StatusPage publishes the state of chosen monitors.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=sp,categories=uptime
// +kubebuilder:printcolumn:name="Slug",type=string,JSONPath=`.spec.slug`
// +kubebuilder:printcolumn:name="Public",type=boolean,JSONPath=`.spec.isPublic`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.overallStatus`
// +kubebuilder:printcolumn:name="URL",type=string,JSONPath=`.status.url`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type StatusPage struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired configuration.
	// +required
	Spec StatusPageSpec `json:"spec"`
	// status is the observed state.
	// +optional
	// +kubebuilder:default={"observedGeneration":-1}
	Status StatusPageStatus `json:"status,omitempty"`
}

// StatusPageList is a list of StatusPages.
// +kubebuilder:object:root=true
type StatusPageList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []StatusPage `json:"items"`
}

func init() {
	SchemeBuilder.Register(&StatusPage{}, &StatusPageList{})
}
