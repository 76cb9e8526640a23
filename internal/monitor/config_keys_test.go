package monitor

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

// This file checks that every config key is wired end to end, so that a
// key added in one place and forgotten in another fails here rather than
// in production: the field on the Monitor's per-type struct (the CRD), the
// key of probeapi.Config with its `for` tag (the REST config object and the
// probe wire contract), ConfigOf and ApplyConfig between the two, and the
// code that reads the key when a check runs.

// section is the name of the MonitorSpec field holding type t's settings.
func section(t monv1.MonitorType) string {
	if t == monv1.MonitorAPI {
		return "http"
	}
	return string(t)
}

// sectionField returns the MonitorSpec field (a pointer to the type's
// struct) named by its JSON name.
func sectionField(spec *monv1.MonitorSpec, name string) reflect.Value {
	v := reflect.ValueOf(spec).Elem()
	for i := range v.NumField() {
		if json, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ","); json == name {
			return v.Field(i)
		}
	}
	return reflect.Value{}
}

// fill sets every field reachable from v to a distinct non-zero value: a
// CRD struct in which no field is left at its zero value, so a field the
// codec forgets shows in the round trip.
func fill(v reflect.Value, n *int) {
	next := func() int { *n++; return *n }
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), n)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), n)
			}
		}
		switch x := v.Addr().Interface().(type) {
		case *monv1.MCPToolCall:
			x.ArgumentsJSON = fmt.Sprintf(`{"a":%d}`, next())
		case *monv1.HTTPHeader:
			// A header has a value or a Secret reference, not both; the
			// slice case below adds one of each.
			x.ValueFrom = nil
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0), n)
		if h, ok := v.Index(0).Addr().Interface().(*monv1.HTTPHeader); ok {
			ref := monv1.HTTPHeader{Name: fmt.Sprintf("H%d", next()), ValueFrom: &monv1.SecretKeySelector{Name: "s", Key: "k"}}
			h.Name = "A" + h.Name // sorted before ref: the CR keeps headers by name
			v.Set(reflect.Append(v, reflect.ValueOf(ref)))
		}
	case reflect.String:
		v.SetString(fmt.Sprintf("V%d", next())) // upper case: the codec upper-cases methods and record types
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(next()))
	case reflect.Bool:
		v.SetBool(true)
	default:
		panic(fmt.Sprintf("fill: no rule for %s", v.Type()))
	}
}

// fullSpec is a spec of type t whose settings struct has every field set.
func fullSpec(t *testing.T, typ monv1.MonitorType) monv1.MonitorSpec {
	spec := monv1.MonitorSpec{Type: typ}
	f := sectionField(&spec, section(typ))
	if !f.IsValid() {
		t.Fatalf("MonitorSpec has no field %q for %s monitors", section(typ), typ)
	}
	n := 0
	fill(f, &n)
	return spec
}

// wireKeys are the top-level keys of c's JSON form.
func wireKeys(t *testing.T, c probeapi.Config) []string {
	raw, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestEveryConfigKeyRoundTrips fills every field of each type's settings
// and requires it to survive CRD → REST config → JSON → probe assignment →
// JSON → CRD, and the keys on the wire to be exactly the keys the `for`
// tags of probeapi.Config give the type.
func TestEveryConfigKeyRoundTrips(t *testing.T) {
	for _, typ := range monv1.MonitorTypes {
		spec := fullSpec(t, typ)
		c := ConfigOf(&spec)

		// The probe wire: the config inside an assignment, as agents decode it.
		raw, err := json.Marshal(probeapi.Assignment{Type: string(typ), Config: c})
		if err != nil {
			t.Fatalf("%s: encode assignment: %v", typ, err)
		}
		var a probeapi.Assignment
		if err := json.Unmarshal(raw, &a); err != nil {
			t.Fatalf("%s: decode assignment: %v", typ, err)
		}
		got := monv1.MonitorSpec{Type: typ}
		if !ApplyConfig(&got, &a.Config) {
			t.Fatalf("%s: ApplyConfig does not know the type", typ)
		}
		if !equality.Semantic.DeepEqual(got, spec) {
			t.Errorf("%s: a field of spec.%s is lost between the CRD and the config object (ConfigOf / ApplyConfig):\n got %+v\nwant %+v",
				typ, section(typ), sectionField(&got, section(typ)).Elem().Interface(), sectionField(&spec, section(typ)).Elem().Interface())
		}

		// Every key the type accepts is produced from the CRD, and nothing
		// else but the keys of a type sharing the section (an http struct
		// carries api's assertions, which admission refuses for http).
		produced := wireKeys(t, c)
		var shared []string
		for _, u := range monv1.MonitorTypes {
			if section(u) != section(typ) {
				continue
			}
			for _, k := range probeapi.ConfigKeys() {
				if probeapi.KeyAllowed(string(u), k) {
					shared = append(shared, k)
				}
			}
		}
		for _, k := range probeapi.ConfigKeys() {
			if probeapi.KeyAllowed(string(typ), k) && !slices.Contains(produced, k) {
				t.Errorf("%s: config key %q (for:%q in probeapi.Config) is not filled from spec.%s by ConfigOf", typ, k, typ, section(typ))
			}
		}
		for _, k := range produced {
			if !slices.Contains(shared, k) {
				t.Errorf("%s: ConfigOf fills config key %q, which the `for` tag of probeapi.Config does not give %s monitors", typ, k, typ)
			}
		}
	}
}

// readers are where the keys are read when a check runs: the probes, the
// wire contract's helpers (the effective timeout) and, for cron monitors,
// whose heartbeats the manager judges, the engine.
var readers = map[bool][]string{
	false: {"../../probes", "../probeapi"},
	true:  {"../engine", "../monitor"},
}

// selectors returns the field and method names selected (x.Name) in the
// non-test Go files of dirs.
func selectors(t *testing.T, dirs []string) map[string]bool {
	out := map[string]bool{}
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if s, ok := n.(*ast.SelectorExpr); ok {
					out[s.Sel.Name] = true
				}
				return true
			})
		}
	}
	return out
}

// TestEveryConfigKeyIsRead fails when a key of probeapi.Config is read by
// no check: the field would be stored and shown but change nothing.
func TestEveryConfigKeyIsRead(t *testing.T) {
	read := map[bool]map[string]bool{false: selectors(t, readers[false]), true: selectors(t, readers[true])}
	var walk func(rt reflect.Type)
	walk = func(rt reflect.Type) {
		for i := range rt.NumField() {
			f := rt.Field(i)
			if f.Anonymous {
				walk(f.Type)
				continue
			}
			types := strings.Fields(f.Tag.Get("for"))
			if len(types) == 0 {
				t.Errorf("probeapi.Config.%s has no `for` tag: no monitor type accepts it", f.Name)
				continue
			}
			cronOnly := len(types) == 1 && types[0] == probeapi.TypeCron
			if !read[cronOnly][f.Name] {
				t.Errorf("probeapi.Config.%s (%s) is read nowhere in %v", f.Name, f.Tag.Get("json"), readers[cronOnly])
			}
		}
	}
	walk(reflect.TypeOf(probeapi.Config{}))
}
