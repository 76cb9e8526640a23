package expiry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/alertevent"
	"github.com/uptime-operator/uptime-operator/internal/hostname"
	"github.com/uptime-operator/uptime-operator/internal/monitor"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// DefaultRDAPBaseURL is the RDAP bootstrap service used when none is set; it
// redirects each domain to its registry's RDAP server.
const DefaultRDAPBaseURL = "https://rdap.org"

// Defaults of a Checker.
const (
	// DefaultInterval is the longest sleep between two sweeps.
	DefaultInterval = 15 * time.Minute
	// DomainLookupInterval is how often one domain is looked up over RDAP.
	DomainLookupInterval = 24 * time.Hour
	// RefreshLookupInterval is the shortest time between two lookups of one
	// domain when a refresh asks for one.
	RefreshLookupInterval = time.Hour
	// certWindow: certificate observations older than this relative to the
	// newest one of the monitor are stale (a region that stopped checking).
	certWindow = 24 * time.Hour
	// observeEvery is how often an unchanged certificate is written again,
	// to keep its observation fresh.
	observeEvery = time.Hour
	// ManagerRegion is the region name of certificates fetched by Refresh.
	ManagerRegion = "manager"
)

// Notifier builds notice events addressed to the channels that take them.
// It is declared here, where it is used, so this service does not depend
// on the alerting package; the manager wires *alerting.Router.
type Notifier interface {
	// NoticeEvent builds the outbox event of a notice of kind with payload
	// in namespace; affected monitors narrow the channels by routing.
	NoticeEvent(ctx context.Context, namespace, kind string, payload any, affected []*monv1.Monitor) (store.OutboxEvent, error)
	// Link is the dashboard URL of path, "" without a public URL.
	Link(path string) string
}

// Checker records certificate and domain expiry of monitors and sends
// expiry notices. It is a manager Runnable that needs leader election;
// ObserveTLS, Details and Refresh may be called on every replica.
type Checker struct {
	// Store keeps observations, domain lookups and sent notices.
	Store Store
	// Reader lists Monitors (the manager's cache).
	Reader client.Reader
	// Notifier builds the notice events and picks their channels.
	Notifier Notifier
	// Kick wakes the delivery worker after notices are enqueued; may be nil.
	Kick func()
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// RDAPBaseURL is the RDAP service queried as {RDAPBaseURL}/domain/{name}
	// (DefaultRDAPBaseURL when empty).
	RDAPBaseURL string
	// HTTPClient makes RDAP requests (a client with a 15 s timeout when nil).
	HTTPClient *http.Client
	// AllowPrivateTargets lets Refresh connect to private addresses (the
	// cluster's monitor target setting).
	AllowPrivateTargets bool
	// Interval is the longest sleep between sweeps (DefaultInterval when 0).
	Interval time.Duration
	// Log receives the checker's logs.
	Log logr.Logger

	mu       sync.Mutex
	observed map[string]observation
	// lookupMu serialises RDAP lookups, so a sweep and a refresh never ask
	// for one domain twice.
	lookupMu sync.Mutex
}

type observation struct {
	tls     probeapi.TLSInfo
	written time.Time
}

// NeedLeaderElection makes the sweep run on the leader only.
func (c *Checker) NeedLeaderElection() bool { return true }

func (c *Checker) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *Checker) log() logr.Logger {
	if c.Log.GetSink() == nil {
		return logr.Discard()
	}
	return c.Log
}

// Start sweeps until ctx ends, sleeping until the next stage boundary of any
// monitor or Interval, whichever comes first.
func (c *Checker) Start(ctx context.Context) error {
	interval := c.Interval
	if interval <= 0 {
		interval = DefaultInterval
	}
	for {
		next, err := c.Sweep(ctx)
		if err != nil && ctx.Err() == nil {
			c.log().Error(err, "expiry sweep failed")
		}
		wait := interval
		if !next.IsZero() {
			// A boundary already past (a notice whose store write failed) is
			// retried after a pause, not in a tight loop.
			wait = min(wait, max(next.Sub(c.now()), 10*time.Second))
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
}

// ObserveTLS records the certificate a region saw in a check of monitorID at
// at. The engine calls it for every result that carries TLS information; an
// unchanged certificate is written at most once an hour per monitor and
// region.
func (c *Checker) ObserveTLS(ctx context.Context, monitorID, region string, at time.Time, info probeapi.TLSInfo) error {
	if info.NotAfter.IsZero() || monitorID == "" {
		return nil
	}
	key := monitorID + "\x00" + region
	c.mu.Lock()
	prev, ok := c.observed[key]
	c.mu.Unlock()
	if ok && sameCert(prev.tls, info) && at.Sub(prev.written) < observeEvery && !at.Before(prev.written) {
		return nil
	}
	err := c.Store.RecordCertObservation(ctx, store.CertObservation{MonitorID: monitorID, Region: region, ObservedAt: at,
		NotAfter: info.NotAfter, Issuer: info.Issuer, Subject: info.Subject})
	if err != nil {
		return fmt.Errorf("observe certificate of %s: %w", monitorID, err)
	}
	c.mu.Lock()
	if c.observed == nil {
		c.observed = map[string]observation{}
	}
	if len(c.observed) > 100000 {
		clear(c.observed)
	}
	c.observed[key] = observation{tls: info, written: at}
	c.mu.Unlock()
	return nil
}

func sameCert(a, b probeapi.TLSInfo) bool {
	return a.NotAfter.Equal(b.NotAfter) && a.Issuer == b.Issuer && a.Subject == b.Subject
}

// Sweep evaluates every monitor once and returns the earliest next stage
// boundary (zero when none is pending).
func (c *Checker) Sweep(ctx context.Context) (time.Time, error) {
	var list monv1.MonitorList
	if err := c.Reader.List(ctx, &list); err != nil {
		return time.Time{}, fmt.Errorf("list monitors: %w", err)
	}
	var next time.Time
	var errs []error
	for i := range list.Items {
		m := &list.Items[i]
		if !Applies(m) || m.Spec.Paused || !m.DeletionTimestamp.IsZero() {
			continue
		}
		n, err := c.evaluate(ctx, m, false)
		if err != nil {
			errs = append(errs, fmt.Errorf("monitor %s/%s: %w", m.Namespace, m.Name, err))
			continue
		}
		if !n.IsZero() && (next.IsZero() || n.Before(next)) {
			next = n
		}
		if ctx.Err() != nil {
			return next, ctx.Err()
		}
	}
	return next, errors.Join(errs...)
}

// Applies reports whether expiry is watched for m: the certificate of
// every check that makes a TLS handshake (https and wss URLs, port checks
// with tls, gRPC over TLS), and the domain of every URL a type checks as
// spec.url (http, api, mcp, browser).
func Applies(m *monv1.Monitor) bool {
	if monitor.Endpoint(&m.Spec).TLSAddr != "" {
		return true
	}
	info, _ := monv1.LookupMonitorType(m.Spec.Type)
	return info.URL != monv1.URLNone && m.Spec.URL != ""
}

// target is where m's certificate is served and which domain it is on.
type target struct {
	// tlsAddr is host:port of a TLS endpoint, empty when m does not use TLS;
	// serverName is the name its checks send.
	tlsAddr, serverName string
	// host is the target's host name or IP literal.
	host string
	// domain is the registrable domain of host, empty for IP literals and
	// names without one.
	domain string
}

func targetOf(m *monv1.Monitor) target {
	e := monitor.Endpoint(&m.Spec)
	return target{tlsAddr: e.TLSAddr, serverName: e.ServerName, host: e.Host, domain: hostname.Registrable(e.Host)}
}

// evaluate sends the notices due for m and returns its next stage boundary.
// forceLookup looks the domain up again unless it was looked up within
// RefreshLookupInterval.
func (c *Checker) evaluate(ctx context.Context, m *monv1.Monitor, forceLookup bool) (time.Time, error) {
	now := c.now()
	t := targetOf(m)
	reminder := ReminderDays(m)
	var next time.Time
	earliest := func(n time.Time) {
		if !n.IsZero() && (next.IsZero() || n.Before(next)) {
			next = n
		}
	}
	var errs []error
	if t.tlsAddr != "" {
		cert, ok, err := c.currentCert(ctx, string(m.UID))
		switch {
		case err != nil:
			errs = append(errs, err)
		case ok:
			n, err := c.notify(ctx, m, store.ExpiryKindSSL, cert.NotAfter, reminder, now)
			errs = append(errs, err)
			earliest(n)
		}
	}
	if t.domain != "" {
		d, err := c.domainExpiry(ctx, t.domain, forceLookup)
		switch {
		case err != nil:
			errs = append(errs, err)
		case d.ExpiresAt != nil:
			n, err := c.notify(ctx, m, store.ExpiryKindDomain, *d.ExpiresAt, reminder, now)
			errs = append(errs, err)
			earliest(n)
		}
		if !d.CheckedAt.IsZero() {
			// The next lookup is due a day after the last one.
			earliest(d.CheckedAt.Add(DomainLookupInterval))
		}
	}
	return next, errors.Join(errs...)
}

// currentCert returns the certificate of monitorID that expires first among
// the observations made within a day of the newest one: a region still
// served an old certificate is what some users get.
func (c *Checker) currentCert(ctx context.Context, monitorID string) (store.CertObservation, bool, error) {
	obs, err := c.Store.ListCertObservations(ctx, monitorID)
	if err != nil || len(obs) == 0 {
		return store.CertObservation{}, false, err
	}
	best := obs[0]
	for _, o := range obs[1:] {
		if obs[0].ObservedAt.Sub(o.ObservedAt) > certWindow {
			break
		}
		if o.NotAfter.Before(best.NotAfter) {
			best = o
		}
	}
	return best, true, nil
}

// notify records and enqueues the notice of the stage due at now, if any and
// not sent before, and returns the next stage boundary.
func (c *Checker) notify(ctx context.Context, m *monv1.Monitor, kind string, expiresAt time.Time, reminder int, now time.Time) (time.Time, error) {
	expiresAt = expiresAt.UTC().Truncate(time.Second)
	stage, next := StageAt(expiresAt, now, reminder)
	if stage == "" {
		return next, nil
	}
	if c.Notifier == nil {
		return next, errors.New("expiry notices need a notifier")
	}
	p := alertevent.NewExpiryPayload(alertevent.ExpiryFacts{
		Kind: kind, MonitorID: string(m.UID), MonitorName: monitor.DisplayName(m), MonitorURL: monitorTarget(m),
		ExpiresAt: expiresAt, Stage: stage, URL: c.detailsURL(m),
	}, now)
	ev, err := c.Notifier.NoticeEvent(ctx, m.Namespace, p.Event, p, []*monv1.Monitor{m})
	if err != nil {
		return next, fmt.Errorf("build %s notice: %w", p.Event, err)
	}
	ev.CreatedAt = now
	sent, err := c.Store.RecordExpiryNotice(ctx, store.ExpiryNotice{MonitorID: string(m.UID), Kind: kind, ExpiresAt: expiresAt, Stage: stage, SentAt: now}, ev)
	if err != nil {
		return next, err
	}
	if sent {
		c.log().Info("expiry notice enqueued", "monitor", m.Name, "namespace", m.Namespace, "kind", kind, "stage", stage,
			"expiresAt", expiresAt, "channels", len(ev.Channels))
		if c.Kick != nil {
			c.Kick()
		}
	}
	return next, nil
}

func (c *Checker) detailsURL(m *monv1.Monitor) string {
	if c.Notifier == nil {
		return ""
	}
	return c.Notifier.Link("/monitors/" + string(m.UID) + "/domain-ssl")
}

// monitorTarget is the URL or host:port shown in notices.
func monitorTarget(m *monv1.Monitor) string {
	if m.Status.Target != "" {
		return m.Status.Target
	}
	return monitor.Target(&m.Spec)
}
