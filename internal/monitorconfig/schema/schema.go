// Package schema is the JSON schema of each monitor type's config keys,
// derived from the Monitor CRD that controller-gen generates from the
// config structs' kubebuilder markers and doc comments (config/crd,
// embedded): the bounds, enums, patterns and descriptions of a key are
// written once, on its CRD field, and this package gives them under the
// key's wire name (internal/monitorconfig) to the REST API's OpenAPI
// document, to validation messages and to the docs' tables.
package schema

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"

	"sigs.k8s.io/yaml"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/config"
	"github.com/uptime-operator/uptime-operator/internal/monitorconfig"
)

// M is a JSON schema object.
type M = map[string]any

const monitorsCRD = "crd/bases/monitoring.uptime-operator.io_monitors.yaml"

// crdSpec is the openAPIV3Schema of the Monitor CRD's spec.
var crdSpec = sync.OnceValues(func() (M, error) {
	raw, err := config.CRDs.ReadFile(monitorsCRD)
	if err != nil {
		return nil, fmt.Errorf("read the Monitor CRD: %w", err)
	}
	var crd struct {
		Spec struct {
			Versions []struct {
				Schema struct {
					OpenAPIV3Schema M `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		return nil, fmt.Errorf("decode the Monitor CRD: %w", err)
	}
	if len(crd.Spec.Versions) == 0 {
		return nil, fmt.Errorf("the Monitor CRD has no version")
	}
	spec, _ := dig(crd.Spec.Versions[0].Schema.OpenAPIV3Schema, "properties", "spec")
	if spec == nil {
		return nil, fmt.Errorf("the Monitor CRD has no spec schema")
	}
	return spec, nil
})

func dig(m M, path ...string) (M, bool) {
	for _, p := range path {
		next, ok := m[p].(map[string]any)
		if !ok {
			return nil, false
		}
		m = next
	}
	return m, true
}

// Config is the CRD schema of monitor type t's config struct
// (spec.<config> of the CRD), as controller-gen wrote it.
func Config(t monv1.MonitorType) (M, error) {
	spec, err := crdSpec()
	if err != nil {
		return nil, err
	}
	info, ok := monv1.LookupMonitorType(t)
	if !ok {
		return nil, fmt.Errorf("unknown monitor type %q", t)
	}
	s, ok := dig(spec, "properties", info.Config)
	if !ok {
		return nil, fmt.Errorf("the Monitor CRD has no spec.%s: run make manifests", info.Config)
	}
	return s, nil
}

// Key is the wire schema of one config key of a type: the CRD field's
// schema with its nested keys renamed to wire keys.
type Key struct {
	// Name is the wire key.
	Name string
	// Field is the CRD field's json name.
	Field string
	// Required is true for a +required field.
	Required bool
	// Schema is the JSON schema of the value (no description).
	Schema M
	// Description is the field's doc comment, starting with the wire key.
	Description string
}

// Keys are the wire keys of type t's config with their schemas, in field
// order.
func Keys(t monv1.MonitorType) ([]Key, error) {
	crd, err := Config(t)
	if err != nil {
		return nil, err
	}
	ct := monitorconfig.ConfigType(t)
	return keysOf(ct, crd)
}

func keysOf(ct reflect.Type, crd M) ([]Key, error) {
	props, _ := crd["properties"].(map[string]any)
	required, _ := crd["required"].([]any)
	var out []Key
	for _, f := range monitorconfig.Fields(ct) {
		p, ok := props[f.Name].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("the Monitor CRD has no field %s of %s: run make manifests", f.Name, ct.Name())
		}
		s, err := wireSchema(f, p)
		if err != nil {
			return nil, err
		}
		desc, _ := p["description"].(string)
		out = append(out, Key{Name: f.Key, Field: f.Name, Required: slices.Contains(required, any(f.Name)),
			Schema: s, Description: Describe(desc, f.Name, f.Key)})
	}
	return out, nil
}

// Describe is a CRD description as text of the wire form: one line, the
// field's json name at its start replaced by the wire key.
func Describe(desc, name, key string) string {
	desc = strings.Join(strings.Fields(desc), " ")
	if rest, ok := strings.CutPrefix(desc, name+" "); ok {
		return key + " " + rest
	}
	for _, sep := range []string{":", ","} {
		if rest, ok := strings.CutPrefix(desc, name+sep); ok {
			return key + sep + rest
		}
	}
	return desc
}

// bounds are the CRD schema keywords the wire schema keeps.
var bounds = []string{"type", "minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems", "enum", "pattern", "format"}

// wireSchema is the schema of a field's value on the wire.
func wireSchema(f monitorconfig.Field, crd M) (M, error) {
	switch f.Kind {
	case monitorconfig.KindHeaders:
		return M{"$ref": "#/components/schemas/RequestHeaders"}, nil
	case monitorconfig.KindJSON:
		return M{"type": "object", "additionalProperties": true}, nil
	case monitorconfig.KindScalar:
		return M{"anyOf": []any{M{}, M{"type": "null"}}}, nil
	case monitorconfig.KindStruct:
		return M{"$ref": "#/components/schemas/" + f.Elem.Name()}, nil
	case monitorconfig.KindList:
		s := keep(crd)
		s["items"] = M{"$ref": "#/components/schemas/" + f.Elem.Name()}
		return s, nil
	}
	s := keep(crd)
	if items, ok := crd["items"].(map[string]any); ok {
		it := keep(items)
		dropIntFormat(it)
		s["items"] = it
	}
	dropIntFormat(s)
	return s, nil
}

// dropIntFormat removes the int32/int64 formats controller-gen writes; the
// REST document says integer, as it did when the config was declared in
// Go.
func dropIntFormat(s M) {
	if s["format"] == "int32" || s["format"] == "int64" {
		delete(s, "format")
	}
}

func keep(crd M) M {
	s := M{}
	for _, k := range bounds {
		if v, ok := crd[k]; ok {
			s[k] = v
		}
	}
	return s
}

// OpenAPI returns the REST API's components for the monitor config:
// MonitorConfig (the flat object of every type's keys, each described
// with the types it applies to) and the objects nested in it, named after
// their CRD structs. notificationEmails is the schema of the one key every
// type has (a spec field REST shows under config).
func OpenAPI(notificationEmails M) (M, error) {
	type use struct {
		types []string
		key   Key
	}
	byKey := map[string][]use{}
	var order []string
	nested := map[string]M{}
	for _, t := range monv1.MonitorTypes {
		keys, err := Keys(t)
		if err != nil {
			return nil, err
		}
		for _, k := range keys {
			us := byKey[k.Name]
			if us == nil {
				order = append(order, k.Name)
			}
			i := slices.IndexFunc(us, func(u use) bool {
				return reflect.DeepEqual(u.key.Schema, k.Schema) && u.key.Description == k.Description
			})
			if i < 0 {
				us = append(us, use{key: k})
				i = len(us) - 1
			}
			us[i].types = append(us[i].types, string(t))
			byKey[k.Name] = us
		}
		crd, _ := Config(t)
		if err := addNested(monitorconfig.ConfigType(t), crd, nested); err != nil {
			return nil, err
		}
	}
	props := M{"notification_emails": notificationEmails}
	for _, name := range order {
		us := byKey[name]
		var s M
		if len(us) == 1 || allEqual(us, func(u use) any { return u.key.Schema }) {
			s = maps.Clone(us[0].key.Schema)
		} else {
			s = M{"type": us[0].key.Schema["type"]}
		}
		var descs []string
		for _, u := range us {
			descs = append(descs, strings.Join(u.types, ", ")+": "+u.key.Description)
		}
		s["description"] = strings.Join(descs, " ")
		props[name] = s
	}
	out := M{"MonitorConfig": M{
		"type":                 "object",
		"description":          "The type-specific settings of a monitor: at most 50 keys and 32 KB as JSON; unknown keys are rejected. Keys apply to the types named in their descriptions. Derived from the Monitor CRD's config structs (spec.http, spec.ping, ...).",
		"additionalProperties": false,
		"maxProperties":        50,
		"properties":           props,
	}}
	for name, c := range nested {
		out[name] = c
	}
	return out, nil
}

func allEqual[T any](us []T, f func(T) any) bool {
	for _, u := range us[1:] {
		if !reflect.DeepEqual(f(u), f(us[0])) {
			return false
		}
	}
	return true
}

// addNested adds the component of every struct nested in ct (assertions,
// steps, a tool call), under the struct's Go name.
func addNested(ct reflect.Type, crd M, out map[string]M) error {
	props, _ := crd["properties"].(map[string]any)
	for _, f := range monitorconfig.Fields(ct) {
		if f.Kind != monitorconfig.KindStruct && f.Kind != monitorconfig.KindList {
			continue
		}
		p, _ := props[f.Name].(map[string]any)
		if f.Kind == monitorconfig.KindList {
			p, _ = p["items"].(map[string]any)
		}
		if p == nil {
			return fmt.Errorf("the Monitor CRD has no field %s of %s: run make manifests", f.Name, ct.Name())
		}
		if _, done := out[f.Elem.Name()]; done {
			continue
		}
		keys, err := keysOf(f.Elem, p)
		if err != nil {
			return err
		}
		ps := M{}
		var req []any
		for _, k := range keys {
			s := maps.Clone(k.Schema)
			if k.Description != "" {
				s["description"] = k.Description
			}
			ps[k.Name] = s
			if k.Required {
				req = append(req, k.Name)
			}
		}
		c := M{"type": "object", "additionalProperties": false, "properties": ps}
		if d, _ := p["description"].(string); d != "" {
			c["description"] = Describe(d, "", "")
		}
		if len(req) > 0 {
			c["required"] = req
		}
		out[f.Elem.Name()] = c
		if err := addNested(f.Elem, p, out); err != nil {
			return err
		}
	}
	return nil
}
