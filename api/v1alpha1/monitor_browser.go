package v1alpha1

// BrowserConfig configures browser monitors: a headless Chromium loads
// spec.url, runs its scripts, waits for the page to show what it should and
// then runs the steps, the way a visitor would. Pages that render on the
// client, log-in flows and third-party scripts break while the HTML still
// answers 200; an http check cannot see that, a browser check can.
//
// Every request the page makes goes through the probe's address guard: a
// page may not reach private addresses unless the region allows them. A
// region runs browser checks only where it has a browser (a local Chromium
// on the agent, or spec.browser.endpoint of the ProbeRegion); elsewhere the
// check is reported blocked, and the region abstains.
// +kubebuilder:validation:XValidation:rule="!has(self.degradedResponseTimeMs) || !has(self.maxResponseTimeMs) || self.degradedResponseTimeMs < self.maxResponseTimeMs",message="degradedResponseTimeMs must be lower than maxResponseTimeMs",fieldPath=".degradedResponseTimeMs"
// +kubebuilder:validation:XValidation:rule="!has(self.steps) || self.steps.all(s, !has(s.credential) || (has(self.credentials) && self.credentials.exists(c, c.name == s.credential)))",message="a step's credential must name an entry of credentials",fieldPath=".steps"
type BrowserConfig struct {
	// waitForSelector is a CSS selector that must match a visible element
	// once the page has loaded (up to 1024 characters), for example
	// "#app .dashboard". The check waits for it until its timeout.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	WaitForSelector string `json:"waitForSelector,omitempty"`
	// waitForText is text the rendered page must show (its body's
	// innerText, after scripts ran; up to 1000 characters). The check waits
	// for it until its timeout.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1000
	WaitForText string `json:"waitForText,omitempty"`
	// credentials are the values fill steps type by name (up to 20), each
	// literal or, for passwords and tokens, valueFrom a Secret: the rules
	// of request headers apply (the Secret must be the Monitor's own
	// <monitor>-credentials or carry the label
	// monitoring.uptime-operator.io/credentials: "true"; values written
	// through the REST API move to <monitor>-credentials; agents receive
	// text; results never quote them). A value is typed only into a page
	// of the origin of spec.url or of a navigate step's url.
	// +optional
	// +kubebuilder:validation:MaxItems=20
	// +listType=atomic
	Credentials []HTTPHeader `json:"credentials,omitempty"`
	// steps run in order after the page loaded and the waits above passed
	// (up to 20); the first failing step fails the check, and its index and
	// error are reported with a screenshot of the page.
	// +optional
	// +kubebuilder:validation:MaxItems=20
	// +listType=atomic
	Steps []BrowserStep `json:"steps,omitempty"`
	// timeoutMs bounds the whole check: loading, waits and steps
	// (5000-120000). Defaults to 60000.
	// +optional
	// +kubebuilder:validation:Minimum=5000
	// +kubebuilder:validation:Maximum=120000
	TimeoutMs int32 `json:"timeoutMs,omitempty" wire:"timeout"`
	// maxResponseTimeMs marks the check down when the whole run (load,
	// waits and steps) took longer (1-120000).
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=120000
	MaxResponseTimeMs *int32 `json:"maxResponseTimeMs,omitempty"`
	// degradedResponseTimeMs marks the check degraded when the whole run
	// took longer (1-120000); lower than maxResponseTimeMs.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=120000
	DegradedResponseTimeMs *int32 `json:"degradedResponseTimeMs,omitempty"`
}

// BrowserAction is what one step of a browser monitor does.
// +kubebuilder:validation:Enum=navigate;click;fill;wait;expectText;expectSelector;evaluate
type BrowserAction string

// Browser step actions.
const (
	// BrowserNavigate loads url in the page.
	BrowserNavigate BrowserAction = "navigate"
	// BrowserClick clicks the first element selector matches, once visible.
	BrowserClick BrowserAction = "click"
	// BrowserFill types value (or the credential it names) into the field
	// selector matches, replacing its content.
	BrowserFill BrowserAction = "fill"
	// BrowserWait waits for selector to be visible, or for durationMs.
	BrowserWait BrowserAction = "wait"
	// BrowserExpectText waits for text to show on the page.
	BrowserExpectText BrowserAction = "expectText"
	// BrowserExpectSelector waits for selector to match a visible element.
	BrowserExpectSelector BrowserAction = "expectSelector"
	// BrowserEvaluate evaluates expression in the page; it must be true.
	BrowserEvaluate BrowserAction = "evaluate"
)

// BrowserStep is one action of a browser monitor. Which fields an action
// needs: navigate url; click, fill and expectSelector selector; fill value or
// valueFrom; wait selector or durationMs; expectText text; evaluate
// expression.
// +kubebuilder:validation:XValidation:rule="self.action != 'navigate' || has(self.url)",message="url is required for navigate steps",fieldPath=".url"
// +kubebuilder:validation:XValidation:rule="!(self.action in ['click','fill','expectSelector']) || has(self.selector)",message="selector is required for click, fill and expectSelector steps",fieldPath=".selector"
// +kubebuilder:validation:XValidation:rule="self.action != 'fill' || (has(self.value) != has(self.credential))",message="fill steps need exactly one of value and credential",fieldPath=".value"
// +kubebuilder:validation:XValidation:rule="self.action == 'fill' || (!has(self.value) && !has(self.credential))",message="value and credential are only for fill steps",fieldPath=".value"
// +kubebuilder:validation:XValidation:rule="self.action != 'wait' || (has(self.selector) != has(self.durationMs))",message="wait steps need exactly one of selector and durationMs",fieldPath=".selector"
// +kubebuilder:validation:XValidation:rule="self.action != 'expectText' || has(self.text)",message="text is required for expectText steps",fieldPath=".text"
// +kubebuilder:validation:XValidation:rule="self.action != 'evaluate' || has(self.expression)",message="expression is required for evaluate steps",fieldPath=".expression"
type BrowserStep struct {
	// name labels the step in results (up to 100 characters). Defaults to
	// "step N".
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=100
	Name string `json:"name,omitempty"`
	// action is what the step does.
	// +required
	Action BrowserAction `json:"action"`
	// url is the page a navigate step loads: an http:// or https:// URL,
	// checked by the address guard like spec.url.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:Pattern=`^https?://[^\s]+$`
	URL string `json:"url,omitempty" guard:"http-url"`
	// selector is the CSS selector of the element a click, fill, wait or
	// expectSelector step acts on.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Selector string `json:"selector,omitempty"`
	// value is the literal text a fill step types (a user name, a search
	// term). It is stored in the Monitor as written: type passwords and
	// tokens with credential.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Value *string `json:"value,omitempty"`
	// credential names the entry of credentials whose value a fill step
	// types.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Credential string `json:"credential,omitempty"`
	// text is what an expectText step waits for on the page (up to 1000
	// characters).
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1000
	Text string `json:"text,omitempty"`
	// expression is the JavaScript expression an evaluate step evaluates in
	// the page (up to 4096 characters); it must be true, or a promise that
	// resolves to true, for example "document.querySelectorAll('.row').length > 3".
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	Expression string `json:"expression,omitempty"`
	// durationMs is how long a wait step without selector pauses
	// (1-30000).
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=30000
	DurationMs *int32 `json:"durationMs,omitempty"`
}

// ProbeRegionBrowser says where a region's browser checks get their
// browser and how many may run at once. Without endpoint, agents use a
// local Chromium (--browser-path, or chromium, chromium-browser or
// google-chrome on PATH); a region with neither reports its browser
// monitors as blocked.
type ProbeRegionBrowser struct {
	// endpoint is the DevTools WebSocket URL of a remote browser
	// (ws://host:9222/devtools/browser/<id>, or a browser service's URL
	// such as ws://browserless:3000): agents connect to it instead of
	// starting a local Chromium, as Uptime Kuma's remote browsers do. Each
	// check runs in its own browser context. It must not carry a
	// credential: anyone who may read ProbeRegions reads it.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:Pattern=`^wss?://[^\s]+$`
	Endpoint string `json:"endpoint,omitempty"`
	// maxConcurrent is how many browser checks each agent of the region
	// runs at once (1-50); more wait their turn. Defaults to 2: a browser
	// check costs about a CPU-second and 150 MiB (docs/performance.md).
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=50
	MaxConcurrent int32 `json:"maxConcurrent,omitempty"`
}

// DefaultBrowserConcurrency is ProbeRegionBrowser.MaxConcurrent when unset.
const DefaultBrowserConcurrency = 2

// MonitorBrowser is the type of browser monitors, an extension beyond the
// specification's nine.
const MonitorBrowser MonitorType = "browser"
