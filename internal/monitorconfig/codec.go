// Package monitorconfig is the wire form of a monitor's type settings,
// derived from the typed config structs of the Monitor CRD
// (api/v1alpha1: HTTPConfig, PingConfig, ...; monv1.MonitorTypeRegistry
// names the struct of each type). The REST API's monitor `config` object
// and the probe agent's assignment carry the struct's fields under
// snake_case keys, flat (one object per monitor); this package reads the
// keys, their Go types and their nesting from the struct by reflection, so
// a config key is declared once: as a field of the CRD struct, with its
// kubebuilder bounds and its doc comment.
//
// What the struct does not say by its json name is said by a `wire` tag on
// the field, comma-separated:
//
//	wire:"timeout"          the key is timeout (not the snake_case of the json name)
//	wire:",json"            a string holding JSON text, sent as that JSON value
//	                        (it must be an object)
//	wire:",scalar"          a string that also decodes from a JSON number,
//	                        boolean or null (kept in its text form)
//	wire:",upper"           a string upper-cased when decoded (methods,
//	                        record types)
//
// A `guard` tag marks a field naming where the check connects, so that
// admission holds it to its shape and the address guard
// (internal/monitor, Targets below) without a rule written for the type:
//
//	guard:"host"            a host name or IP address
//	guard:"hostport"        host:port, the port 1-65535
//	guard:"http-url"        an http:// or https:// URL without user information
//	guard:"ws-url"          a ws:// or wss:// URL without user information
//
// A []monv1.HTTPHeader is an object of header name to value, a value being
// a string or {"secret_ref": {"name", "key"}} (a Secret key read by the
// manager; agents only ever get text).
package monitorconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	fieldpath "k8s.io/apimachinery/pkg/util/validation/field"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

// KeyError is a config value the codec refuses; Key is its wire path
// (timeout, steps[0].url, tool_call.arguments).
type KeyError struct {
	Key, Msg string
}

func (e *KeyError) Error() string { return e.Key + ": " + e.Msg }

// UnknownKey is the Msg of a KeyError for a key the type does not have.
const UnknownKey = "unknown key"

// Kind is how a field is carried on the wire.
type Kind int

const (
	KindPlain   Kind = iota // a JSON value of the field's Go type
	KindStruct              // a nested object (struct or pointer to struct)
	KindList                // an array of nested objects
	KindHeaders             // []monv1.HTTPHeader as a name → value object
	KindJSON                // a string holding JSON text
	KindScalar              // a string decoded from any JSON scalar
	KindUpper               // a string upper-cased on decode
)

// field is one key of a struct's wire form.
type field struct {
	key       string // wire key
	name      string // json name in the CRD
	index     int
	typ       reflect.Type
	kind      Kind
	omitempty bool
	guard     Guard
	elem      *shape // KindStruct, KindList
	// secret marks a KindHeaders list whose values are all credentials
	// (wire:",secret"): a multistep step's secrets.
	secret bool
}

// Field describes one wire key of a config struct (or of a struct nested
// in one).
type Field struct {
	// Key is the wire key; Name the CRD field's json name.
	Key, Name string
	// Kind says how the value is carried.
	Kind Kind
	// Required is true for a field without omitempty (+required).
	Required bool
	// Guard is the field's `guard` tag.
	Guard Guard
	// Elem is the nested struct type of a KindStruct or KindList field.
	Elem reflect.Type
}

// Fields are the wire keys of struct type t, in field order.
func Fields(t reflect.Type) []Field {
	s := shapeOf(t)
	out := make([]Field, len(s.fields))
	for i, f := range s.fields {
		out[i] = Field{Key: f.key, Name: f.name, Kind: f.kind, Required: !f.omitempty, Guard: f.guard}
		if f.elem != nil {
			out[i].Elem = f.elem.typ
		}
	}
	return out
}

// shape is the wire form of one struct type.
type shape struct {
	typ    reflect.Type
	fields []*field
	byKey  map[string]*field
}

var headerListType = reflect.TypeOf([]monv1.HTTPHeader(nil))

var shapes sync.Map // reflect.Type → *shape

// shapeOf derives the wire form of struct type t (once).
func shapeOf(t reflect.Type) *shape {
	if s, ok := shapes.Load(t); ok {
		return s.(*shape)
	}
	s := &shape{typ: t, byKey: map[string]*field{}}
	for i := range t.NumField() {
		sf := t.Field(i)
		name, opts, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if !sf.IsExported() || name == "-" || name == "" {
			continue
		}
		f := &field{key: Snake(name), name: name, index: i, typ: sf.Type, omitempty: strings.Contains(opts, "omitempty")}
		f.guard = Guard(sf.Tag.Get("guard"))
		if !slices.Contains(guards, f.guard) {
			panic(fmt.Sprintf("monitorconfig: %s.%s has guard tag %q, not one of %q", t, sf.Name, f.guard, guards))
		}
		wkey, wopts, _ := strings.Cut(sf.Tag.Get("wire"), ",")
		if wkey != "" {
			f.key = wkey
		}
		ft := sf.Type
		switch {
		case ft == headerListType:
			f.kind, f.secret = KindHeaders, wopts == "secret"
		case wopts == "json":
			f.kind = KindJSON
		case wopts == "scalar":
			f.kind = KindScalar
		case wopts == "upper":
			f.kind = KindUpper
		case ft.Kind() == reflect.Struct, ft.Kind() == reflect.Pointer && ft.Elem().Kind() == reflect.Struct:
			f.kind = KindStruct
			f.elem = shapeOf(deref(ft))
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			f.kind = KindList
			f.elem = shapeOf(ft.Elem())
		}
		if _, dup := s.byKey[f.key]; dup {
			panic(fmt.Sprintf("monitorconfig: %s has two fields with wire key %q", t, f.key))
		}
		s.fields = append(s.fields, f)
		s.byKey[f.key] = f
	}
	v, _ := shapes.LoadOrStore(t, s)
	return v.(*shape)
}

func deref(t reflect.Type) reflect.Type {
	if t.Kind() == reflect.Pointer {
		return t.Elem()
	}
	return t
}

// Snake is the snake_case form of a camelCase json name: timeZone →
// time_zone, argumentsJSON → arguments_json.
func Snake(s string) string {
	var b strings.Builder
	rs := []rune(s)
	for i, r := range rs {
		if unicode.IsUpper(r) {
			prevLower := i > 0 && (unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1]))
			nextLower := i > 0 && i+1 < len(rs) && unicode.IsUpper(rs[i-1]) && unicode.IsLower(rs[i+1])
			if prevLower || nextLower {
				b.WriteByte('_')
			}
			b.WriteRune(unicode.ToLower(r))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// specField is the index of the MonitorSpec field of each config json
// name (the Config column of the registry).
var specFields = sync.OnceValue(func() map[string]int {
	out := map[string]int{}
	t := reflect.TypeOf(monv1.MonitorSpec{})
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		out[name] = i
	}
	for _, r := range monv1.MonitorTypeRegistry {
		i, ok := out[r.Config]
		if !ok || t.Field(i).Type.Kind() != reflect.Pointer || t.Field(i).Type.Elem().Kind() != reflect.Struct {
			panic(fmt.Sprintf("monitorconfig: type %s names config %q, which is not a MonitorSpec field holding a pointer to a struct", r.Type, r.Config))
		}
	}
	return out
})

// ConfigField is the MonitorSpec field (a pointer to the config struct) of
// monitor type t; ok is false for an unknown type.
func ConfigField(spec *monv1.MonitorSpec, t monv1.MonitorType) (reflect.Value, bool) {
	info, ok := monv1.LookupMonitorType(t)
	if !ok {
		return reflect.Value{}, false
	}
	return reflect.ValueOf(spec).Elem().Field(specFields()[info.Config]), true
}

// ConfigType is the config struct type of monitor type t (nil for an
// unknown type).
func ConfigType(t monv1.MonitorType) reflect.Type {
	var spec monv1.MonitorSpec
	f, ok := ConfigField(&spec, t)
	if !ok {
		return nil
	}
	return f.Type().Elem()
}

// Config is the config struct of spec's type (a pointer such as
// *monv1.HTTPConfig), nil when unset or the type is unknown.
func Config(spec *monv1.MonitorSpec) any {
	f, ok := ConfigField(spec, spec.Type)
	if !ok || f.IsNil() {
		return nil
	}
	return f.Interface()
}

// ConfigNames are the MonitorSpec json names of every config struct, in
// registry order without repeats (http once for http and api).
func ConfigNames() []string {
	var out []string
	for _, r := range monv1.MonitorTypeRegistry {
		if !slices.Contains(out, r.Config) {
			out = append(out, r.Config)
		}
	}
	return out
}

// Only is a deep copy of spec's type and config struct, every other field
// unset: the config an agent's assignment carries.
func Only(spec *monv1.MonitorSpec) monv1.MonitorSpec {
	out := monv1.MonitorSpec{Type: spec.Type}
	if f, ok := ConfigField(spec, spec.Type); ok && !f.IsNil() {
		cp := spec.DeepCopy()
		to, _ := ConfigField(&out, spec.Type)
		from, _ := ConfigField(cp, spec.Type)
		to.Set(from)
	}
	return out
}

// HasConfig reports whether spec holds the config struct of json name
// (http, ping, ...).
func HasConfig(spec *monv1.MonitorSpec, name string) bool {
	i, ok := specFields()[name]
	return ok && !reflect.ValueOf(spec).Elem().Field(i).IsNil()
}

// ConfigRequired reports whether a monitor of type t needs its config
// struct: whether the struct has a required field (one without omitempty
// in its json tag, a +required field of the CRD). A type whose settings
// are all optional (http) runs without it.
func ConfigRequired(t monv1.MonitorType) bool {
	ct := ConfigType(t)
	if ct == nil {
		return false
	}
	for _, f := range shapeOf(ct).fields {
		if !f.omitempty {
			return true
		}
	}
	return false
}

// ClearOthers clears every config struct of spec but the one of its type.
func ClearOthers(spec *monv1.MonitorSpec) {
	keep := ""
	if info, ok := monv1.LookupMonitorType(spec.Type); ok {
		keep = info.Config
	}
	v := reflect.ValueOf(spec).Elem()
	for _, name := range ConfigNames() {
		if name != keep {
			f := v.Field(specFields()[name])
			f.Set(reflect.Zero(f.Type()))
		}
	}
}

// Keys are the wire keys of monitor type t's config, in struct order.
func Keys(t monv1.MonitorType) []string {
	ct := ConfigType(t)
	if ct == nil {
		return nil
	}
	s := shapeOf(ct)
	out := make([]string, len(s.fields))
	for i, f := range s.fields {
		out[i] = f.key
	}
	return out
}

// KeyAllowed reports whether key is a config key of monitor type t.
func KeyAllowed(t monv1.MonitorType, key string) bool {
	ct := ConfigType(t)
	if ct == nil {
		return false
	}
	_, ok := shapeOf(ct).byKey[key]
	return ok
}

// CRPath is the CRD field path (below spec.<config>) of a wire path of
// type t: timeout → timeoutMs, steps[0].expected_status_codes →
// steps[0].expectedStatusCodes. A path it does not know is returned as is.
func CRPath(t monv1.MonitorType, wire string) string {
	ct := ConfigType(t)
	if ct == nil {
		return wire
	}
	return mapPath(shapeOf(ct), wire, false, func(f *field) (string, string) { return f.key, f.name })
}

// WirePath is the wire path of a field path below the MonitorSpec config
// field named config (http, ping, ...): timeoutSeconds → timeout,
// toolCall.argumentsJSON → tool_call.arguments. ok is false when config
// names no config struct.
func WirePath(config, cr string) (wire string, ok bool) {
	i, ok := specFields()[config]
	if !ok || !slices.Contains(ConfigNames(), config) {
		return cr, false
	}
	ct := reflect.TypeOf(monv1.MonitorSpec{}).Field(i).Type.Elem()
	return mapPath(shapeOf(ct), cr, true, func(f *field) (string, string) { return f.name, f.key }), true
}

func mapPath(s *shape, p string, toWire bool, names func(*field) (from, to string)) string {
	parts := strings.Split(p, ".")
	for i, part := range parts {
		name, idx := part, ""
		if j := strings.IndexByte(part, '['); j >= 0 {
			name, idx = part[:j], part[j:]
		}
		var hit *field
		if s != nil {
			for _, f := range s.fields {
				if from, _ := names(f); from == name {
					hit = f
				}
			}
		}
		if hit == nil {
			if toWire {
				parts[i] = Snake(name) + idx
			}
			s = nil
			continue
		}
		_, parts[i] = names(hit)
		parts[i] += idx
		s = hit.elem
	}
	return strings.Join(parts, ".")
}

// TimeoutKey is the wire key of a config's check timeout; the struct field
// behind it counts milliseconds (timeoutMs) or seconds (timeoutSeconds).
const TimeoutKey = "timeout"

// TimeoutUnit is the unit of type t's timeout key: time.Second for a
// timeoutSeconds field, time.Millisecond for timeoutMs, zero when the type
// has no timeout.
func TimeoutUnit(t monv1.MonitorType) time.Duration {
	ct := ConfigType(t)
	if ct == nil {
		return 0
	}
	f, ok := shapeOf(ct).byKey[TimeoutKey]
	switch {
	case !ok:
		return 0
	case strings.HasSuffix(f.name, "Seconds"):
		return time.Second
	}
	return time.Millisecond
}

// Timeout is the check timeout spec's config sets (its timeout key in its
// unit), zero when it sets none.
func Timeout(spec *monv1.MonitorSpec) time.Duration {
	f, ok := ConfigField(spec, spec.Type)
	if !ok || f.IsNil() {
		return 0
	}
	sf, ok := shapeOf(f.Type().Elem()).byKey[TimeoutKey]
	if !ok {
		return 0
	}
	n := f.Elem().Field(sf.index).Int()
	if n <= 0 {
		return 0
	}
	return time.Duration(n) * TimeoutUnit(spec.Type)
}

// Encode is the wire config object of spec: the fields of its type's
// config struct under their keys, zero values left out. A spec without its
// config struct encodes as an empty object.
func Encode(spec *monv1.MonitorSpec) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	f, ok := ConfigField(spec, spec.Type)
	if !ok || f.IsNil() {
		return out
	}
	encodeStruct(shapeOf(f.Type().Elem()), f.Elem(), out, true)
	return out
}

// Marshal is Encode as JSON text.
func Marshal(spec *monv1.MonitorSpec) []byte {
	b, _ := json.Marshal(Encode(spec))
	return b
}

func encodeStruct(s *shape, v reflect.Value, out map[string]json.RawMessage, top bool) {
	for _, f := range s.fields {
		fv := v.Field(f.index)
		if fv.IsZero() && (top || f.omitempty) {
			continue
		}
		if fv.Kind() == reflect.Slice && fv.Len() == 0 && (top || f.omitempty) {
			continue
		}
		out[f.key] = encodeValue(f, fv)
	}
}

func encodeValue(f *field, v reflect.Value) json.RawMessage {
	switch f.kind {
	case KindStruct:
		if v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return json.RawMessage("null")
			}
			v = v.Elem()
		}
		m := map[string]json.RawMessage{}
		encodeStruct(f.elem, v, m, false)
		b, _ := json.Marshal(m)
		return b
	case KindList:
		items := make([]json.RawMessage, v.Len())
		for i := range v.Len() {
			m := map[string]json.RawMessage{}
			encodeStruct(f.elem, v.Index(i), m, false)
			items[i], _ = json.Marshal(m)
		}
		b, _ := json.Marshal(items)
		return b
	case KindHeaders:
		b, _ := json.Marshal(HeaderObject(v.Interface().([]monv1.HTTPHeader)))
		return b
	case KindJSON:
		if s := strings.TrimSpace(v.String()); json.Valid([]byte(s)) {
			var buf bytes.Buffer
			if json.Compact(&buf, []byte(s)) == nil {
				return buf.Bytes()
			}
		}
	}
	b, _ := json.Marshal(v.Interface())
	return b
}

// HeaderObject is the wire form of a header list: name → text, or name →
// {"secret_ref": {"name", "key"}}.
func HeaderObject(hs []monv1.HTTPHeader) map[string]any {
	out := make(map[string]any, len(hs))
	for _, h := range hs {
		switch {
		case h.ValueFrom != nil:
			out[h.Name] = map[string]any{"secret_ref": map[string]string{"name": h.ValueFrom.Name, "key": h.ValueFrom.Key}}
		case h.Value != nil:
			out[h.Name] = *h.Value
		default:
			out[h.Name] = ""
		}
	}
	return out
}

// Decode sets spec's config struct (that of spec.Type; the structs of other
// types are cleared) from the wire config object cfg. A key the type does
// not have, or a value of the wrong shape, is a *KeyError naming it.
func Decode(spec *monv1.MonitorSpec, cfg map[string]json.RawMessage) error {
	f, ok := ConfigField(spec, spec.Type)
	if !ok {
		return fmt.Errorf("unknown monitor type %q", spec.Type)
	}
	return decode(spec, f, cfg, false)
}

func decode(spec *monv1.MonitorSpec, f reflect.Value, cfg map[string]json.RawMessage, lenient bool) error {
	v := reflect.New(f.Type().Elem())
	d := decoder{lenient: lenient}
	if err := d.decodeStruct(shapeOf(f.Type().Elem()), v.Elem(), cfg, ""); err != nil {
		return err
	}
	ClearOthers(spec)
	f.Set(v)
	return nil
}

// decoder decodes wire objects; a lenient one skips unknown keys.
type decoder struct{ lenient bool }

// Unmarshal is Decode from JSON text (empty or null is an empty object).
func Unmarshal(spec *monv1.MonitorSpec, raw []byte) error {
	return unmarshal(spec, raw, false)
}

// UnmarshalLenient is Unmarshal that skips the keys it does not know, at
// any depth: how an agent reads the config of a manager newer than itself.
func UnmarshalLenient(spec *monv1.MonitorSpec, raw []byte) error {
	return unmarshal(spec, raw, true)
}

func unmarshal(spec *monv1.MonitorSpec, raw []byte, lenient bool) error {
	var cfg map[string]json.RawMessage
	if t := bytes.TrimSpace(raw); len(t) > 0 && string(t) != "null" {
		if err := json.Unmarshal(t, &cfg); err != nil {
			return &KeyError{Msg: "must be a JSON object"}
		}
	}
	f, ok := ConfigField(spec, spec.Type)
	if !ok {
		return fmt.Errorf("unknown monitor type %q", spec.Type)
	}
	return decode(spec, f, cfg, lenient)
}

func (d decoder) decodeStruct(s *shape, v reflect.Value, obj map[string]json.RawMessage, path string) error {
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		f, ok := s.byKey[k]
		if !ok && d.lenient {
			continue
		}
		if !ok {
			return &KeyError{Key: path + k, Msg: UnknownKey}
		}
		raw := bytes.TrimSpace(obj[k])
		if string(raw) == "null" {
			continue
		}
		if err := d.decodeValue(f, v.Field(f.index), raw, path+k); err != nil {
			return err
		}
	}
	return nil
}

func (d decoder) decodeValue(f *field, v reflect.Value, raw []byte, path string) error {
	switch f.kind {
	case KindStruct:
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil {
			return &KeyError{Key: path, Msg: "must be a JSON object"}
		}
		target := v
		if v.Kind() == reflect.Pointer {
			target = reflect.New(v.Type().Elem()).Elem()
		}
		if err := d.decodeStruct(f.elem, target, obj, path+"."); err != nil {
			return err
		}
		if v.Kind() == reflect.Pointer {
			v.Set(target.Addr())
		}
		return nil
	case KindList:
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return &KeyError{Key: path, Msg: "must be an array"}
		}
		list := reflect.MakeSlice(v.Type(), len(items), len(items))
		for i, item := range items {
			p := path + "[" + strconv.Itoa(i) + "]"
			var obj map[string]json.RawMessage
			if json.Unmarshal(item, &obj) != nil {
				return &KeyError{Key: p, Msg: "must be a JSON object"}
			}
			if err := d.decodeStruct(f.elem, list.Index(i), obj, p+"."); err != nil {
				return err
			}
		}
		v.Set(list)
		return nil
	case KindHeaders:
		hs, err := decodeHeaders(raw, path)
		if err != nil {
			return err
		}
		v.Set(reflect.ValueOf(hs))
		return nil
	case KindJSON:
		if raw[0] != '{' || !json.Valid(raw) {
			return &KeyError{Key: path, Msg: "must be a JSON object"}
		}
		v.SetString(string(raw))
		return nil
	case KindScalar:
		if raw[0] == '"' {
			break
		}
		if string(raw) != "true" && string(raw) != "false" {
			if _, err := strconv.ParseFloat(string(raw), 64); err != nil {
				return &KeyError{Key: path, Msg: "must be a string, number or boolean"}
			}
		}
		v.SetString(string(raw))
		return nil
	}
	p := reflect.New(v.Type())
	if err := json.Unmarshal(raw, p.Interface()); err != nil {
		return &KeyError{Key: path, Msg: "must be " + jsonKind(deref(v.Type()))}
	}
	v.Set(p.Elem())
	if f.kind == KindUpper {
		v.SetString(strings.ToUpper(v.String()))
	}
	return nil
}

// decodeHeaders reads a header object into a list sorted by name.
func decodeHeaders(raw []byte, path string) ([]monv1.HTTPHeader, error) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return nil, &KeyError{Key: path, Msg: "must be a JSON object"}
	}
	names := make([]string, 0, len(obj))
	for n := range obj {
		names = append(names, n)
	}
	slices.Sort(names)
	var out []monv1.HTTPHeader
	for _, n := range names {
		b := bytes.TrimSpace(obj[n])
		h := monv1.HTTPHeader{Name: n}
		if len(b) > 0 && b[0] == '"' {
			var s string
			if err := json.Unmarshal(b, &s); err != nil {
				return nil, &KeyError{Key: path, Msg: "header values must be strings or {\"secret_ref\": {\"name\", \"key\"}}"}
			}
			h.Value = &s
		} else {
			var ref struct {
				SecretRef *monv1.SecretKeySelector `json:"secret_ref"`
			}
			if err := json.Unmarshal(b, &ref); err != nil || ref.SecretRef == nil || ref.SecretRef.Name == "" || ref.SecretRef.Key == "" {
				return nil, &KeyError{Key: path, Msg: "header values must be strings or {\"secret_ref\": {\"name\", \"key\"}}"}
			}
			h.ValueFrom = ref.SecretRef
		}
		out = append(out, h)
	}
	return out, nil
}

// jsonKind names the JSON value a Go type decodes from, for messages.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "a JSON object"
	}
	return "a number in range"
}

// HeaderList is one list of request headers in a spec's config struct.
type HeaderList struct {
	// Path is the list's wire path: headers, steps[0].headers.
	Path string
	// Field is its CRD field path: spec.http.headers,
	// spec.multistep.steps[0].headers.
	Field *fieldpath.Path
	// Prefix names the list in keys derived from it (the Secret keys of
	// credentials moved out of the Monitor): the config's name for a list
	// of the config struct itself (http, mcp), else the singular of the
	// list holding it and the position (step0).
	Prefix string
	// URL is where the list is sent when its struct says (the value of
	// its field with a `guard` tag: a multi-step step's url, a grpc
	// target); empty for a list sent to the monitor's url.
	URL string
	// Secret is true for a list of secret values rather than headers (a
	// multistep step's secrets): every value is a credential, and each is
	// used as {{name}} in the headers and body of the struct holding it.
	Secret bool
	// Headers aliases the list in the spec: callers may change it.
	Headers *[]monv1.HTTPHeader
}

// HeaderLists are every header list of spec's config structs (that of its
// type; admission refuses the others), in registry and field order, with
// CRD field paths rooted at spec.
func HeaderLists(spec *monv1.MonitorSpec) []HeaderList {
	return HeaderListsAt(spec, fieldpath.NewPath("spec"))
}

// HeaderListsAt is HeaderLists with field paths rooted at root (the path
// of spec itself).
func HeaderListsAt(spec *monv1.MonitorSpec, root *fieldpath.Path) []HeaderList {
	var out []HeaderList
	walkConfigs(spec, root, func(f *field, v reflect.Value, at place) {
		if f.kind == KindHeaders {
			out = append(out, HeaderList{Path: at.wire + f.key, Field: at.cr.Child(f.name), Prefix: at.prefix, URL: at.url,
				Secret: f.secret, Headers: v.Addr().Interface().(*[]monv1.HTTPHeader)})
		}
	})
	return out
}

// Guard is what a field's `guard` tag says it names (see the package
// comment); empty for a field the check does not connect to.
type Guard string

// Guards of the `guard` tag.
const (
	GuardHost     Guard = "host"
	GuardHostPort Guard = "hostport"
	GuardHTTPURL  Guard = "http-url"
	GuardWSURL    Guard = "ws-url"
)

var guards = []Guard{"", GuardHost, GuardHostPort, GuardHTTPURL, GuardWSURL}

// Target is one field of a config struct that names where its check
// connects (a field with a `guard` tag) and holds a value.
type Target struct {
	// Guard says what the value is.
	Guard Guard
	// Value is the field's value.
	Value string
	// Field is its CRD field path below the root given to Targets.
	Field *fieldpath.Path
}

// Targets are the fields with a `guard` tag of spec's config structs, at
// any depth (a multi-step step's url), in registry and field order, with
// field paths rooted at root (the path of spec itself). An optional field
// left empty is not one.
func Targets(spec *monv1.MonitorSpec, root *fieldpath.Path) []Target {
	var out []Target
	walkConfigs(spec, root, func(f *field, v reflect.Value, at place) {
		if f.guard != "" && v.Kind() == reflect.String && (v.String() != "" || !f.omitempty) {
			out = append(out, Target{Guard: f.guard, Value: v.String(), Field: at.cr.Child(f.name)})
		}
	})
	return out
}

// place is where walkConfigs is in a config struct.
type place struct {
	wire   string          // wire path of the struct, ending in "." below the top
	cr     *fieldpath.Path // its CRD field path
	prefix string          // HeaderList.Prefix of its lists
	url    string          // HeaderList.URL of its lists
}

// walkConfigs calls visit for every field of every config struct set in
// spec, at any depth (nested structs and list items).
func walkConfigs(spec *monv1.MonitorSpec, root *fieldpath.Path, visit func(f *field, v reflect.Value, at place)) {
	var walk func(s *shape, v reflect.Value, at place)
	walk = func(s *shape, v reflect.Value, at place) {
		for _, sf := range s.fields {
			fv := v.Field(sf.index)
			visit(sf, fv, at)
			switch sf.kind {
			case KindStruct:
				if fv.Kind() == reflect.Pointer {
					if fv.IsNil() {
						continue
					}
					fv = fv.Elem()
				}
				walk(sf.elem, fv, place{at.wire + sf.key + ".", at.cr.Child(sf.name), at.prefix, urlOf(sf.elem, fv, at.url)})
			case KindList:
				for i := range fv.Len() {
					idx := "[" + strconv.Itoa(i) + "]"
					walk(sf.elem, fv.Index(i), place{at.wire + sf.key + idx + ".", at.cr.Child(sf.name).Index(i),
						strings.TrimSuffix(sf.key, "s") + strconv.Itoa(i), urlOf(sf.elem, fv.Index(i), at.url)})
				}
			}
		}
	}
	v := reflect.ValueOf(spec).Elem()
	for _, name := range ConfigNames() {
		if f := v.Field(specFields()[name]); !f.IsNil() {
			sh := shapeOf(f.Type().Elem())
			walk(sh, f.Elem(), place{"", root.Child(name), name, urlOf(sh, f.Elem(), "")})
		}
	}
}

// urlOf is where a struct's header lists are sent: the field of the struct
// that names where its check connects (its `guard` tag: a multi-step
// step's url, a websocket config's url, a grpc config's target), else
// where the struct holding it sends them.
func urlOf(s *shape, v reflect.Value, inherited string) string {
	for _, f := range s.fields {
		if f.guard != "" && f.typ.Kind() == reflect.String {
			return v.Field(f.index).String()
		}
	}
	return inherited
}
