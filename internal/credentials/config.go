package credentials

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

// Redacted stands for a stored credential wherever a monitor is shown (REST
// and MCP); sent back in an update it keeps the stored value.
const Redacted = "[REDACTED]"

// sensitiveKey reports whether a config key names a credential (the one
// rule, SensitiveName).
func sensitiveKey(k string) bool { return SensitiveName(k) }

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

// RestoreConfig replaces the [REDACTED] credentials of a config sent to the
// REST API by the stored ones, field by field: the values of the request
// headers (http, api, mcp) and of each multi-step step's headers (steps by
// position), the credentials Redact shows as [REDACTED]. Header names
// compare case-insensitively. cur is the stored config, nil on create,
// where a [REDACTED] has nothing to keep and is refused. In a list whose
// origin the write moves (see Moved) a [REDACTED] is not restored but
// dropped: RestoreConfig returns the paths of the dropped headers.
func RestoreConfig(sent, cur *probeapi.Config, moved Moved) ([]string, error) {
	var stored probeapi.Config
	if cur != nil {
		stored = *cur
	}
	dropped, err := restoreHeaders(sent.Headers, stored.Headers, "config.headers", moved.Headers)
	if err != nil {
		return nil, err
	}
	for i := range sent.Steps {
		var was probeapi.Headers
		if i < len(stored.Steps) {
			was = stored.Steps[i].Headers
		}
		d, err := restoreHeaders(sent.Steps[i].Headers, was, StepPath(i), moved.Steps[i])
		if err != nil {
			return nil, err
		}
		dropped = append(dropped, d...)
	}
	return dropped, nil
}

func restoreHeaders(sent, cur probeapi.Headers, path string, moved bool) ([]string, error) {
	var dropped []string
	for name, v := range sent {
		if v.SecretRef != nil || v.Value != Redacted {
			continue
		}
		if moved {
			delete(sent, name)
			dropped = append(dropped, path+"."+name)
			continue
		}
		was, ok := cur[name]
		if !ok {
			for k, x := range cur {
				if strings.EqualFold(k, name) {
					was, ok = x, true
				}
			}
		}
		if !ok {
			return nil, fmt.Errorf("%s.%s is %s but there is no stored value to keep; send the real value", path, name, Redacted)
		}
		sent[name] = was
	}
	return dropped, nil
}
