package probeapi

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"sync"
)

// Headers are request headers by name.
type Headers map[string]HeaderValue

// HeaderValue is one request header's value: text, or (in the REST API and
// the model) a reference to a Secret key, written {"secret_ref": {"name",
// "key"}}. The manager resolves references before assignment, so agents only
// ever see text.
type HeaderValue struct {
	Value     string
	SecretRef *SecretKeyRef
}

// SecretKeyRef names a key of a Secret in the monitor's namespace.
type SecretKeyRef struct {
	Name string `json:"name"`
	Key  string `json:"key"`
}

// KeyError is a config key whose value has the wrong shape.
type KeyError struct {
	Key, Msg string
}

func (e *KeyError) Error() string { return e.Key + ": " + e.Msg }

// TextHeaders makes Headers of plain values.
func TextHeaders(h map[string]string) Headers {
	if h == nil {
		return nil
	}
	out := make(Headers, len(h))
	for k, v := range h {
		out[k] = HeaderValue{Value: v}
	}
	return out
}

// Text returns the header values as text; unresolved Secret references are
// left out (an assignment never holds one).
func (hs Headers) Text() map[string]string {
	if len(hs) == 0 {
		return nil
	}
	out := make(map[string]string, len(hs))
	for k, v := range hs {
		if v.SecretRef == nil {
			out[k] = v.Value
		}
	}
	return out
}

// UnmarshalJSON accepts a string or a secret reference.
func (h *HeaderValue) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &h.Value)
	}
	var ref struct {
		SecretRef *SecretKeyRef `json:"secret_ref"`
	}
	if err := json.Unmarshal(b, &ref); err != nil || ref.SecretRef == nil || ref.SecretRef.Name == "" || ref.SecretRef.Key == "" {
		return &KeyError{Key: "headers", Msg: `header values must be strings or {"secret_ref": {"name", "key"}}`}
	}
	h.SecretRef = ref.SecretRef
	return nil
}

// MarshalJSON writes the text or the secret reference.
func (h HeaderValue) MarshalJSON() ([]byte, error) {
	if h.SecretRef != nil {
		return json.Marshal(map[string]any{"secret_ref": h.SecretRef})
	}
	return json.Marshal(h.Value)
}

// configShape is what the tags of Config say: the keys each monitor type
// accepts (from the `for` tags) and where each key's field is.
type configShape struct {
	byType map[string]map[string]bool
	fields map[string][]int
}

// shape reads Config's tags once.
var shape = sync.OnceValue(func() configShape {
	out := configShape{byType: map[string]map[string]bool{}, fields: map[string][]int{}}
	var walk func(t reflect.Type, index []int)
	walk = func(t reflect.Type, index []int) {
		for i := range t.NumField() {
			f := t.Field(i)
			at := append(slices.Clone(index), i)
			if f.Anonymous {
				walk(f.Type, at)
				continue
			}
			key, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			out.fields[key] = at
			for _, typ := range strings.Fields(f.Tag.Get("for")) {
				if out.byType[typ] == nil {
					out.byType[typ] = map[string]bool{}
				}
				out.byType[typ][key] = true
			}
		}
	}
	walk(reflect.TypeOf(Config{}), nil)
	return out
})

// CopyKey sets the field of config key in c to its value in from, so a
// partial update (the keys a REST client sent) overlays a stored config
// field by field. It reports false for a key Config does not have.
func (c *Config) CopyKey(key string, from *Config) bool {
	at, ok := shape().fields[key]
	if ok {
		reflect.ValueOf(c).Elem().FieldByIndex(at).Set(reflect.ValueOf(from).Elem().FieldByIndex(at))
	}
	return ok
}

// ClearKey resets the field of config key in c to its zero value (the key
// is then absent from the wire form). It reports false for a key Config
// does not have.
func (c *Config) ClearKey(key string) bool {
	at, ok := shape().fields[key]
	if ok {
		f := reflect.ValueOf(c).Elem().FieldByIndex(at)
		f.Set(reflect.Zero(f.Type()))
	}
	return ok
}

// KeyAllowed reports whether config key belongs to monitors of type typ.
func KeyAllowed(typ, key string) bool { return shape().byType[typ][key] }

// ConfigKeys lists every key of Config, sorted.
func ConfigKeys() []string {
	seen := map[string]bool{}
	for _, keys := range shape().byType {
		for k := range keys {
			seen[k] = true
		}
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
