package v1alpha1

// MonitorWebSocket is the websocket monitor type, an extension beyond the
// specification's nine.
const MonitorWebSocket MonitorType = "websocket"

// WebSocketConfig configures websocket monitors: open a WebSocket
// connection to url, optionally send one message and expect a reply within
// the timeout, then close the connection normally. Without a message the
// check is up once the handshake succeeds; with one, the first message the
// server sends back is the reply that expectedReply and assertions read.
// +kubebuilder:validation:XValidation:rule="!has(self.degradedResponseTimeMs) || !has(self.maxResponseTimeMs) || self.degradedResponseTimeMs < self.maxResponseTimeMs",message="degradedResponseTimeMs must be lower than maxResponseTimeMs",fieldPath=".degradedResponseTimeMs"
// +kubebuilder:validation:XValidation:rule="has(self.message) || (!has(self.expectedReply) && (!has(self.assertions) || size(self.assertions) == 0))",message="expectedReply and assertions read the reply to a message: set message",fieldPath=".message"
type WebSocketConfig struct {
	// url is the WebSocket endpoint, ws:// or wss://. It must resolve to a
	// public address unless the region allows private targets; the address
	// guard checks the address actually connected to, on the first request
	// and on every redirect of the opening handshake.
	// +required
	// +kubebuilder:validation:MinLength=6
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:Pattern=`^wss?://[^\s]+$`
	URL string `json:"url" guard:"ws-url"`
	// headers are sent with the opening handshake (up to 50), e.g. an
	// authorization header from a Secret. A changed url drops stored
	// credentials of another origin, as for http monitors.
	// +optional
	// +kubebuilder:validation:MaxItems=50
	// +listType=atomic
	Headers []HTTPHeader `json:"headers,omitempty"`
	// subprotocols are offered in Sec-WebSocket-Protocol, in order of
	// preference (up to 10).
	// +optional
	// +kubebuilder:validation:MaxItems=10
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=128
	// +listType=atomic
	Subprotocols []string `json:"subprotocols,omitempty"`
	// message is sent as one text message once the connection is open
	// (up to 32768 characters); the first message received after it is the
	// reply. Empty sends nothing and waits for nothing.
	// +optional
	// +kubebuilder:validation:MaxLength=32768
	Message string `json:"message,omitempty"`
	// expectedReply is text the reply must contain (up to 1000 characters).
	// Empty accepts any reply.
	// +optional
	// +kubebuilder:validation:MaxLength=1000
	ExpectedReply string `json:"expectedReply,omitempty"`
	// assertions are checked against the reply as against the response of
	// an api monitor (up to 50): body reads the reply as text, json_body
	// reads it as JSON by path ($.status), response_time is the time from
	// the start of the check to the reply, status_code (101) and header
	// read the answer to the opening handshake.
	// +optional
	// +kubebuilder:validation:MaxItems=50
	// +listType=atomic
	Assertions []Assertion `json:"assertions,omitempty"`
	// maxRedirects is how many redirects of the opening handshake are
	// followed (0-5); each hop is re-checked by the address guard. Defaults
	// to 5.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=5
	MaxRedirects *int32 `json:"maxRedirects,omitempty"`
	// timeoutMs bounds the whole check: handshake, message and reply
	// (1000-60000). Defaults to 10000; no reply within it is down.
	// +optional
	// +kubebuilder:validation:Minimum=1000
	// +kubebuilder:validation:Maximum=60000
	TimeoutMs int32 `json:"timeoutMs,omitempty" wire:"timeout"`
	// maxResponseTimeMs marks slower checks as down (1-600000).
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=600000
	MaxResponseTimeMs *int32 `json:"maxResponseTimeMs,omitempty"`
	// degradedResponseTimeMs marks slower checks as degraded; it must be
	// lower than maxResponseTimeMs.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=600000
	DegradedResponseTimeMs *int32 `json:"degradedResponseTimeMs,omitempty"`
}
