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
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// The schemas of the answers and request bodies are not written by hand:
// they are derived from the Go wire types that the server encodes and
// decodes (internal/restapi), so a field is declared once, in Go, and the
// document follows it. The REST tests validate every answer they provoke
// against the document (core/coretest.CheckAnswer), which keeps the two
// honest where an answer is still written by hand.
//
// A struct becomes an object schema named after the Go type
// (#/components/schemas/<Name>). Each field is a property under its json
// name; a field without omitempty is required (encoding/json always writes
// it); a pointer may be null; an embedded struct becomes allOf. The doc
// comments of the type and of each field (or the comment at the end of its
// line) are the descriptions. What Go types do not say comes from the
// field's `openapi` tag, comma-separated:
//
//	format=uuid          the string format (uuid, date-time, uri, email, date)
//	enum=up|down         the allowed values
//	min=1, max=255       minimum/maximum (length for strings, items for arrays)
//	ref=MonitorConfig    the property is that component (for json.RawMessage)
//	itemref=MonitorSpec  the property is an array of that component (for
//	                     []json.RawMessage)
//	any                  any JSON value (a type that decodes from several)
//	orstring=a|b         the type's schema, or one of these strings (a type
//	                     whose UnmarshalJSON also accepts a string)
//	inline               on an embedded struct: its fields (and those of the
//	                     structs it embeds) are the object's own, not allOf
//	object               a json.RawMessage that holds a JSON object of any
//	                     properties (the handler checks it is one, to answer
//	                     a field error rather than a decoding error)
//	itemformat=email     the format of an array's items
//	nonnull              a pointer or restapi.Nullable that may be absent but
//	                     not null (a request field whose absence the handler
//	                     tells apart)
//	required             a restapi.Nullable the handler requires all the same
//	                     (a body shared by create, which requires it, and
//	                     update, which does not)
//	itemmin=1,itemmax=32 the bounds of an array's items
//	-                    a field the handler decodes but the document does
//	                     not offer (a field a body refuses with a field
//	                     error, or one honoured outside the contract)
//
// A restapi.Nullable[T] field is a T that may be null and is never required.
//
// A blank field `_ struct{}` tagged `openapi:"strict"` makes the object
// refuse unknown properties (additionalProperties: false), as a handler
// decoding the body strictly does; tagged `openapi:"requires=name|url"` it
// requires those properties, also ones of embedded structs (a body that
// shares its fields with one that does not require them); maxprops=50
// bounds the number of properties.
//
// A field's `for` tag (probeapi.Config: the monitor types a config key
// applies to) starts its description ("http, api: …").
//
// A named string type with constants of that type (restapi.Fault) is an
// enum of the constants' values.
//
// A few answers are domain records sent unchanged; they are reflected the
// same way. Their storage fields show on the wire as they do in the
// document, which is the point: the document cannot promise less or more
// than the server sends. Moving them to internal/restapi types is the next
// step.

// modulePath is the module whose packages the reflector reads doc comments
// from; the module's directory is found from the working directory up.
const modulePath = "github.com/uptime-operator/uptime-operator/"

// reflector turns Go types into component schemas.
type reflector struct {
	names   map[reflect.Type]string // component names other than the type's
	root    string                  // the module's directory
	schemas M                       // components.schemas derived so far
	owner   map[string]reflect.Type // component name → the Go type it came from
	docs    map[string]*pkgDocs     // package path → its doc comments
}

// pkgDocs are the doc comments of one package.
type pkgDocs struct {
	types  map[string]string            // type name → doc
	fields map[string]map[string]string // type name → field name → doc
	consts map[string][]string          // type name → values of its constants
}

func newReflector(names map[reflect.Type]string) *reflector {
	return &reflector{names: names, schemas: M{}, owner: map[string]reflect.Type{}, docs: map[string]*pkgDocs{}}
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

// add derives the schemas of the types of the given values and of every
// named struct they reach.
func (r *reflector) add(values ...any) error {
	for _, v := range values {
		if _, err := r.named(reflect.TypeOf(v)); err != nil {
			return err
		}
	}
	return nil
}

// named registers a named struct type as a component and returns its $ref.
// The component is named after the type; a second type of the same name
// from another package is qualified by its package (sitehealth.Check
// becomes SitehealthCheck next to restapi.Check).
func (r *reflector) named(t reflect.Type) (M, error) {
	name := t.Name()
	if n, ok := r.names[t]; ok {
		name = n
	}
	if prev, ok := r.owner[name]; ok && prev != t {
		pkg := path.Base(t.PkgPath())
		name = strings.ToUpper(pkg[:1]) + pkg[1:] + name
		if prev, ok := r.owner[name]; ok && prev != t {
			return nil, fmt.Errorf("schema %s: both %s and %s", name, prev, t)
		}
	}
	if _, ok := r.owner[name]; ok {
		return Ref(name), nil
	}
	r.owner[name] = t
	r.schemas[name] = M{} // a placeholder against recursion
	s, err := r.object(t)
	if err != nil {
		return nil, err
	}
	if d := r.typeDoc(t); d != "" {
		s["description"] = d
	}
	r.schemas[name] = s
	return Ref(name), nil
}

// object is the schema of a struct: its own fields, allOf its embedded
// structs (or, for an embedded struct tagged inline, its fields among the
// own ones).
func (r *reflector) object(t reflect.Type) (M, error) {
	o := objectParts{props: M{}}
	if err := r.fields(t, &o, false); err != nil {
		return nil, err
	}
	own := Obj("", o.props, o.required...)
	delete(own, "description")
	if o.strict {
		own = Strict(own)
	}
	if o.maxProps != nil {
		own["maxProperties"] = o.maxProps
	}
	if len(o.embedded) == 0 {
		return own, nil
	}
	if len(o.props) > 0 || len(o.required) > 0 {
		o.embedded = append(o.embedded, own)
	}
	return M{"allOf": o.embedded}, nil
}

// objectParts are what the fields of a struct make of its schema.
type objectParts struct {
	props    M
	required []string
	embedded []any // $refs of embedded structs, for allOf
	strict   bool
	maxProps any
}

// fields adds the fields of t to o; inline (an embedded struct tagged
// inline, and everything it embeds) adds embedded structs' fields as own.
func (r *reflector) fields(t reflect.Type, o *objectParts, inline bool) error {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := parseTag(f.Tag.Get("openapi"))
		if f.Name == "_" {
			if _, ok := tag["strict"]; ok {
				o.strict = true
			}
			if names, ok := tag["requires"]; ok {
				o.required = append(o.required, strings.Split(names, "|")...)
			}
			if n, ok := tag["maxprops"]; ok {
				o.maxProps, _ = strconv.Atoi(n)
			}
			continue
		}
		if !f.IsExported() || f.Tag.Get("openapi") == "-" {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			if _, ok := tag["inline"]; ok || inline {
				if err := r.fields(f.Type, o, true); err != nil {
					return err
				}
				continue
			}
			e, err := r.named(f.Type)
			if err != nil {
				return err
			}
			o.embedded = append(o.embedded, e)
			continue
		}
		if name == "" {
			name = f.Name
		}
		s, err := r.field(f)
		if err != nil {
			return fmt.Errorf("%s.%s: %w", t.Name(), f.Name, err)
		}
		d := r.fieldDoc(t, f.Name)
		if types := strings.Fields(f.Tag.Get("for")); len(types) > 0 {
			if d == "" {
				d = strings.Join(types, ", ") + "."
			} else {
				d = strings.Join(types, ", ") + ": " + d
			}
		}
		if d != "" {
			s = describe(s, d)
		}
		o.props[name] = s
		_, opt := optional(f.Type)
		_, must := tag["required"]
		if must || !opt && !strings.Contains(","+opts+",", ",omitempty,") {
			o.required = append(o.required, name)
		}
	}
	return nil
}

// field is the schema of one struct field: its type's schema with the
// field's `openapi` tag applied.
func (r *reflector) field(f reflect.StructField) (M, error) {
	tag := parseTag(f.Tag.Get("openapi"))
	t := f.Type
	nullable := false
	if v, ok := optional(t); ok {
		nullable = true
		t = v
	} else if t.Kind() == reflect.Pointer {
		nullable = true
		t = t.Elem()
	}
	var s M
	if name, ok := tag["ref"]; ok {
		s = Ref(name)
	} else if name, ok := tag["itemref"]; ok {
		s = Arr(Ref(name), "")
	} else if _, ok := tag["object"]; ok {
		s = Freeform("")
	} else if _, ok := tag["any"]; ok {
		s = AnyValue("")
	} else {
		var err error
		if s, err = r.typeSchema(t); err != nil {
			return nil, err
		}
	}
	s = applyTag(s, tag)
	_, nonnull := tag["nonnull"]
	if alt, ok := tag["orstring"]; ok {
		alts := []any{s, Enum("", strings.Split(alt, "|")...)}
		if nullable && !nonnull {
			alts = append(alts, M{"type": "null"})
		}
		return M{"anyOf": alts}, nil
	}
	if nullable && !nonnull {
		s = Null(s)
	}
	return s, nil
}

// optionalType is implemented by a request field that may be absent or
// null (restapi.Nullable): OptionalValue is a zero value of its type.
var optionalType = reflect.TypeOf((*interface{ OptionalValue() any })(nil)).Elem()

// optional reports whether t is such a field, and the type of its value.
func optional(t reflect.Type) (reflect.Type, bool) {
	if t.Kind() != reflect.Struct || !t.Implements(optionalType) {
		return nil, false
	}
	v := reflect.Zero(t).Interface().(interface{ OptionalValue() any }).OptionalValue()
	return reflect.TypeOf(v), true
}

var (
	timeType = reflect.TypeOf(time.Time{})
	rawType  = reflect.TypeOf(json.RawMessage{})
)

// typeSchema is the schema of a Go type (not a field).
func (r *reflector) typeSchema(t reflect.Type) (M, error) {
	switch {
	case t == timeType:
		return DateTime(""), nil
	case t == rawType:
		return AnyValue(""), nil
	}
	switch t.Kind() {
	case reflect.String:
		s := Str("")
		if vals := r.enumOf(t); len(vals) > 0 {
			s["enum"] = toAny(vals)
		}
		return s, nil
	case reflect.Bool:
		return Boolean(""), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return Integer(""), nil
	case reflect.Float32, reflect.Float64:
		return Number(""), nil
	case reflect.Slice, reflect.Array:
		items, err := r.elem(t.Elem())
		if err != nil {
			return nil, err
		}
		return Arr(items, ""), nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil, fmt.Errorf("map key %s is not a string", t.Key())
		}
		v, err := r.elem(t.Elem())
		if err != nil {
			return nil, err
		}
		return With(typed("object", ""), "additionalProperties", v), nil
	case reflect.Struct:
		if t.Name() == "" {
			return r.object(t)
		}
		return r.named(t)
	case reflect.Interface:
		return AnyValue(""), nil
	}
	return nil, fmt.Errorf("no schema for %s", t)
}

// elem is the schema of an array item or map value.
func (r *reflector) elem(t reflect.Type) (M, error) {
	if t.Kind() == reflect.Pointer {
		s, err := r.typeSchema(t.Elem())
		if err != nil {
			return nil, err
		}
		return Null(s), nil
	}
	return r.typeSchema(t)
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

// describe sets the description of a schema; a $ref gets it as a sibling
// (OpenAPI 3.1 allows it).
func describe(s M, d string) M { return With(s, "description", d) }

func (r *reflector) typeDoc(t reflect.Type) string {
	d := r.pkg(t.PkgPath())
	if d == nil {
		return ""
	}
	return d.types[t.Name()]
}

func (r *reflector) fieldDoc(t reflect.Type, field string) string {
	d := r.pkg(t.PkgPath())
	if d == nil {
		return ""
	}
	return d.fields[t.Name()][field]
}

func (r *reflector) enumOf(t reflect.Type) []string {
	if t.Name() == "" || t.PkgPath() == "" {
		return nil
	}
	d := r.pkg(t.PkgPath())
	if d == nil {
		return nil
	}
	return d.consts[t.Name()]
}

// pkg parses the doc comments of a package of this module once; other
// packages (the standard library) have none to give.
func (r *reflector) pkg(path string) *pkgDocs {
	if d, ok := r.docs[path]; ok {
		return d
	}
	var d *pkgDocs
	if rel, ok := strings.CutPrefix(path, modulePath); ok {
		var err error
		if r.root == "" {
			if r.root, err = moduleRoot(); err != nil {
				panic(fmt.Sprintf("doc comments of %s: %v", path, err))
			}
		}
		if d, err = parseDocs(filepath.Join(r.root, filepath.FromSlash(rel))); err != nil {
			panic(fmt.Sprintf("doc comments of %s: %v", path, err))
		}
	}
	r.docs[path] = d
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
