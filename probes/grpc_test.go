package probes

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/certs"
	"github.com/uptime-operator/uptime-operator/internal/netguard"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
	"github.com/uptime-operator/uptime-operator/internal/trust"
)

// grpcServer is a real gRPC server on loopback with the standard health
// service: "orders" is SERVING, "billing" NOT_SERVING, "slow" answers
// SERVING after 300 ms, "stuck" never answers, anything else is unknown
// (NotFound). Accepted counts its connections.
type grpcServer struct {
	Addr     string
	Accepted atomic.Int64
}

// countingListener counts accepted connections.
type countingListener struct {
	net.Listener
	n *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// slowHealth answers "slow" late and "stuck" never, and passes every other
// service to the standard health server.
type slowHealth struct {
	*health.Server
}

func (h slowHealth) Check(ctx context.Context, req *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	switch req.GetService() {
	case "slow":
		select {
		case <-time.After(300 * time.Millisecond):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
	case "stuck":
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return h.Server.Check(ctx, req)
}

// startGRPC starts the server; withHealth false leaves the health service
// out (Unimplemented), token non-empty requires "authorization: Bearer
// token" on every call, creds nil is plaintext.
func startGRPC(t testing.TB, withHealth bool, token string, creds credentials.TransportCredentials) *grpcServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &grpcServer{Addr: ln.Addr().String()}
	var opts []grpc.ServerOption
	if creds != nil {
		opts = append(opts, grpc.Creds(creds))
	}
	if token != "" {
		opts = append(opts, grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			md, _ := metadata.FromIncomingContext(ctx)
			if got := md.Get("authorization"); len(got) != 1 || got[0] != "Bearer "+token {
				return nil, status.Error(codes.Unauthenticated, "missing or wrong token")
			}
			return h(ctx, req)
		}))
	}
	srv := grpc.NewServer(opts...)
	if withHealth {
		hs := health.NewServer()
		hs.SetServingStatus("orders", healthpb.HealthCheckResponse_SERVING)
		hs.SetServingStatus("billing", healthpb.HealthCheckResponse_NOT_SERVING)
		healthpb.RegisterHealthServer(srv, slowHealth{hs})
	}
	go func() { _ = srv.Serve(countingListener{ln, &s.Accepted}) }()
	t.Cleanup(srv.Stop)
	return s
}

// runGRPC runs one grpc check with the given timeout.
func runGRPC(t *testing.T, env *Env, p grpcParams, timeout time.Duration) probeapi.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return probeGRPC(ctx, env, &p)
}

func wantError(t *testing.T, res probeapi.Result, status probeapi.Status, typ, msg string) {
	t.Helper()
	if res.Status != status || res.ErrorType != typ || !strings.Contains(res.ErrorMessage, msg) {
		t.Fatalf("got %s %s %q, want %s %s containing %q", res.Status, res.ErrorType, res.ErrorMessage, status, typ, msg)
	}
}

func TestGRPCHealth(t *testing.T) {
	srv := startGRPC(t, true, "", nil)
	env := testEnv()
	for _, c := range []struct {
		name, service string
		max, degraded int64
		status        probeapi.Status
		errType, msg  string
		serving       string
	}{
		{name: "serving", service: "orders", status: probeapi.StatusUp, serving: "SERVING"},
		{name: "whole server", service: "", status: probeapi.StatusUp, serving: "SERVING"},
		{name: "not serving", service: "billing", status: probeapi.StatusDown, errType: ErrorNotServing, msg: "NOT_SERVING", serving: "NOT_SERVING"},
		{name: "unknown service", service: "nobody", status: probeapi.StatusDown, errType: ErrorGRPCStatus, msg: "does not know the service"},
		{name: "slower than degraded", service: "slow", degraded: 100, status: probeapi.StatusDegraded, errType: probeapi.ErrorResponseTime, msg: "more than 100 ms", serving: "SERVING"},
		{name: "slower than max", service: "slow", max: 100, degraded: 50, status: probeapi.StatusDown, errType: probeapi.ErrorResponseTime, msg: "more than 100 ms", serving: "SERVING"},
		{name: "deadline", service: "stuck", status: probeapi.StatusDown, errType: probeapi.ErrorTimeout, msg: "timeout"},
	} {
		t.Run(c.name, func(t *testing.T) {
			timeout := 5 * time.Second
			if c.service == "stuck" {
				timeout = 500 * time.Millisecond
			}
			res := runGRPC(t, env, grpcParams{Target: srv.Addr, Service: c.service, Plaintext: true,
				MaxResponseTimeMs: c.max, DegradedResponseTimeMs: c.degraded}, timeout)
			wantError(t, res, c.status, c.errType, c.msg)
			if !strings.Contains(string(res.Details), `"serving_status":"`+c.serving+`"`) && c.serving != "" {
				t.Errorf("details %s, want serving_status %s", res.Details, c.serving)
			}
			if res.Status == probeapi.StatusUp && (res.Timings == nil || res.Timings.ConnectMs <= 0) {
				t.Errorf("timings %+v, want the connect time", res.Timings)
			}
		})
	}
}

func TestGRPCWithoutHealthService(t *testing.T) {
	srv := startGRPC(t, false, "", nil)
	res := runGRPC(t, testEnv(), grpcParams{Target: srv.Addr, Plaintext: true}, 5*time.Second)
	wantError(t, res, probeapi.StatusDown, ErrorGRPCStatus, "does not implement grpc.health.v1.Health")
}

func TestGRPCMetadataFromCredentials(t *testing.T) {
	srv := startGRPC(t, true, "s3cret", nil)
	res := runGRPC(t, testEnv(), grpcParams{Target: srv.Addr, Service: "orders", Plaintext: true}, 5*time.Second)
	wantError(t, res, probeapi.StatusDown, ErrorGRPCStatus, "Unauthenticated")
	res = runGRPC(t, testEnv(), grpcParams{Target: srv.Addr, Service: "orders", Plaintext: true,
		Metadata: map[string]string{"Authorization": "Bearer s3cret"}}, 5*time.Second)
	wantStatus(t, res, probeapi.StatusUp)
	res = runGRPC(t, testEnv(), grpcParams{Target: srv.Addr, Plaintext: true,
		Metadata: map[string]string{"grpc-timeout": "1S"}}, 5*time.Second)
	wantError(t, res, probeapi.StatusUnknown, probeapi.ErrorInvalidConfig, "not allowed by gRPC")
}

func TestGRPCConnectionFailures(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	res := runGRPC(t, testEnv(), grpcParams{Target: closed, Plaintext: true}, 5*time.Second)
	wantError(t, res, probeapi.StatusDown, probeapi.ErrorRefused, "refused")

	res = runGRPC(t, testEnv(), grpcParams{Target: "no-port", Plaintext: true}, 5*time.Second)
	wantError(t, res, probeapi.StatusUnknown, probeapi.ErrorInvalidConfig, "host:port")

	// TLS against a plaintext server fails the handshake.
	srv := startGRPC(t, true, "", nil)
	res = runGRPC(t, testEnv(), grpcParams{Target: srv.Addr, Service: "orders"}, 5*time.Second)
	wantError(t, res, probeapi.StatusDown, probeapi.ErrorTLS, "")
}

// TestGRPCGuard: with private targets not allowed the check is blocked and
// the server never sees a connection.
func TestGRPCGuard(t *testing.T) {
	srv := startGRPC(t, true, "", nil)
	res := runGRPC(t, &Env{Region: "test"}, grpcParams{Target: srv.Addr, Service: "orders", Plaintext: true}, 5*time.Second)
	wantError(t, res, probeapi.StatusBlocked, probeapi.ErrorBlocked, "")
	res = runGRPC(t, &Env{Region: "test"}, grpcParams{Target: "localhost:" + portOf(t, srv.Addr), Service: "orders", Plaintext: true}, 5*time.Second)
	wantError(t, res, probeapi.StatusBlocked, probeapi.ErrorBlocked, "")
	if n := srv.Accepted.Load(); n != 0 {
		t.Fatalf("the server accepted %d connections", n)
	}
	// The same server is reached once private targets are allowed.
	wantStatus(t, runGRPC(t, &Env{Region: "test", Guard: netguard.Guard{AllowPrivate: true}},
		grpcParams{Target: srv.Addr, Service: "orders", Plaintext: true}, 5*time.Second), probeapi.StatusUp)
}

func portOf(t *testing.T, addr string) string {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// privateCA issues a server certificate for localhost and 127.0.0.1 and a
// client certificate, all signed by a fresh private CA.
func privateCA(t *testing.T) (ca *certs.CA, server tls.Certificate, client [2]string) {
	t.Helper()
	ca, err := certs.NewCA("uptime-operator grpc test CA")
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := ca.Issue("grpc.test", []string{"localhost", "grpc.internal"}, []net.IP{net.IPv4(127, 0, 0, 1)}, false)
	if err != nil {
		t.Fatal(err)
	}
	if server, err = tls.X509KeyPair(certPEM, keyPEM); err != nil {
		t.Fatal(err)
	}
	clientCert, clientKey, err := ca.Issue("probe", nil, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	return ca, server, [2]string{string(clientCert), string(clientKey)}
}

// TestGRPCTLSPrivateCA: a server whose certificate a private CA signed is
// down with a TLS error on the system roots and up once the trusted CA
// bundle (--trusted-ca-file) holds the CA; serverName verifies another
// name of the certificate; a server that requires a client certificate
// accepts the one given.
func TestGRPCTLSPrivateCA(t *testing.T) {
	ca, serverCert, client := privateCA(t)
	srv := startGRPC(t, true, "", credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{serverCert}, MinVersion: tls.VersionTLS12}))
	p := grpcParams{Target: srv.Addr, Service: "orders"}
	res := runGRPC(t, testEnv(), p, 5*time.Second)
	wantError(t, res, probeapi.StatusDown, probeapi.ErrorTLS, "")

	pool, err := trust.Pool(ca.CertPEM)
	if err != nil {
		t.Fatal(err)
	}
	defer trust.Use(pool)()
	res = runGRPC(t, testEnv(), p, 5*time.Second)
	wantStatus(t, res, probeapi.StatusUp)
	if res.TLS == nil || res.TLS.Subject != "CN=grpc.test" || res.Timings == nil || res.Timings.TLSMs <= 0 {
		t.Errorf("tls %+v timings %+v, want the server certificate and the handshake time", res.TLS, res.Timings)
	}
	p.ServerName = "grpc.internal"
	wantStatus(t, runGRPC(t, testEnv(), p, 5*time.Second), probeapi.StatusUp)
	p.ServerName = "other.internal"
	wantError(t, runGRPC(t, testEnv(), p, 5*time.Second), probeapi.StatusDown, probeapi.ErrorTLS, "other.internal")

	clientCAs := x509.NewCertPool()
	clientCAs.AppendCertsFromPEM(ca.CertPEM)
	mtls := startGRPC(t, true, "", credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{serverCert},
		ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: clientCAs, MinVersion: tls.VersionTLS12}))
	p = grpcParams{Target: mtls.Addr, Service: "orders"}
	if res := runGRPC(t, testEnv(), p, 5*time.Second); res.Status != probeapi.StatusDown {
		t.Fatalf("without a client certificate: %s %s %q, want down", res.Status, res.ErrorType, res.ErrorMessage)
	}
	p.ClientCertPEM, p.ClientKeyPEM = client[0], client[1]
	wantStatus(t, runGRPC(t, testEnv(), p, 5*time.Second), probeapi.StatusUp)
	p.ClientKeyPEM = "not a key"
	wantError(t, runGRPC(t, testEnv(), p, 5*time.Second), probeapi.StatusUnknown, probeapi.ErrorInvalidConfig, "client certificate")
}

// TestGRPCAssignment runs grpc monitors through Run, as the agent does: the
// config's metadata and client certificate (resolved from Secrets by the
// manager) reach the server, and a server that echoes the credential in
// its error has it scrubbed from the result.
func TestGRPCAssignment(t *testing.T) {
	srv := startGRPC(t, true, "s3cret-token-value", nil)
	cfg := &monv1.GRPCConfig{Target: srv.Addr, Service: "orders", Plaintext: true,
		Metadata: probeapi.TextHeaders(map[string]string{"authorization": "Bearer s3cret-token-value"})}
	a := probeapi.Assignment{Type: string(monv1.MonitorGRPC), TimeoutMs: 5000, Config: monv1.MonitorSpec{GRPC: cfg}}
	wantStatus(t, run(t, a, testEnv()), probeapi.StatusUp)

	echo := grpc.NewServer(grpc.UnaryInterceptor(func(ctx context.Context, _ any, _ *grpc.UnaryServerInfo, _ grpc.UnaryHandler) (any, error) {
		md, _ := metadata.FromIncomingContext(ctx)
		return nil, status.Errorf(codes.PermissionDenied, "token %v refused", md.Get("authorization"))
	}))
	healthpb.RegisterHealthServer(echo, health.NewServer())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = echo.Serve(ln) }()
	defer echo.Stop()
	cfg.Target = ln.Addr().String()
	res := run(t, a, testEnv())
	wantError(t, res, probeapi.StatusDown, ErrorGRPCStatus, "PermissionDenied")
	if strings.Contains(res.ErrorMessage, "s3cret-token-value") {
		t.Fatalf("the credential is in the result: %s", res.ErrorMessage)
	}

	ca, serverCert, client := privateCA(t)
	clientCAs := x509.NewCertPool()
	clientCAs.AppendCertsFromPEM(ca.CertPEM)
	mtls := startGRPC(t, true, "", credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{serverCert},
		ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: clientCAs, MinVersion: tls.VersionTLS12}))
	env := testEnv()
	env.RootCAs = clientCAs
	a = probeapi.Assignment{Type: string(monv1.MonitorGRPC), TimeoutMs: 5000, Config: monv1.MonitorSpec{GRPC: &monv1.GRPCConfig{
		Target: mtls.Addr, Service: "orders",
		ClientCertificate: probeapi.TextHeaders(map[string]string{"tls.crt": client[0], "tls.key": client[1]})}}}
	wantStatus(t, run(t, a, env), probeapi.StatusUp)

	a.Config = monv1.MonitorSpec{}
	wantError(t, run(t, a, env), probeapi.StatusUnknown, probeapi.ErrorInvalidConfig, "target is required")
}
