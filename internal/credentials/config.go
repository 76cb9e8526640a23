package credentials

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/monitorconfig"
)

// Redacted stands for a stored credential wherever a monitor is shown (REST
// and MCP); sent back in an update it keeps the stored value.
const Redacted = "[REDACTED]"

// sensitiveKeys are config key fragments whose string values are
// credentials.
var sensitiveKeys = []string{"password", "passwd", "secret", "token", "apikey", "api_key", "authorization", "credential", "private_key", "cookie", "bearer"}

func sensitiveKey(k string) bool {
	k = strings.ToLower(k)
	for _, s := range sensitiveKeys {
		if strings.Contains(k, s) {
			return true
		}
	}
	return false
}

// RedactConfig returns a copy of a REST monitor config object with stored credentials
// replaced by [REDACTED]: every literal header value (at any depth, e.g. in
// multi-step steps) and every string under a key that names a password,
// token, secret or key. Secret references are shown as they are: they name
// a Secret, they do not hold the value.
func RedactConfig(cfg map[string]any) map[string]any {
	if cfg == nil {
		return nil
	}
	out, _ := redactValue(cfg, "").(map[string]any)
	return out
}

func redactValue(v any, key string) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			if strings.EqualFold(k, "headers") {
				out[k] = redactHeaders(x)
				continue
			}
			out[k] = redactValue(x, k)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = redactValue(x, key)
		}
		return out
	case string:
		if t != "" && sensitiveKey(key) {
			return Redacted
		}
		return t
	default:
		return v
	}
}

func redactHeaders(v any) any {
	hs, ok := v.(map[string]any)
	if !ok {
		return redactValue(v, "headers")
	}
	out := make(map[string]any, len(hs))
	for name, val := range hs {
		if s, ok := val.(string); ok {
			if s == "" {
				out[name] = s
			} else {
				out[name] = Redacted
			}
			continue
		}
		out[name] = redactValue(val, name)
	}
	return out
}

// RestoreRedacted replaces every [REDACTED] string in sent with the value
// at the same place in the stored config cur. It fails when a [REDACTED]
// has no stored value to keep.
func RestoreRedacted(sent, cur map[string]any) (map[string]any, error) {
	out, err := restoreValue(sent, cur, "config")
	if err != nil {
		return nil, err
	}
	m, _ := out.(map[string]any)
	return m, nil
}

func restoreValue(sent, cur any, path string) (any, error) {
	switch t := sent.(type) {
	case string:
		if t != Redacted {
			return t, nil
		}
		if cur == nil {
			return nil, fmt.Errorf("%s is %s but there is no stored value to keep; send the real value", path, Redacted)
		}
		return cur, nil
	case map[string]any:
		cm, _ := cur.(map[string]any)
		out := make(map[string]any, len(t))
		for k, v := range t {
			var cv any
			if cm != nil {
				cv = cm[k]
				if cv == nil && path != "config" && strings.HasSuffix(path, ".headers") {
					// Header names are case-insensitive.
					for ck, x := range cm {
						if strings.EqualFold(ck, k) {
							cv = x
						}
					}
				}
			}
			r, err := restoreValue(v, cv, path+"."+k)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	case []any:
		ca, _ := cur.([]any)
		out := make([]any, len(t))
		for i, v := range t {
			var cv any
			if i < len(ca) {
				cv = ca[i]
			}
			r, err := restoreValue(v, cv, path+"["+strconv.Itoa(i)+"]")
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	default:
		return sent, nil
	}
}

// RestoreConfig replaces the [REDACTED] credentials of a spec written
// through the REST API (sent) by the stored ones (cur, nil on create),
// list by list: every header list of the config struct (monitorconfig's
// HeaderLists: the request headers of http, api and mcp, each multi-step
// step's headers by position), the credentials Redact shows as
// [REDACTED]. Header names compare case-insensitively. On create a
// [REDACTED] has nothing to keep and is refused. In a list whose origin
// the write moves (see Moved) a [REDACTED] is not restored but dropped:
// RestoreConfig returns the REST paths of the dropped headers.
func RestoreConfig(sent, cur *monv1.MonitorSpec, moved Moved) ([]string, error) {
	stored := map[string][]monv1.HTTPHeader{}
	if cur != nil {
		for _, l := range monitorconfig.HeaderLists(cur) {
			stored[l.Path] = *l.Headers
		}
	}
	var dropped []string
	for _, l := range monitorconfig.HeaderLists(sent) {
		d, err := restoreHeaders(l.Headers, stored[l.Path], "config."+l.Path, moved.moved(l))
		if err != nil {
			return nil, err
		}
		dropped = append(dropped, d...)
	}
	return dropped, nil
}

func restoreHeaders(sent *[]monv1.HTTPHeader, cur []monv1.HTTPHeader, path string, moved bool) ([]string, error) {
	var dropped []string
	kept := (*sent)[:0:0]
	for _, h := range *sent {
		if h.ValueFrom != nil || h.Value == nil || *h.Value != Redacted {
			kept = append(kept, h)
			continue
		}
		if moved {
			dropped = append(dropped, path+"."+h.Name)
			continue
		}
		i := slices.IndexFunc(cur, func(c monv1.HTTPHeader) bool { return c.Name == h.Name })
		if i < 0 {
			i = slices.IndexFunc(cur, func(c monv1.HTTPHeader) bool { return strings.EqualFold(c.Name, h.Name) })
		}
		if i < 0 {
			return nil, fmt.Errorf("%s.%s is %s but there is no stored value to keep; send the real value", path, h.Name, Redacted)
		}
		h.Value, h.ValueFrom = cur[i].Value, cur[i].ValueFrom
		kept = append(kept, h)
	}
	if len(kept) == 0 {
		kept = nil
	}
	*sent = kept
	return dropped, nil
}
