package probes

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

// Error types of grpc checks.
const (
	// ErrorNotServing is a health answer other than SERVING.
	ErrorNotServing = "not_serving"
	// ErrorGRPCStatus is a call that ended with a gRPC status other than
	// OK: the service is unknown (NotFound), the health service is not
	// registered (Unimplemented), the metadata was refused
	// (Unauthenticated, PermissionDenied), ...
	ErrorGRPCStatus = "grpc_status"
)

// grpcParams is what a grpc check runs: the monitor's config with its
// metadata values and client certificate read from their Secrets.
type grpcParams struct {
	// Target is host:port.
	Target string
	// Service is the name asked about; empty is the whole server.
	Service string
	// Plaintext turns TLS off.
	Plaintext bool
	// ServerName replaces the host of Target in certificate verification,
	// SNI and :authority.
	ServerName string
	// ClientCertPEM and ClientKeyPEM are the client certificate, when set.
	ClientCertPEM, ClientKeyPEM string
	// Metadata is sent with the call.
	Metadata map[string]string
	// MaxResponseTimeMs and DegradedResponseTimeMs are the thresholds; zero
	// is unset.
	MaxResponseTimeMs, DegradedResponseTimeMs int64
}

// grpcDetails is Result.Details of grpc checks.
type grpcDetails struct {
	Target  string `json:"target"`
	Service string `json:"service,omitempty"`
	// ServingStatus is the health answer (SERVING, NOT_SERVING, ...).
	ServingStatus string `json:"serving_status,omitempty"`
	// Code is the gRPC status of the call when it failed.
	Code string `json:"grpc_code,omitempty"`
}

// grpcConn records what gRPC does not report on a failed call: the first
// error of the guarded dial or of the TLS handshake (a refused private
// address, a refused connection, an unknown certificate authority, which
// the call only sees as Unavailable) and the timings of the connection.
type grpcConn struct {
	mu      sync.Mutex
	err     error
	connect time.Duration
	tls     time.Duration
	state   *tls.ConnectionState
}

func (r *grpcConn) fail(err error) {
	r.mu.Lock()
	if r.err == nil {
		r.err = err
	}
	r.mu.Unlock()
}

// dial is the ClientConn's dialer: the guarded dialer, so the address
// guard judges the address actually connected to.
func (r *grpcConn) dial(d *net.Dialer) func(context.Context, string) (net.Conn, error) {
	return func(ctx context.Context, addr string) (net.Conn, error) {
		start := time.Now()
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			r.fail(err)
			return nil, err
		}
		r.mu.Lock()
		if r.connect == 0 {
			r.connect = time.Since(start)
		}
		r.mu.Unlock()
		return c, nil
	}
}

// recordingCreds wraps the transport credentials to record the handshake's
// error, duration and certificate.
type recordingCreds struct {
	credentials.TransportCredentials
	conn *grpcConn
}

func (c recordingCreds) ClientHandshake(ctx context.Context, authority string, raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	start := time.Now()
	conn, info, err := c.TransportCredentials.ClientHandshake(ctx, authority, raw)
	if err != nil {
		c.conn.fail(err)
		return conn, info, err
	}
	if ti, ok := info.(credentials.TLSInfo); ok {
		c.conn.mu.Lock()
		if c.conn.state == nil {
			c.conn.tls, c.conn.state = time.Since(start), &ti.State
		}
		c.conn.mu.Unlock()
	}
	return conn, info, nil
}

func (c recordingCreds) Clone() credentials.TransportCredentials {
	return recordingCreds{c.TransportCredentials.Clone(), c.conn}
}

func init() { register(checkGRPC, monv1.MonitorGRPC) }

// checkGRPC runs a grpc monitor's assignment: its config with metadata and
// client certificate values already read from their Secrets by the manager.
func checkGRPC(ctx context.Context, a *probeapi.Assignment, env *Env) probeapi.Result {
	c := a.Config.GRPC
	if c == nil || c.Target == "" {
		return failure(probeapi.StatusUnknown, probeapi.ErrorInvalidConfig, errors.New("target is required"))
	}
	cert := probeapi.HeaderText(c.ClientCertificate)
	return probeGRPC(ctx, env, &grpcParams{Target: c.Target, Service: c.Service, Plaintext: c.Plaintext, ServerName: c.ServerName,
		ClientCertPEM: cert["tls.crt"], ClientKeyPEM: cert["tls.key"], Metadata: probeapi.HeaderText(c.Metadata),
		MaxResponseTimeMs: orZero(c.MaxResponseTimeMs), DegradedResponseTimeMs: orZero(c.DegradedResponseTimeMs)})
}

// probeGRPC asks the target's health service (grpc.health.v1.Health/Check)
// about p.Service over one fresh connection: up when the answer is
// SERVING, down on any other answer or gRPC status, then the response-time
// thresholds. The connection dials through the address guard; TLS is
// verified against the agent's roots (the system's and --trusted-ca-file).
func probeGRPC(ctx context.Context, env *Env, p *grpcParams) probeapi.Result {
	host, _, err := net.SplitHostPort(p.Target)
	if err != nil || host == "" {
		return failure(probeapi.StatusUnknown, probeapi.ErrorInvalidConfig, errors.New("target must be host:port"))
	}
	md, err := grpcMetadata(p.Metadata)
	if err != nil {
		return failure(probeapi.StatusUnknown, probeapi.ErrorInvalidConfig, err)
	}
	rec := &grpcConn{}
	var creds credentials.TransportCredentials = insecure.NewCredentials()
	if !p.Plaintext {
		cfg := env.tlsConfig("")
		if p.ClientCertPEM != "" || p.ClientKeyPEM != "" {
			cert, err := tls.X509KeyPair([]byte(p.ClientCertPEM), []byte(p.ClientKeyPEM))
			if err != nil {
				return failure(probeapi.StatusUnknown, probeapi.ErrorInvalidConfig, fmt.Errorf("load client certificate: %w", err))
			}
			cfg.Certificates = []tls.Certificate{cert}
		}
		creds = credentials.NewTLS(cfg)
	}
	timeout := 10 * time.Second
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl)
	}
	opts := []grpc.DialOption{
		grpc.WithTransportCredentials(recordingCreds{creds, rec}),
		grpc.WithContextDialer(rec.dial(env.checkDialer())),
		// A proxy from the environment would connect on the check's behalf,
		// past the guard.
		grpc.WithNoProxy(),
		grpc.WithUserAgent(userAgent),
		grpc.WithDisableRetry(),
		grpc.WithDisableServiceConfig(),
		grpc.WithConnectParams(grpc.ConnectParams{MinConnectTimeout: timeout}),
	}
	if p.ServerName != "" {
		// gRPC verifies the certificate against the authority's host.
		opts = append(opts, grpc.WithAuthority(p.ServerName))
	}
	// passthrough hands host:port to the dialer as written: the guard
	// resolves it and judges every address it connects to.
	conn, err := grpc.NewClient("passthrough:///"+p.Target, opts...)
	if err != nil {
		return failure(probeapi.StatusUnknown, probeapi.ErrorInvalidConfig, fmt.Errorf("build client: %w", err))
	}
	defer conn.Close()
	if len(md) > 0 {
		ctx = metadata.NewOutgoingContext(ctx, md)
	}
	start := time.Now()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: p.Service})
	elapsed := time.Since(start)
	d := grpcDetails{Target: p.Target, Service: p.Service}
	res := grpcResult(err, rec, &d)
	res.ResponseTimeMs = ms(elapsed)
	rec.mu.Lock()
	if rec.connect > 0 || rec.tls > 0 {
		res.Timings = &probeapi.Timings{ConnectMs: fms(rec.connect), TLSMs: fms(rec.tls)}
	}
	if rec.state != nil {
		res.TLS = tlsInfo(rec.state)
	}
	rec.mu.Unlock()
	if err == nil {
		d.ServingStatus = resp.GetStatus().String()
		if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			res.Status, res.ErrorType = probeapi.StatusDown, ErrorNotServing
			res.ErrorMessage = "health status " + d.ServingStatus
		}
		applyResponseTime(&res, elapsed.Milliseconds(), p.MaxResponseTimeMs, p.DegradedResponseTimeMs)
	}
	res.Details = details(d)
	return res
}

// grpcResult classifies a failed call: a dial or handshake error recorded
// on the connection first (blocked, refused, TLS, ...), then the gRPC
// status. A nil err is up.
func grpcResult(err error, rec *grpcConn, d *grpcDetails) probeapi.Result {
	if err == nil {
		return probeapi.Result{Status: probeapi.StatusUp}
	}
	st := status.Convert(err)
	d.Code = st.Code().String()
	rec.mu.Lock()
	connErr := rec.err
	rec.mu.Unlock()
	switch {
	case connErr != nil && st.Code() != codes.OK:
		return fromError(connErr)
	case st.Code() == codes.DeadlineExceeded || errors.Is(err, context.DeadlineExceeded):
		return failure(probeapi.StatusDown, probeapi.ErrorTimeout, errors.New("no answer before the timeout"))
	case st.Code() == codes.Unavailable:
		return failure(probeapi.StatusDown, probeapi.ErrorConnection, fmt.Errorf("unavailable: %s", st.Message()))
	case st.Code() == codes.NotFound:
		return failure(probeapi.StatusDown, ErrorGRPCStatus, fmt.Errorf("the health service does not know the service (NotFound: %s)", st.Message()))
	case st.Code() == codes.Unimplemented:
		return failure(probeapi.StatusDown, ErrorGRPCStatus, fmt.Errorf("the server does not implement grpc.health.v1.Health (Unimplemented: %s)", st.Message()))
	}
	return failure(probeapi.StatusDown, ErrorGRPCStatus, fmt.Errorf("%s: %s", st.Code(), st.Message()))
}

// grpcMetadata builds the call's metadata: names lower-cased, as gRPC
// sends them, and refused when gRPC would refuse them at call time (a
// reserved grpc- name, a character outside [0-9a-z-_.]) so that the
// monitor is reported misconfigured rather than the server down.
func grpcMetadata(in map[string]string) (metadata.MD, error) {
	if len(in) == 0 {
		return nil, nil
	}
	md := make(metadata.MD, len(in))
	for k, v := range in {
		name := strings.ToLower(k)
		if name == "" || strings.HasPrefix(name, "grpc-") || strings.Trim(name, "0123456789abcdefghijklmnopqrstuvwxyz-_.") != "" {
			return nil, fmt.Errorf("metadata name %q is not allowed by gRPC", truncateString(k, 64))
		}
		if strings.HasSuffix(name, "-bin") {
			return nil, fmt.Errorf("metadata name %q: binary metadata is not supported", truncateString(k, 64))
		}
		md.Append(name, v)
	}
	return md, nil
}
