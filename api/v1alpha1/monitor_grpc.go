package v1alpha1

// MonitorGRPC is the grpc monitor type (gRPC health checks), an extension
// beyond the specification's nine.
const MonitorGRPC MonitorType = "grpc"

// GRPCConfig configures grpc monitors: one call of the standard gRPC health
// service (grpc.health.v1.Health/Check, the protocol Kubernetes' own gRPC
// probes speak) on target, up when it answers SERVING. A gRPC server that
// runs without the health service answers Unimplemented, which is down:
// register the service (every gRPC implementation ships one) to monitor it.
// +kubebuilder:validation:XValidation:rule="!has(self.degradedResponseTimeMs) || !has(self.maxResponseTimeMs) || self.degradedResponseTimeMs < self.maxResponseTimeMs",message="degradedResponseTimeMs must be lower than maxResponseTimeMs",fieldPath=".degradedResponseTimeMs"
// +kubebuilder:validation:XValidation:rule="!has(self.plaintext) || !self.plaintext || (!has(self.clientCertificate) && !has(self.serverName))",message="clientCertificate and serverName need TLS (plaintext false)",fieldPath=".plaintext"
type GRPCConfig struct {
	// target is the server as host:port (a hostname, an IPv4 address or a
	// bracketed IPv6 address, and a port 1-65535). It must resolve to a
	// public address unless the region allows private targets; the address
	// guard checks the address actually connected to.
	// +required
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:MaxLength=261
	// +kubebuilder:validation:Pattern=`^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):[0-9]{1,5}$`
	Target string `json:"target" guard:"hostport"`
	// service is the service name asked about, e.g. "my.package.Orders".
	// Empty asks about the server as a whole.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_.\-/]*$`
	Service string `json:"service,omitempty"`
	// plaintext connects without TLS (h2c). By default the connection uses
	// TLS verified against the system roots and the operator's trusted CA
	// bundle (--trusted-ca-file), as https checks do.
	// +optional
	Plaintext bool `json:"plaintext,omitempty"`
	// serverName is the name the server's certificate is verified against
	// (and sent as SNI). Defaults to the host of target.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	ServerName string `json:"serverName,omitempty"`
	// clientCertificate is the client certificate presented to the server
	// (mutual TLS): two entries, tls.crt (the PEM certificate chain) and
	// tls.key (the PEM private key, from a Secret only), typically both
	// from one kubernetes.io/tls Secret. They are named values like request
	// headers so that they are credentials the same way: read from Secrets
	// the Monitor may reference (its own <monitor>-credentials or one
	// labelled monitoring.uptime-operator.io/credentials: "true"),
	// redacted when shown, sent to agents in assignments only, and dropped
	// by a write that moves target elsewhere without sending them again.
	// +optional
	// +kubebuilder:validation:MaxItems=2
	// +kubebuilder:validation:XValidation:rule="size(self) == 2 && self.exists(h, h.name == 'tls.crt') && self.exists(h, h.name == 'tls.key') && self.all(h, h.name != 'tls.key' || has(h.valueFrom))",message="clientCertificate needs tls.crt and tls.key, tls.key from a Secret (valueFrom)"
	// +listType=atomic
	ClientCertificate []HTTPHeader `json:"clientCertificate,omitempty"`
	// metadata are sent with the call as gRPC metadata (up to 50), e.g. an
	// authorization token from a Secret. Names are lower-cased on the wire,
	// as gRPC requires; values follow the rules of HTTP header values.
	// +optional
	// +kubebuilder:validation:MaxItems=50
	// +listType=atomic
	Metadata []HTTPHeader `json:"metadata,omitempty"`
	// timeoutMs bounds the check: connection, TLS handshake and the call
	// (1000-60000). Defaults to 10000.
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
