package apiserver

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/expiry"
	"github.com/uptime-operator/uptime-operator/internal/httpjson"
	"github.com/uptime-operator/uptime-operator/internal/ratelimit"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// CodeExpiryUnavailable answers domain/SSL endpoints on a server built
// without an expiry checker (not a code of the specification).
const CodeExpiryUnavailable = "EXPIRY_UNAVAILABLE"

// maxExpectedValues mirrors the Monitor CRD's bound on spec.dns.expectedValues.
const maxExpectedValues = 50

// registerExpiryRoutes registers the certificate and domain expiry endpoints
// and DNS answer acceptance. x may be nil: the domain/SSL endpoints then
// answer 503.
func (s *Server) registerExpiryRoutes(x *expiry.Checker) {
	// Domain/SSL refresh: 20 per 15 minutes per account (counted per
	// workspace), plain-text 429 like the other exports and discoveries.
	refresh := newLimiter("domain-ssl-refresh", 20, 15*time.Minute, perWorkspace, ratelimit.Plain)
	s.handle(http.MethodGet, "/monitors/{id}/domain-ssl", s.domainSSL(x))
	s.handle(http.MethodPost, "/monitors/{id}/domain-ssl/refresh", s.refreshDomainSSL(x), withLimit(refresh))
	s.handle(http.MethodPost, "/monitors/{id}/dns-records/accept", s.acceptDNSRecords, withLimit(s.limits.dnsAccept))
}

func writeExpiryUnavailable(w http.ResponseWriter) {
	writeError(w, http.StatusServiceUnavailable, CodeExpiryUnavailable, "certificate and domain expiry checks are not running on this server")
}

// domainSSL answers the certificate and domain expiry of a monitor, as last
// recorded; it looks nothing up.
func (s *Server) domainSSL(x *expiry.Checker) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		m := s.pathMonitor(w, r)
		if m == nil {
			return
		}
		if x == nil {
			writeExpiryUnavailable(w)
			return
		}
		d, err := x.Details(r.Context(), m)
		if err != nil {
			s.writeErr(w, r, err)
			return
		}
		httpjson.Write(w, http.StatusOK, d)
	}
}

// refreshedDetails is the refresh answer: the details plus why fetching the
// certificate failed, if it did.
type refreshedDetails struct {
	expiry.Details
	RefreshError *string `json:"refresh_error"`
}

// refreshDomainSSL re-checks the certificate (from the manager, through the
// address guard) and the domain registration now.
func (s *Server) refreshDomainSSL(x *expiry.Checker) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		m := s.pathMonitor(w, r)
		if m == nil {
			return
		}
		if x == nil {
			writeExpiryUnavailable(w)
			return
		}
		if !expiry.Applies(m) {
			writeValidation(w, fieldErr("type", "domain and certificate expiry apply to http, api and mcp monitors and to port monitors with tls"))
			return
		}
		d, err := x.Refresh(r.Context(), m)
		var fe *expiry.FetchError
		switch {
		case errors.As(err, &fe):
			msg := fe.Error()
			httpjson.Write(w, http.StatusOK, refreshedDetails{Details: d, RefreshError: &msg})
		case err != nil:
			s.writeErr(w, r, err)
		default:
			httpjson.Write(w, http.StatusOK, refreshedDetails{Details: d})
		}
	}
}

// acceptDNSRecords makes the latest observed answer of a DNS monitor its
// expected value: spec.dns.expectedValues becomes that answer.
func (s *Server) acceptDNSRecords(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	m := s.pathMonitor(w, r)
	if m == nil {
		return
	}
	if m.Spec.Type != monv1.MonitorDNS || m.Spec.DNS == nil {
		writeValidation(w, fieldErr("type", "only dns monitors have DNS records"))
		return
	}
	recordType := string(m.Spec.DNS.RecordType)
	if recordType == "" {
		recordType = "A"
	}
	recs, err := s.opts.Store.ListDNSRecords(ctx, string(m.UID), false, 100)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	i := slices.IndexFunc(recs, func(rec store.DNSRecord) bool { return strings.EqualFold(rec.RecordType, recordType) })
	if i < 0 {
		writeError(w, http.StatusConflict, CodeConflict, "no "+recordType+" answer has been observed yet; run a check first")
		return
	}
	latest := recs[i]
	answers := dedupe(latest.Answers)
	switch {
	case len(answers) == 0:
		writeError(w, http.StatusConflict, CodeConflict, "the latest answer is empty; an empty answer cannot be the expected value")
		return
	case len(answers) > maxExpectedValues:
		writeError(w, http.StatusConflict, CodeConflict, "the latest answer has more than 50 values, more than a monitor can expect")
		return
	}
	err = s.mutate(ctx, m, func() error {
		if m.Spec.DNS == nil {
			return validationError(fieldErr("type", "only dns monitors have DNS records"))
		}
		m.Spec.DNS.ExpectedValues = answers
		return nil
	})
	if err != nil {
		s.writeErr(w, r, s.writeFailed(ctx, m.Namespace, err, monitorFieldPath))
		return
	}
	httpjson.Write(w, http.StatusOK, restapi.DNSAccepted{MonitorID: string(m.UID), RecordType: latest.RecordType,
		ObservedAt: isoTime(latest.ObservedAt), ExpectedValues: answers, MatchMode: matchMode(m.Spec.DNS.MatchMode)})
}

func matchMode(m monv1.DNSMatchMode) string {
	if m == "" {
		return "any"
	}
	return string(m)
}

// dedupe drops repeated values, keeping the first of each.
func dedupe(vs []string) []string {
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		if v = strings.TrimSpace(v); v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}
