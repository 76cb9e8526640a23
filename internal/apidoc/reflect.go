package apidoc

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

// The schemas of the answers and request bodies are derived from the Go
// wire types (internal/restapi) by jsonschema-go, the library the MCP
// server's tool schemas come from: every named struct a route reaches is a
// component referred to by $ref; a field is a property under its json name,
// required unless omitempty; an embedded struct's fields are the object's
// own. This file adds what the library does not know: descriptions (the doc
// comments, comments.go), nulls (a pointer may be null; a restapi.Nullable[T]
// is a T that may be null and is never required), enums of named string
// types with constants, and the field's `openapi` tag, comma-separated:
//
//	format=uuid          the string format (uuid, date-time, uri, email, date)
//	enum=up|down         the allowed values (@name: a list of API.Enums)
//	min=1, max=255       minimum/maximum (length for strings, items for arrays)
//	itemmin=1,itemmax=32 the bounds of an array's items
//	itemformat=email     the format of an array's items
//	ref=MonitorConfig    the property is that component (for json.RawMessage)
//	itemref=MonitorSpec  an array of that component (for []json.RawMessage)
//	any                  any JSON value (a type that decodes from several)
//	object               a json.RawMessage holding an object of any properties
//	orstring=a|b         the type's schema, or one of these strings
//	nonnull              a pointer or Nullable that may be absent, not null
//	required             a Nullable the handler requires all the same
//	-                    decoded by the handler, not offered by the document
//
// A blank field `_ struct{}` tagged `openapi:"strict"` refuses unknown
// properties (as a handler decoding strictly does); `requires=name|url`
// requires those properties; maxprops=50 bounds them.

// components are the component schemas of the Go types a document reaches.
type components struct {
	names  map[reflect.Type]string // component names other than the type's
	enums  map[string][]string     // the lists enum=@name names
	byType map[reflect.Type]string // struct type → its component name
	owner  map[string]reflect.Type // component name → its type
	order  []reflect.Type          // the structs in the order reached
	// known are the library's schemas of the types it cannot derive by
	// itself: components as $refs, Nullable[T] as T, time, raw JSON, enums.
	known map[reflect.Type]*jsonschema.Schema
	docs  map[string]*pkgDocs // package path → its doc comments
}

var (
	timeType = reflect.TypeFor[time.Time]()
	rawType  = reflect.TypeFor[json.RawMessage]()
	anyType  = reflect.TypeFor[any]()
)

func newComponents(names map[reflect.Type]string, enums map[string][]string) *components {
	known := map[reflect.Type]*jsonschema.Schema{timeType: {Type: "string", Format: "date-time"}, rawType: {}, anyType: {}}
	// Plain integers: the library bounds sized ones by their Go range.
	for _, v := range []any{int8(0), int16(0), int32(0), uint(0), uint8(0), uint16(0), uint32(0), uint64(0)} {
		known[reflect.TypeOf(v)] = &jsonschema.Schema{Type: "integer"}
	}
	return &components{names: names, enums: enums, byType: map[reflect.Type]string{},
		owner: map[string]reflect.Type{}, known: known, docs: map[string]*pkgDocs{}}
}

// schema is the schema of a Body or Resp: a written M as it is, nil for
// none, else the $ref of the component of a Go value's type (a named struct,
// or a slice of them: an array of its $ref), registering the types it
// reaches.
func (c *components) schema(v any) (M, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case M:
		return v, nil
	}
	t := reflect.TypeOf(v)
	if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct && t.Elem().Name() != "" {
		item, err := c.schema(reflect.Zero(t.Elem()).Interface())
		return ListOf(item), err
	}
	if t.Kind() != reflect.Struct || t.Name() == "" {
		return nil, fmt.Errorf("body or answer of type %s: want a named struct, a slice of them or a schema", t)
	}
	err := c.reach(t)
	return Ref(c.byType[t]), err
}

// reach registers the named structs t reaches as components, depth first
// in field order (of two types of the same name, the first keeps the bare
// name; the second is qualified by its package: SitehealthCheck).
func (c *components) reach(t reflect.Type) error {
	for {
		if v, ok := optional(t); ok {
			c.known[t], t = nil, v // derived once the components are known
		} else if k := t.Kind(); k == reflect.Pointer || k == reflect.Slice || k == reflect.Array || k == reflect.Map {
			t = t.Elem()
		} else {
			break
		}
	}
	if vals := c.pkg(t.PkgPath()).consts[t.Name()]; t.Kind() == reflect.String && len(vals) > 0 {
		c.known[t] = &jsonschema.Schema{Type: "string", Enum: toAny(vals)}
	}
	if _, done := c.byType[t]; done || t.Kind() != reflect.Struct || t == timeType {
		return nil
	}
	if t.Name() != "" {
		name := cmp.Or(c.names[t], t.Name())
		if _, ok := c.owner[name]; ok {
			pkg := path.Base(t.PkgPath())
			name = strings.ToUpper(pkg[:1]) + pkg[1:] + name
			if prev, ok := c.owner[name]; ok {
				return fmt.Errorf("schema %s: both %s and %s", name, prev, t)
			}
		}
		c.byType[t], c.owner[name] = name, t
		c.order = append(c.order, t)
	}
	for _, f := range reflect.VisibleFields(t) {
		if !f.Anonymous && f.IsExported() && f.Tag.Get("openapi") != "-" {
			if err := c.reach(f.Type); err != nil {
				return err
			}
		}
	}
	return nil
}

// schemas derives the schema of every component reached.
func (c *components) schemas() (M, error) {
	for t, name := range c.byType {
		c.known[t] = &jsonschema.Schema{Ref: "#/components/schemas/" + name}
	}
	for t := range c.known {
		if v, ok := optional(t); ok {
			s, err := jsonschema.ForType(v, &jsonschema.ForOptions{TypeSchemas: c.known})
			if err != nil {
				return nil, err
			}
			c.known[t] = s
		}
	}
	out := M{}
	for _, t := range c.order {
		// The type itself and the structs it embeds are derived, not $refs.
		known := maps.Clone(c.known)
		delete(known, t)
		for _, f := range reflect.VisibleFields(t) {
			if f.Anonymous {
				delete(known, f.Type)
			}
		}
		js, err := jsonschema.ForType(t, &jsonschema.ForOptions{TypeSchemas: known})
		if err != nil {
			return nil, err
		}
		b, err := json.Marshal(js)
		if err != nil {
			return nil, err
		}
		var s M
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, err
		}
		if s, err = c.fields(t, s); err != nil {
			return nil, err
		}
		if d := c.pkg(t.PkgPath()).docs[t.Name()]; d != "" {
			s["description"] = d
		}
		out[c.byType[t]] = s
	}
	return out, nil
}

// fixNull writes the library's nulls as the document does: a slice is an
// array (the library allows null, as a nil slice encodes), a pointer's
// ["null", "string"] is Null of the string, and the empty schema (the
// library's true) is AnyValue.
func fixNull(v any) M {
	s, ok := v.(M)
	if !ok {
		return AnyValue("")
	}
	for _, k := range []string{"items", "additionalProperties"} {
		if v, ok := s[k]; ok && v != false {
			s[k] = fixNull(v)
		}
	}
	props, _ := s["properties"].(M)
	for k, v := range props {
		props[k] = fixNull(v)
	}
	types := asList(s["type"])
	if len(types) == 0 || types[0] != "null" {
		return s
	}
	delete(s, "type")
	switch {
	case len(types) == 2 && types[1] == "array":
		s["type"] = "array"
		return s
	case len(types) == 2:
		s["type"] = types[1]
	case s["anyOf"] != nil:
		return s // AnyValue already allows null
	}
	return Null(s)
}

// fields applies the fields' tags and doc comments to the object schema s
// of struct t.
func (c *components) fields(t reflect.Type, s M) (M, error) {
	props, _ := s["properties"].(M)
	var required, requires []string
	for _, r := range asList(s["required"]) {
		required = append(required, r.(string))
	}
	s = M{"type": "object", "properties": props}
	for _, f := range reflect.VisibleFields(t) {
		tag := parseTag(f.Tag.Get("openapi"))
		if f.Name == "_" && len(f.Index) == 1 {
			if has(tag, "strict") {
				s["additionalProperties"] = false
			}
			if n, ok := tag["maxprops"]; ok {
				s["maxProperties"], _ = strconv.Atoi(n)
			}
			requires = append(requires, strings.FieldsFunc(tag["requires"], func(r rune) bool { return r == '|' })...)
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous || !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if _, opt := optional(f.Type); opt || f.Tag.Get("openapi") == "-" {
			required = slices.DeleteFunc(required, func(r string) bool { return r == name })
		}
		if f.Tag.Get("openapi") == "-" {
			delete(props, name)
			continue
		}
		if has(tag, "required") {
			requires = append(requires, name)
		}
		p, err := c.field(declaring(t, f.Index), f, props[name], tag)
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %w", t.Name(), f.Name, err)
		}
		props[name] = p
	}
	if props == nil {
		s["properties"] = M{}
	}
	if required = append(required, requires...); len(required) > 0 {
		slices.Sort(required)
		s["required"] = toAny(slices.Compact(required))
	}
	return s, nil
}

// field is the schema of one struct field of owner: the library's schema of
// its type with the field's tag, nullability and description applied.
func (c *components) field(owner reflect.Type, f reflect.StructField, lib any, tag map[string]string) (M, error) {
	t := f.Type
	_, nullable := optional(t)
	if t.Kind() == reflect.Pointer {
		nullable, t = true, t.Elem()
	}
	if v, ok := optional(t); ok {
		t = v
	}
	// Without the null the library allows for a pointer or a slice: the
	// field's own rules say whether it may be null.
	if m, ok := lib.(M); ok {
		if types := asList(m["type"]); len(types) > 0 && types[0] == "null" {
			if m = With(m); len(types) == 2 {
				m["type"] = types[1]
			} else {
				delete(m, "type")
			}
			lib = m
		}
	}
	s := fixNull(lib)
	if t.Kind() == reflect.Struct && t.Name() == "" { // an anonymous struct
		var err error
		if s, err = c.fields(t, s); err != nil {
			return nil, err
		}
	}
	switch {
	case tag["ref"] != "":
		s = Ref(tag["ref"])
	case tag["itemref"] != "":
		s = Arr(Ref(tag["itemref"]), "")
	case has(tag, "object"):
		s = Freeform("")
	case has(tag, "any") || t == rawType || t == anyType:
		s = AnyValue("")
	}
	s, err := applyTag(s, tag, c.enums)
	if err != nil {
		return nil, err
	}
	nullable = nullable && !has(tag, "nonnull")
	if alt, ok := tag["orstring"]; ok {
		alts := []any{s, Enum("", strings.Split(alt, "|")...)}
		if nullable {
			alts = append(alts, M{"type": "null"})
		}
		s = M{"anyOf": alts}
	} else if nullable {
		s = Null(s)
	}
	if d := c.pkg(owner.PkgPath()).docs[owner.Name()+"."+f.Name]; d != "" {
		s = With(s, "description", d)
	}
	return s, nil
}

// optional reports whether t is a field that may be absent or null
// (restapi.Nullable: its OptionalValue is a zero value of its type), and
// the type of its value.
func optional(t reflect.Type) (reflect.Type, bool) {
	o, ok := reflect.Zero(t).Interface().(interface{ OptionalValue() any })
	if !ok || t.Kind() != reflect.Struct {
		return nil, false
	}
	return reflect.TypeOf(o.OptionalValue()), true
}

// declaring is the struct that declares the field of t at index (an
// embedded struct's, for a promoted field).
func declaring(t reflect.Type, index []int) reflect.Type {
	for _, i := range index[:len(index)-1] {
		if t = t.Field(i).Type; t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
	}
	return t
}

// parseTag reads an `openapi` tag: key=value pairs separated by commas.
func parseTag(tag string) map[string]string {
	out := map[string]string{}
	for _, kv := range strings.Split(tag, ",") {
		if k, v, _ := strings.Cut(strings.TrimSpace(kv), "="); k != "" {
			out[k] = v
		}
	}
	return out
}

// applyTag sets the format, enum and bounds of a tag on s.
func applyTag(s M, tag map[string]string, enums map[string][]string) (M, error) {
	if f := tag["format"]; f != "" {
		s = With(s, "format", f)
	}
	if items, ok := s["items"].(M); ok {
		if f := tag["itemformat"]; f != "" {
			items = With(items, "format", f)
		}
		s = With(s, "items", bound(items, tag["itemmin"], tag["itemmax"]))
	}
	if e, ok := tag["enum"]; ok {
		vals := strings.Split(e, "|")
		if name, ok := strings.CutPrefix(e, "@"); ok {
			if vals, ok = enums[name]; !ok {
				return nil, fmt.Errorf("openapi tag: no enum %s", e)
			}
		}
		s = With(s, "enum", toAny(vals))
	}
	return bound(s, tag["min"], tag["max"]), nil
}

// bound sets the bounds a tag writes (empty: none) on s.
func bound(s M, min, max string) M {
	if min == "" && max == "" {
		return s
	}
	num := func(v string) (n any) {
		if v != "" {
			_ = json.Unmarshal([]byte(v), &n)
		}
		return n
	}
	return Bounds(s, num(min), num(max))
}

func has(tag map[string]string, k string) bool { _, ok := tag[k]; return ok }

func asList(v any) []any { l, _ := v.([]any); return l }
