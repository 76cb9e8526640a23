package expiry

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"time"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/alertevent"
	"github.com/uptime-operator/uptime-operator/internal/netguard"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// Details is the certificate and domain expiry of one monitor, as
// GET /monitors/:id/domain-ssl answers it.
type Details struct {
	MonitorID string `json:"monitor_id"`
	// SSL is nil when the monitor does not use TLS.
	SSL *CertDetails `json:"ssl"`
	// Domain is nil when the target has no registrable domain (an IP
	// address).
	Domain *DomainDetails `json:"domain"`
	// ReminderDays is the monitor's early reminder threshold, nil when unset.
	ReminderDays *int `json:"reminder_days"`
	// Notices are the expiry notices sent for the monitor, newest first.
	Notices []NoticeDetails `json:"notices"`
}

// CertDetails describes the certificate of a TLS monitor.
type CertDetails struct {
	// Endpoint is the host:port the certificate is served on.
	Endpoint string `json:"endpoint"`
	// ExpiresAt and the fields after it are null until a check reported a
	// certificate.
	ExpiresAt     *string `json:"expires_at"`
	DaysRemaining *int    `json:"days_remaining"`
	Issuer        *string `json:"issuer"`
	Subject       *string `json:"subject"`
	ObservedAt    *string `json:"observed_at"`
	// Stage is the notice stage that applies now, null when none does.
	Stage *string `json:"stage"`
	// Regions lists the certificate each region saw last.
	Regions []RegionCert `json:"regions"`
}

// RegionCert is the certificate one region saw last.
type RegionCert struct {
	Region     string `json:"region"`
	ExpiresAt  string `json:"expires_at"`
	Issuer     string `json:"issuer"`
	Subject    string `json:"subject"`
	ObservedAt string `json:"observed_at"`
}

// DomainDetails describes the registration of the target's domain.
type DomainDetails struct {
	Name          string  `json:"name"`
	ExpiresAt     *string `json:"expires_at"`
	DaysRemaining *int    `json:"days_remaining"`
	Registrar     *string `json:"registrar"`
	// CheckedAt is the time of the last RDAP lookup, null before the first.
	CheckedAt *string `json:"checked_at"`
	// Error is why the last lookup failed, null when it succeeded.
	Error *string `json:"error"`
	Stage *string `json:"stage"`
}

// NoticeDetails is one sent expiry notice.
type NoticeDetails struct {
	Kind      string `json:"kind"`
	Stage     string `json:"stage"`
	ExpiresAt string `json:"expires_at"`
	SentAt    string `json:"sent_at"`
}

// Details reads m's expiry state from the store; it looks nothing up.
func (c *Checker) Details(ctx context.Context, m *monv1.Monitor) (Details, error) {
	now := c.now()
	t := targetOf(m)
	reminder := ReminderDays(m)
	out := Details{MonitorID: string(m.UID), Notices: []NoticeDetails{}}
	if reminder > 0 {
		out.ReminderDays = &reminder
	}
	if !Applies(m) {
		return out, nil
	}
	if t.tlsAddr != "" {
		cd := &CertDetails{Endpoint: t.tlsAddr, Regions: []RegionCert{}}
		obs, err := c.Store.ListCertObservations(ctx, string(m.UID))
		if err != nil {
			return out, err
		}
		for _, o := range obs {
			cd.Regions = append(cd.Regions, RegionCert{Region: o.Region, ExpiresAt: iso(o.NotAfter), Issuer: o.Issuer,
				Subject: o.Subject, ObservedAt: iso(o.ObservedAt)})
		}
		if cert, ok, err := c.currentCert(ctx, string(m.UID)); err != nil {
			return out, err
		} else if ok {
			cd.ExpiresAt, cd.Issuer, cd.Subject = ptr(iso(cert.NotAfter)), ptr(cert.Issuer), ptr(cert.Subject)
			cd.ObservedAt = ptr(iso(obs[0].ObservedAt))
			cd.DaysRemaining = ptr(alertevent.DaysRemaining(cert.NotAfter, now))
			cd.Stage = stagePtr(cert.NotAfter, now, reminder)
		}
		out.SSL = cd
	}
	if t.domain != "" {
		dd := &DomainDetails{Name: t.domain}
		d, err := c.Store.GetDomainExpiry(ctx, t.domain)
		switch {
		case errors.Is(err, store.ErrNotFound):
		case err != nil:
			return out, err
		default:
			dd.CheckedAt = ptr(iso(d.CheckedAt))
			if d.Registrar != "" {
				dd.Registrar = ptr(d.Registrar)
			}
			if d.Error != "" {
				dd.Error = ptr(d.Error)
			}
			if d.ExpiresAt != nil {
				dd.ExpiresAt = ptr(iso(*d.ExpiresAt))
				dd.DaysRemaining = ptr(alertevent.DaysRemaining(*d.ExpiresAt, now))
				dd.Stage = stagePtr(*d.ExpiresAt, now, reminder)
			}
		}
		out.Domain = dd
	}
	notices, err := c.Store.ListExpiryNotices(ctx, string(m.UID))
	if err != nil {
		return out, err
	}
	for _, n := range notices {
		out.Notices = append(out.Notices, NoticeDetails{Kind: n.Kind, Stage: n.Stage, ExpiresAt: iso(n.ExpiresAt), SentAt: iso(n.SentAt)})
	}
	return out, nil
}

// Refresh re-checks m now: it fetches the certificate from the manager
// (through the address guard), looks the domain up again unless that
// happened within the last hour, sends any notice now due and returns the
// new details. A failed handshake is reported in the error and does not stop
// the domain lookup.
func (c *Checker) Refresh(ctx context.Context, m *monv1.Monitor) (Details, error) {
	var errs []error
	if t := targetOf(m); t.tlsAddr != "" && Applies(m) {
		info, err := c.fetchCert(ctx, t)
		if err != nil {
			errs = append(errs, err)
		} else if err := c.ObserveTLS(ctx, string(m.UID), ManagerRegion, c.now(), info); err != nil {
			return Details{}, err
		}
	}
	if Applies(m) && !m.Spec.Paused {
		if _, err := c.evaluate(ctx, m, true); err != nil {
			return Details{}, err
		}
	}
	d, err := c.Details(ctx, m)
	if err != nil {
		return d, err
	}
	return d, errors.Join(errs...)
}

// fetchCert performs a TLS handshake with t and returns its leaf
// certificate. The chain is not verified: an expired or self-signed
// certificate is exactly what this has to report.
func (c *Checker) fetchCert(ctx context.Context, t target) (probeapi.TLSInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	d := tls.Dialer{
		NetDialer: netguard.Guard{AllowPrivate: c.AllowPrivateTargets}.Dialer(10 * time.Second),
		Config:    &tls.Config{ServerName: t.serverName, InsecureSkipVerify: true, MinVersion: tls.VersionTLS10}, //nolint:gosec // reading the certificate, not trusting it
	}
	conn, err := d.DialContext(ctx, "tcp", t.tlsAddr)
	if err != nil {
		return probeapi.TLSInfo{}, &FetchError{Endpoint: t.tlsAddr, Err: err}
	}
	defer func() { _ = conn.Close() }()
	certs := conn.(*tls.Conn).ConnectionState().PeerCertificates
	if len(certs) == 0 {
		return probeapi.TLSInfo{}, &FetchError{Endpoint: t.tlsAddr, Err: errors.New("no certificate presented")}
	}
	return tlsInfo(certs[0]), nil
}

func tlsInfo(c *x509.Certificate) probeapi.TLSInfo {
	return probeapi.TLSInfo{NotAfter: c.NotAfter.UTC(), Issuer: c.Issuer.String(), Subject: c.Subject.String()}
}

// FetchError reports a failed certificate fetch of Refresh.
type FetchError struct {
	Endpoint string
	Err      error
}

func (e *FetchError) Error() string {
	if netguard.IsBlocked(e.Err) {
		return fmt.Sprintf("fetch certificate of %s: the address is not reachable from the internet", e.Endpoint)
	}
	return fmt.Sprintf("fetch certificate of %s: %v", e.Endpoint, e.Err)
}

func (e *FetchError) Unwrap() error { return e.Err }

func stagePtr(expiresAt, now time.Time, reminder int) *string {
	if s, _ := StageAt(expiresAt.UTC().Truncate(time.Second), now, reminder); s != "" {
		return &s
	}
	return nil
}

func iso(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func ptr[T any](v T) *T { return &v }
