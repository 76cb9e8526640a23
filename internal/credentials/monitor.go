package credentials

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/monitorconfig"
)

// secretSuffix ends the name of a Monitor's own credentials Secret.
const secretSuffix = "-credentials"

// SecretName is the name of the Secret that holds the credentials of the
// Monitor named monitor that were written through the REST API. The Secret
// is owned by the Monitor, so it goes when the Monitor goes.
func SecretName(monitor string) string {
	if len(monitor)+len(secretSuffix) <= validation.DNS1123SubdomainMaxLength {
		return monitor + secretSuffix
	}
	sum := sha256.Sum256([]byte(monitor))
	keep := validation.DNS1123SubdomainMaxLength - len(secretSuffix) - 9
	return strings.TrimRight(monitor[:keep], "-.") + "-" + hex.EncodeToString(sum[:4]) + secretSuffix
}

// headerList is one list of request headers of a spec, the prefix of the
// Secret keys its values get, its field path and the URL it is sent to.
type headerList struct {
	prefix  string
	headers []monv1.HTTPHeader
	path    *field.Path
	url     string
	// secret marks a list of secret values (a multistep step's secrets):
	// every value in it is a credential, whatever it is called.
	secret bool
}

// headerLists returns every header list of spec (monitorconfig finds them
// in the config structs: http, each multistep step, mcp, ...). The slices
// alias spec, so callers may change their elements.
func headerLists(spec *monv1.MonitorSpec) []headerList {
	var out []headerList
	for _, l := range monitorconfig.HeaderLists(spec) {
		url := l.URL
		if url == "" {
			url = spec.URL
		}
		prefix := l.Prefix
		if l.Secret {
			prefix += ".secret" // keys apart from the same step's headers
		}
		out = append(out, headerList{prefix, *l.Headers, l.Field, url, l.Secret})
	}
	return out
}

// Redact returns a copy of spec as it may be shown: literal header values
// and values kept in the monitor's own credentials Secret read [REDACTED];
// references to other Secrets stay, since they name a Secret and hold no
// value.
func Redact(spec *monv1.MonitorSpec, monitor string) *monv1.MonitorSpec {
	out := spec.DeepCopy()
	own := SecretName(monitor)
	redacted := Redacted
	for _, l := range headerLists(out) {
		for i := range l.headers {
			h := &l.headers[i]
			switch {
			case h.Value != nil && *h.Value != "":
				h.Value = &redacted
			case h.ValueFrom != nil && h.ValueFrom.Name == own:
				h.Value, h.ValueFrom = &redacted, nil
			}
		}
	}
	return out
}

// HasInline reports whether spec holds a credential value in plain text.
func HasInline(spec *monv1.MonitorSpec) bool {
	for _, l := range headerLists(spec) {
		for _, h := range l.headers {
			if h.Value != nil && *h.Value != "" {
				return true
			}
		}
	}
	return false
}

// Externalize moves every literal header value of spec into the monitor's
// own credentials Secret: the header then references it. old is that
// Secret's current data (nil when there is none). It returns the data the
// Secret must hold for the changed spec: the values moved now and the old
// values the spec still references; keys nothing references any more are
// dropped, except the heartbeat token (monv1.HeartbeatTokenKey). A
// value's key is derived from where the header is (list and name), so
// writing the same spec again gives the same Secret.
func Externalize(spec *monv1.MonitorSpec, monitor string, old map[string][]byte) map[string][]byte {
	own := SecretName(monitor)
	data := map[string][]byte{}
	for _, l := range headerLists(spec) {
		for i := range l.headers {
			h := &l.headers[i]
			switch {
			case h.Value != nil && *h.Value != "":
				key := secretKey(l.prefix, h.Name, data)
				data[key] = []byte(*h.Value)
				h.Value, h.ValueFrom = nil, &monv1.SecretKeySelector{Name: own, Key: key}
			case h.ValueFrom != nil && h.ValueFrom.Name == own:
				if v, ok := old[h.ValueFrom.Key]; ok {
					if _, taken := data[h.ValueFrom.Key]; !taken {
						data[h.ValueFrom.Key] = v
					}
				}
			}
		}
	}
	if tok, ok := old[monv1.HeartbeatTokenKey]; ok {
		data[monv1.HeartbeatTokenKey] = tok // a cron monitor's token is no header's
	}
	return data
}

// secretKey is the Secret key of header name of a list: lower-case (header
// names are case-insensitive), with characters a Secret key cannot hold
// replaced, and a number added when that collides with a key in use.
func secretKey(prefix, name string, used map[string][]byte) string {
	var b strings.Builder
	b.WriteString(prefix + ".")
	for _, r := range strings.ToLower(name) {
		if r == '-' || r == '_' || r == '.' || (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	key := b.String()
	for n := 2; ; n++ {
		if _, ok := used[key]; !ok {
			return key
		}
		key = b.String() + "." + strconv.Itoa(n)
	}
}

// Inline returns a copy of spec whose references into the monitor's own
// credentials Secret (whose data is data) hold the values instead, as they
// were written: for comparing a stored spec with one sent as code.
func Inline(spec *monv1.MonitorSpec, monitor string, data map[string][]byte) *monv1.MonitorSpec {
	out := spec.DeepCopy()
	own := SecretName(monitor)
	for _, l := range headerLists(out) {
		for i := range l.headers {
			h := &l.headers[i]
			if h.ValueFrom != nil && h.ValueFrom.Name == own {
				if v, ok := data[h.ValueFrom.Key]; ok {
					s := string(v)
					h.Value, h.ValueFrom = &s, nil
				}
			}
		}
	}
	return out
}
