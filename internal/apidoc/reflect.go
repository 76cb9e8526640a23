package apidoc

import (
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/google/jsonschema-go/jsonschema"
)

// The schemas of the answers and request bodies are not written by hand:
// jsonschema-go (the library the MCP server's tool schemas come from)
// derives them from the Go wire types the server encodes and decodes
// (internal/restapi), so a field is declared once, in Go. The REST tests
// validate every answer they provoke against the document
// (core/coretest.CheckAnswer).
//
// Every named struct a route reaches is a component
// (#/components/schemas/<Name>) and is referred to by $ref. Each field is a
// property under its json name; a field without omitempty is required
// (encoding/json always writes it); a pointer may be null; an embedded
// struct's fields are the object's own, as encoding/json flattens them. The
// doc comments of the type and of each field (or the comment at the end of
// its line) are the descriptions. What Go types do not say comes from the
// field's `openapi` tag, comma-separated:
//
//	format=uuid          the string format (uuid, date-time, uri, email, date)
//	enum=up|down         the allowed values (@name: a list of namedEnums)
//	min=1, max=255       minimum/maximum (length for strings, items for arrays)
//	itemmin=1,itemmax=32 the bounds of an array's items
//	itemformat=email     the format of an array's items
//	ref=MonitorConfig    the property is that component (for json.RawMessage)
//	itemref=MonitorSpec  an array of that component (for []json.RawMessage)
//	any                  any JSON value (a type that decodes from several)
//	object               a json.RawMessage holding an object of any properties
//	orstring=a|b         the type's schema, or one of these strings
//	nonnull              a pointer or restapi.Nullable that may be absent but
//	                     not null
//	required             a restapi.Nullable the handler requires all the same
//	-                    a field the handler decodes but the document does
//	                     not offer
//
// A restapi.Nullable[T] field is a T that may be null and is never required.
// A blank field `_ struct{}` tagged `openapi:"strict"` makes the object
// refuse unknown properties, as a handler decoding strictly does;
// `requires=name|url` requires those properties; maxprops=50 bounds their
// number. A field's `for` tag (the monitor types a config key applies to)
// starts its description. A named string type with constants of that type
// (restapi.Fault) is an enum of the constants' values.

// pkgDocs are the doc comments of one package.
type pkgDocs struct {
	types  map[string]string            // type name → doc
	fields map[string]map[string]string // type name → field name → doc
	consts map[string][]string          // type name → values of its constants
}

// modulePath is the module whose packages doc comments are read from; the
// module's directory is found from the working directory up.
const modulePath = "github.com/uptime-operator/uptime-operator/"

// components are the component schemas of the Go types a document reaches.
type components struct {
	names  map[reflect.Type]string // component names other than the type's
	byType map[reflect.Type]string // struct type → its component name
	owner  map[string]reflect.Type // component name → its type
	order  []reflect.Type          // the structs in the order reached
	// known are the library's schemas of the types it cannot derive by
	// itself: components as $refs, Nullable[T] as T, time, raw JSON, enums.
	known map[reflect.Type]*jsonschema.Schema
	docs  map[string]*pkgDocs // package path → its doc comments
	root  string              // the module's directory
}

func newComponents(names map[reflect.Type]string) *components {
	sized := []any{int8(0), int16(0), int32(0), uint(0), uint8(0), uint16(0), uint32(0), uint64(0)}
	known := map[reflect.Type]*jsonschema.Schema{
		timeType: {Type: "string", Format: "date-time"},
		rawType:  {},
		anyType:  {},
	}
	for _, v := range sized { // plain integers, as the handlers check their own bounds
		known[reflect.TypeOf(v)] = &jsonschema.Schema{Type: "integer"}
	}
	return &components{names: names, byType: map[reflect.Type]string{}, owner: map[string]reflect.Type{},
		known: known, docs: map[string]*pkgDocs{}}
}

var (
	timeType = reflect.TypeFor[time.Time]()
	rawType  = reflect.TypeFor[json.RawMessage]()
	anyType  = reflect.TypeFor[any]()
)

// ref is the $ref of the component of a Go value's type (a named struct, or
// a slice of them: an array of its $ref), registering the types it reaches.
func (c *components) ref(v any) (M, error) {
	t := reflect.TypeOf(v)
	if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct && t.Elem().Name() != "" {
		item, err := c.ref(reflect.Zero(t.Elem()).Interface())
		return ListOf(item), err
	}
	if t.Kind() != reflect.Struct || t.Name() == "" {
		return nil, fmt.Errorf("body or answer of type %s: want a named struct, a slice of them or a schema", t)
	}
	if err := c.reach(t); err != nil {
		return nil, err
	}
	return Ref(c.byType[t]), nil
}

// reach registers the named structs t reaches as components, depth first
// in field order (of two types of the same name, the first keeps the bare
// name; the second is qualified by its package: SitehealthCheck).
func (c *components) reach(t reflect.Type) error {
	for {
		if v, ok := optional(t); ok {
			c.known[t] = nil // derived once the components are known
			t = v
			continue
		}
		if k := t.Kind(); k != reflect.Pointer && k != reflect.Slice && k != reflect.Array && k != reflect.Map {
			break
		}
		t = t.Elem()
	}
	if t.Kind() == reflect.String && t.Name() != "" {
		if vals := c.pkg(t.PkgPath()).consts[t.Name()]; len(vals) > 0 {
			c.known[t] = &jsonschema.Schema{Type: "string", Enum: toAny(vals)}
		}
	}
	if t.Kind() != reflect.Struct || t == timeType {
		return nil
	}
	if t.Name() != "" {
		if _, ok := c.byType[t]; ok {
			return nil
		}
		name := t.Name()
		if n, ok := c.names[t]; ok {
			name = n
		}
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
		if f.Anonymous || !f.IsExported() || f.Tag.Get("openapi") == "-" {
			continue
		}
		if err := c.reach(f.Type); err != nil {
			return err
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
		s, err := c.object(t)
		if err != nil {
			return nil, err
		}
		out[c.byType[t]] = s
	}
	return out, nil
}

// object is the schema of a named struct.
func (c *components) object(t reflect.Type) (M, error) {
	// The type itself and the structs it embeds are derived, not referred to.
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
	s, err := toM(js)
	if err != nil {
		return nil, err
	}
	if err := c.fields(t, s); err != nil {
		return nil, err
	}
	if d := c.pkg(t.PkgPath()).types[t.Name()]; d != "" {
		s["description"] = d
	}
	return s, nil
}

// toM is s as a JSON object of the document, nulls in the form the
// document writes them (nullable).
func toM(s *jsonschema.Schema) (M, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	var m M
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return fixNull(m), nil
}

// fixNull rewrites the library's nulls: it makes every slice nullable (a
// nil slice encodes as null), where the document promises an array, and
// puts null after the type (a pointer's ["null", "string"] is Null of the
// string).
func fixNull(v any) M {
	s, ok := v.(M)
	if !ok { // the library writes the empty schema {} (any value) as true
		return AnyValue("")
	}
	for _, k := range []string{"items", "additionalProperties"} {
		if v, ok := s[k]; ok && v != false {
			s[k] = fixNull(v)
		}
	}
	if props, ok := s["properties"].(M); ok {
		for k, v := range props {
			props[k] = fixNull(v)
		}
	}
	types, _ := s["type"].([]any)
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
func (c *components) fields(t reflect.Type, s M) error {
	props, _ := s["properties"].(M)
	var required, requires []string
	for _, r := range asList(s["required"]) {
		required = append(required, r.(string))
	}
	delete(s, "additionalProperties")
	for _, f := range reflect.VisibleFields(t) {
		tag := parseTag(f.Tag.Get("openapi"))
		if f.Name == "_" && len(f.Index) == 1 {
			if _, ok := tag["strict"]; ok {
				s["additionalProperties"] = false
			}
			if names, ok := tag["requires"]; ok {
				requires = strings.Split(names, "|")
			}
			if n, ok := tag["maxprops"]; ok {
				s["maxProperties"], _ = strconv.Atoi(n)
			}
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous || !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		_, opt := optional(f.Type)
		if _, must := tag["required"]; opt && !must || f.Tag.Get("openapi") == "-" {
			required = slices.DeleteFunc(required, func(r string) bool { return r == name })
		}
		if f.Tag.Get("openapi") == "-" {
			delete(props, name)
			continue
		}
		p, err := c.field(declaring(t, f.Index), f, props[name].(M), tag)
		if err != nil {
			return fmt.Errorf("%s.%s: %w", t.Name(), f.Name, err)
		}
		if _, must := tag["required"]; must {
			requires = append(requires, name)
		}
		props[name] = p
	}
	if props == nil {
		s["properties"] = M{}
	}
	s["type"] = "object"
	delete(s, "required")
	if required = append(required, requires...); len(required) > 0 {
		slices.Sort(required)
		s["required"] = toAny(slices.Compact(required))
	}
	return nil
}

// field is the schema of one struct field: the library's schema of its
// type with the field's tag, nullability and description applied.
func (c *components) field(owner reflect.Type, f reflect.StructField, s M, tag map[string]string) (M, error) {
	t := f.Type
	_, nullable := optional(t)
	if t.Kind() == reflect.Pointer {
		nullable, t = true, t.Elem()
	}
	s = notNull(s)
	if v, ok := optional(t); ok {
		t = v
	}
	if t.Kind() == reflect.Struct && t.Name() == "" && t != timeType {
		if err := c.fields(t, s); err != nil {
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
	s = applyTag(s, tag)
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
	d := c.pkg(owner.PkgPath()).fields[owner.Name()][f.Name]
	if types := strings.Join(strings.Fields(f.Tag.Get("for")), ", "); types != "" && d == "" {
		d = types + "."
	} else if types != "" {
		d = types + ": " + d
	}
	if d != "" {
		s = With(s, "description", d)
	}
	return s, nil
}

// notNull is s without the null the library allows for a pointer: the
// field's own rules say whether it may be null.
func notNull(s M) M {
	if alts := asList(s["anyOf"]); len(alts) == 2 && alts[1].(M)["type"] == "null" && len(alts[0].(M)) > 0 {
		return alts[0].(M)
	}
	if types := asList(s["type"]); len(types) == 2 && types[1] == "null" {
		s = With(s, "type", types[0])
		if e := asList(s["enum"]); len(e) > 0 && e[len(e)-1] == nil {
			s["enum"] = e[:len(e)-1]
		}
	}
	return s
}

func has(tag map[string]string, k string) bool { _, ok := tag[k]; return ok }

func asList(v any) []any { l, _ := v.([]any); return l }

// optionalType is implemented by a request field that may be absent or
// null (restapi.Nullable): OptionalValue is a zero value of its type.
var optionalType = reflect.TypeFor[interface{ OptionalValue() any }]()

// optional reports whether t is such a field, and the type of its value.
func optional(t reflect.Type) (reflect.Type, bool) {
	if t.Kind() != reflect.Struct || !t.Implements(optionalType) {
		return nil, false
	}
	v := reflect.Zero(t).Interface().(interface{ OptionalValue() any }).OptionalValue()
	return reflect.TypeOf(v), true
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
		if kv = strings.TrimSpace(kv); kv == "" {
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		out[k] = v
	}
	return out
}

// applyTag sets the format, enum and bounds of a tag on s.
func applyTag(s M, tag map[string]string) M {
	if f, ok := tag["format"]; ok {
		s = With(s, "format", f)
	}
	if f, ok := tag["itemformat"]; ok {
		s = With(s, "items", With(s["items"].(M), "format", f))
	}
	bounds := map[string]string{}
	for _, k := range []string{"min", "max"} {
		if v, ok := tag["item"+k]; ok {
			bounds[k] = v
		}
	}
	if len(bounds) > 0 {
		s = With(s, "items", applyTag(s["items"].(M), bounds))
	}
	if e, ok := tag["enum"]; ok {
		vals := strings.Split(e, "|")
		if name, ok := strings.CutPrefix(e, "@"); ok {
			if vals, ok = namedEnums[name]; !ok {
				panic("openapi tag: no enum " + e)
			}
		}
		s = With(s, "enum", toAny(vals))
	}
	num := func(v string) any {
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
		f, _ := strconv.ParseFloat(v, 64)
		return f
	}
	var lo, hi any
	if v, ok := tag["min"]; ok {
		lo = num(v)
	}
	if v, ok := tag["max"]; ok {
		hi = num(v)
	}
	if lo != nil || hi != nil {
		s = Bounds(s, lo, hi)
	}
	return s
}

// pkg parses the doc comments of a package of this module once; other
// packages (the standard library) have none to give.
func (c *components) pkg(path string) *pkgDocs {
	if d, ok := c.docs[path]; ok {
		return d
	}
	d := &pkgDocs{}
	if rel, ok := strings.CutPrefix(path, modulePath); ok {
		var err error
		if c.root == "" {
			if c.root, err = moduleRoot(); err != nil {
				panic(fmt.Sprintf("doc comments of %s: %v", path, err))
			}
		}
		if d, err = parseDocs(filepath.Join(c.root, filepath.FromSlash(rel))); err != nil {
			panic(fmt.Sprintf("doc comments of %s: %v", path, err))
		}
	}
	c.docs[path] = d
	return d
}

// parseDocs reads the doc comments of the package in dir.
func parseDocs(dir string) (*pkgDocs, error) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	out := &pkgDocs{types: map[string]string{}, fields: map[string]map[string]string{}, consts: map[string][]string{}}
	for _, p := range pkgs {
		dp := doc.New(p, dir, doc.AllDecls)
		for _, t := range dp.Types {
			out.types[t.Name] = sentence(unname(t.Doc, t.Name))
			for _, c := range t.Consts {
				for _, spec := range c.Decl.Specs {
					for _, v := range spec.(*ast.ValueSpec).Values {
						if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
							if s, err := strconv.Unquote(lit.Value); err == nil {
								out.consts[t.Name] = append(out.consts[t.Name], s)
							}
						}
					}
				}
			}
			st, ok := t.Decl.Specs[0].(*ast.TypeSpec).Type.(*ast.StructType)
			if !ok {
				continue
			}
			fields := map[string]string{}
			for _, f := range st.Fields.List {
				text := f.Doc.Text()
				if text == "" {
					text = f.Comment.Text()
				}
				for _, n := range f.Names {
					fields[n.Name] = sentence(unname(text, n.Name))
				}
			}
			out.fields[t.Name] = fields
		}
	}
	return out, nil
}

// sentence joins the lines of a comment into one paragraph.
func sentence(c string) string {
	return strings.Join(strings.Fields(c), " ")
}

// unname drops the Go convention of starting a doc comment with the
// declared name ("Monitor is the monitor object of …" → "The monitor
// object of …", "Reason says why …" → "Says why …"): the reader of the API
// does not know the Go name.
func unname(c, name string) string {
	for _, verb := range []string{" is ", " are "} {
		if rest, ok := strings.CutPrefix(c, name+verb); ok && rest != "" {
			return strings.ToUpper(rest[:1]) + rest[1:]
		}
	}
	if rest, ok := strings.CutPrefix(c, name+" "); ok && rest != "" && unicode.IsLower(rune(rest[0])) {
		return strings.ToUpper(rest[:1]) + rest[1:]
	}
	return c
}

// moduleRoot is the directory of go.mod, from the working directory up: the
// generator runs from the repository root, tests from their package.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}
