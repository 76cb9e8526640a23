package monitors

import (
	"net/http"
	"slices"
	"strings"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/httpjson"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// maxExpectedValues mirrors the Monitor CRD's bound on spec.dns.expectedValues.
const maxExpectedValues = 50

// acceptDNSRecords makes the latest observed answer of a DNS monitor its
// expected value: spec.dns.expectedValues becomes that answer.
func (h *history) acceptDNSRecords(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	m := h.d.PathMonitor(w, r)
	if m == nil {
		return
	}
	if m.Spec.Type != monv1.MonitorDNS || m.Spec.DNS == nil {
		core.WriteValidation(w, core.FieldErr("type", "only dns monitors have DNS records"))
		return
	}
	recordType := string(m.Spec.DNS.RecordType)
	if recordType == "" {
		recordType = "A"
	}
	recs, err := h.st.ListDNSRecords(ctx, string(m.UID), false, 100)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	i := slices.IndexFunc(recs, func(rec store.DNSRecord) bool { return strings.EqualFold(rec.RecordType, recordType) })
	if i < 0 {
		core.WriteError(w, http.StatusConflict, core.CodeConflict, "no "+recordType+" answer has been observed yet; run a check first")
		return
	}
	latest := recs[i]
	answers := core.Dedupe(latest.Answers)
	switch {
	case len(answers) == 0:
		core.WriteError(w, http.StatusConflict, core.CodeConflict, "the latest answer is empty; an empty answer cannot be the expected value")
		return
	case len(answers) > maxExpectedValues:
		core.WriteError(w, http.StatusConflict, core.CodeConflict, "the latest answer has more than 50 values, more than a monitor can expect")
		return
	}
	err = h.d.Mutate(ctx, m, func() error {
		if m.Spec.DNS == nil {
			return core.ValidationError(core.FieldErr("type", "only dns monitors have DNS records"))
		}
		m.Spec.DNS.ExpectedValues = answers
		return nil
	})
	if err != nil {
		core.WriteErr(w, r, h.d.WriteFailed(ctx, m.Namespace, err, core.MonitorFieldPath))
		return
	}
	httpjson.Write(w, http.StatusOK, restapi.DNSAccepted{MonitorID: string(m.UID), RecordType: latest.RecordType,
		ObservedAt: core.ISOTime(latest.ObservedAt), ExpectedValues: answers, MatchMode: matchMode(m.Spec.DNS.MatchMode)})
}

func matchMode(m monv1.DNSMatchMode) string {
	if m == "" {
		return "any"
	}
	return string(m)
}

func dnsRecords(rs []store.DNSRecord) []restapi.DNSObservation {
	out := make([]restapi.DNSObservation, 0, len(rs))
	for _, r := range rs {
		out = append(out, restapi.DNSObservation{ObservedAt: core.ISOTime(r.ObservedAt), RecordType: r.RecordType, Answers: core.NonNil(r.Answers), Changed: r.Changed})
	}
	return out
}

func (h *history) dnsRecords(w http.ResponseWriter, r *http.Request) {
	m := h.d.PathMonitor(w, r)
	if m == nil {
		return
	}
	limit, fe := core.IntParam(r, "limit", 50, 1, 1000)
	if fe != nil {
		core.WriteValidation(w, *fe)
		return
	}
	if m.Spec.Type != monv1.MonitorDNS {
		core.WriteValidation(w, core.FieldErr("type", "only dns monitors have DNS records"))
		return
	}
	ctx := r.Context()
	recs, err := h.st.ListDNSRecords(ctx, string(m.UID), false, limit)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	changes, err := h.st.ListDNSRecords(ctx, string(m.UID), true, limit)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	var expected []string
	if m.Spec.DNS != nil {
		expected = m.Spec.DNS.ExpectedValues
	}
	httpjson.Write(w, http.StatusOK, restapi.DNSRecords{Records: dnsRecords(recs), Changes: dnsRecords(changes), ExpectedValues: core.NonNil(expected)})
}
