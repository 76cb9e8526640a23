package probes

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/uuid"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/credentials"
	"github.com/uptime-operator/uptime-operator/internal/netguard"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
	"github.com/uptime-operator/uptime-operator/internal/trust"
)

// CheckFunc runs one check of a and returns its verdict. It fills Status,
// StatusCode, ResponseTimeMs, errors, Timings, TLS and Details; Run fills the
// identity fields. ctx carries the check's timeout.
type CheckFunc func(ctx context.Context, a *probeapi.Assignment, env *Env) probeapi.Result

// registry maps monitor types to their checks. Each check registers itself
// in its own file (probes/<type>.go: `func init() { register(...) }`), so
// a new monitor type is its file. Cron is absent on purpose: the manager
// evaluates heartbeats (see doc.go).
var registry = map[string]CheckFunc{}

// register makes check the check of the monitor types ts. A type must be
// one of monv1.MonitorTypeRegistry, registered once.
func register(check CheckFunc, ts ...monv1.MonitorType) {
	for _, t := range ts {
		if _, ok := monv1.LookupMonitorType(t); !ok {
			panic(fmt.Sprintf("probes: register %q: not a monitor type of monv1.MonitorTypeRegistry", t))
		}
		if _, dup := registry[string(t)]; dup {
			panic(fmt.Sprintf("probes: check of %q registered twice", t))
		}
		registry[string(t)] = check
	}
}

// Supported reports whether agents can run monitors of type t.
func Supported(t string) bool {
	_, ok := registry[t]
	return ok
}

// maxErrorBytes bounds Result.ErrorMessage.
const maxErrorBytes = 512

// Env is what checks need from their surroundings.
type Env struct {
	// Guard refuses private targets unless AllowPrivate is set.
	Guard netguard.Guard
	// Region is copied into results.
	Region string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Log receives debug output; the zero value discards it.
	Log logr.Logger
	// RootCAs overrides the roots TLS targets are verified against (tests);
	// nil means trust.Roots(): the system roots plus the --trusted-ca-file
	// bundle.
	RootCAs *x509.CertPool
	// SystemResolverConf is the resolv.conf used by dns monitors without a
	// resolver; empty means /etc/resolv.conf.
	SystemResolverConf string
	// Browsers runs browser checks; nil means a local Chromium on PATH,
	// two at a time.
	Browsers *Browsers
}

func (e *Env) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

// dialer returns the guarded dialer of checks. A check's connection
// carries one exchange, so TCP keep-alive probes (four setsockopt calls per
// connection) are switched off.
func (e *Env) dialer(timeout time.Duration) *net.Dialer {
	d := e.Guard.Dialer(timeout)
	d.KeepAlive = -1
	return d
}

// checkDialers holds one dialer without a timeout per guard, shared by
// the checks whose context carries their deadline (every scheduled check):
// building a dialer and its guard hook per check was two allocations of
// every HTTP check.
var checkDialers sync.Map // netguard.Guard → *net.Dialer

// checkDialer is the guarded dialer of a check whose context has a
// deadline; it must not be modified.
func (e *Env) checkDialer() *net.Dialer {
	if d, ok := checkDialers.Load(e.Guard); ok {
		return d.(*net.Dialer)
	}
	d, _ := checkDialers.LoadOrStore(e.Guard, e.dialer(0))
	return d.(*net.Dialer)
}

func (e *Env) tlsConfig(serverName string) *tls.Config {
	roots := e.RootCAs
	if roots == nil {
		roots = trust.Roots()
	}
	return &tls.Config{RootCAs: roots, ServerName: serverName, MinVersion: tls.VersionTLS12}
}

// Run runs a check of a: it applies the effective timeout, recovers panics,
// fills id, monitor id, generation, region and checked_at, and removes the
// assignment's header values (credentials) from the result's error message
// and details, where an echoing target could otherwise have them stored.
func Run(ctx context.Context, a *probeapi.Assignment, env *Env) (res probeapi.Result) {
	start := env.now()
	defer func() {
		if p := recover(); p != nil {
			env.Log.Error(fmt.Errorf("%v", p), "check panicked", "monitor", a.ID, "type", a.Type)
			res = failure(probeapi.StatusUnknown, probeapi.ErrorInternal, fmt.Errorf("probe fault: %v", p))
		}
		id, err := uuid.NewV7()
		if err != nil {
			id = uuid.New()
		}
		res.ID = id.String()
		res.MonitorID = a.ID
		res.Generation = a.Generation
		res.Region = env.Region
		res.CheckedAt = start.UTC().Truncate(time.Microsecond)
		if len(res.ErrorMessage) > maxErrorBytes {
			res.ErrorMessage = res.ErrorMessage[:maxErrorBytes]
		}
		credentials.ScrubResult(&res, credentials.Values(a))
		if res.Status == "" {
			res.Status = probeapi.StatusUnknown
		}
	}()
	check, ok := registry[a.Type]
	if !ok {
		return failure(probeapi.StatusUnknown, probeapi.ErrorInvalidConfig, fmt.Errorf("monitor type %q is not run by probe agents", a.Type))
	}
	ctx, cancel := context.WithTimeout(ctx, probeapi.EffectiveTimeout(a))
	defer cancel()
	return check(ctx, a, env)
}

// failure builds a result with a status, an error type and a message.
func failure(status probeapi.Status, errType string, err error) probeapi.Result {
	return probeapi.Result{Status: status, ErrorType: errType, ErrorMessage: err.Error()}
}

// applyResponseTime applies the response-time thresholds of http, api,
// grpc and websocket checks to an up result: slower than maxMs is down,
// slower than degradedMs is degraded; zero is no threshold. A result that
// failed already keeps its first reason.
func applyResponseTime(res *probeapi.Result, elapsedMs, maxMs, degradedMs int64) {
	if res.Status != probeapi.StatusUp {
		return
	}
	switch {
	case maxMs > 0 && elapsedMs > maxMs:
		res.Status, res.ErrorType = probeapi.StatusDown, probeapi.ErrorResponseTime
		res.ErrorMessage = fmt.Sprintf("response took %d ms, more than %d ms", elapsedMs, maxMs)
	case degradedMs > 0 && elapsedMs > degradedMs:
		res.Status, res.ErrorType = probeapi.StatusDegraded, probeapi.ErrorResponseTime
		res.ErrorMessage = fmt.Sprintf("response took %d ms, more than %d ms", elapsedMs, degradedMs)
	}
}

// fromError classifies a dial, resolve or I/O error into a result.
func fromError(err error) probeapi.Result {
	status, typ := classify(err)
	return failure(status, typ, err)
}

// classify maps an error onto a status and an error type. Guard refusals
// are blocked; failures of the probe's own resolver or socket resources are
// unknown; everything the target is responsible for is down.
func classify(err error) (probeapi.Status, string) {
	var (
		dnsErr  *net.DNSError
		netErr  net.Error
		certErr *tls.CertificateVerificationError
		alert   tls.AlertError
		recErr  tls.RecordHeaderError
		x509Err x509.UnknownAuthorityError
		hostErr x509.HostnameError
		invErr  x509.CertificateInvalidError
	)
	var credErr *credentialOriginError
	switch {
	case errors.As(err, &credErr):
		return probeapi.StatusDown, probeapi.ErrorCredentialOrigin
	case netguard.IsBlocked(err):
		return probeapi.StatusBlocked, probeapi.ErrorBlocked
	case errors.As(err, &dnsErr):
		if dnsErr.IsNotFound {
			return probeapi.StatusDown, probeapi.ErrorDNS
		}
		// SERVFAIL, timeouts or an unreachable local resolver: the probe
		// cannot tell whether the target is at fault.
		return probeapi.StatusUnknown, probeapi.ErrorDNS
	case errors.Is(err, syscall.EMFILE), errors.Is(err, syscall.ENFILE), errors.Is(err, syscall.ENOBUFS):
		return probeapi.StatusUnknown, probeapi.ErrorInternal
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return probeapi.StatusDown, probeapi.ErrorTimeout
	case errors.Is(err, syscall.ECONNREFUSED):
		return probeapi.StatusDown, probeapi.ErrorRefused
	case errors.As(err, &certErr), errors.As(err, &alert), errors.As(err, &recErr), errors.As(err, &x509Err),
		errors.As(err, &hostErr), errors.As(err, &invErr):
		return probeapi.StatusDown, probeapi.ErrorTLS
	default:
		return probeapi.StatusDown, probeapi.ErrorConnection
	}
}

// ms converts a duration to whole milliseconds for ResponseTimeMs.
func ms(d time.Duration) int64 { return d.Milliseconds() }

// fms converts a duration to fractional milliseconds for Timings.
func fms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// details encodes v as Result.Details.
func details(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

// tlsInfo describes the leaf certificate of a TLS connection.
func tlsInfo(cs *tls.ConnectionState) *probeapi.TLSInfo {
	if cs == nil || len(cs.PeerCertificates) == 0 {
		return nil
	}
	leaf := cs.PeerCertificates[0]
	return &probeapi.TLSInfo{NotAfter: leaf.NotAfter.UTC(), Issuer: leaf.Issuer.String(), Subject: leaf.Subject.String()}
}

// truncateString cuts s to n bytes and marks the cut, for messages that
// quote user input (a path, a header name, a tool name).
func truncateString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
