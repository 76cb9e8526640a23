package apidoc

import (
	"maps"
	"slices"
)

// M is a JSON object of the document.
type M = map[string]any

// Schema helpers (JSON Schema 2020-12, as OpenAPI 3.1 uses it).

func Ref(name string) M { return M{"$ref": "#/components/schemas/" + name} }

func typed(t, desc string) M {
	m := M{"type": t}
	setIf(m, "description", desc)
	return m
}

func Str(desc string) M      { return typed("string", desc) }
func Integer(desc string) M  { return typed("integer", desc) }
func Number(desc string) M   { return typed("number", desc) }
func UUID(desc string) M     { return With(Str(desc), "format", "uuid") }
func DateTime(desc string) M { return With(Str(desc), "format", "date-time") }
func URI(desc string) M      { return With(Str(desc), "format", "uri") }
func Email(desc string) M    { return With(Str(desc), "format", "email") }

// Enum is a string restricted to vals.
func Enum(desc string, vals ...string) M { return With(Str(desc), "enum", toAny(vals)) }

func Arr(items M, desc string) M { return With(typed("array", desc), "items", items) }

// Obj is an object with props; required lists the required ones.
func Obj(desc string, props M, required ...string) M {
	m := typed("object", desc)
	m["properties"] = props
	if len(required) > 0 {
		slices.Sort(required)
		m["required"] = toAny(required)
	}
	return m
}

// Strict forbids properties other than those listed.
func Strict(m M) M { return With(m, "additionalProperties", false) }

// Freeform is an object whose properties are not fixed.
func Freeform(desc string) M { return With(typed("object", desc), "additionalProperties", true) }

// AnyValue is any JSON value. The empty schema {} says so, but validators
// that read a schema without a type by OpenAPI 3.0 rules refuse null for
// it, so null is listed as an alternative.
func AnyValue(desc string) M {
	m := M{"anyOf": []any{M{}, M{"type": "null"}}}
	setIf(m, "description", desc)
	return m
}

// Null makes s also accept null.
func Null(s M) M {
	if t, ok := s["type"].(string); ok {
		c := With(s)
		c["type"] = []any{t, "null"}
		if e, ok := c["enum"].([]any); ok {
			c["enum"] = append(slices.Clone(e), nil)
		}
		return c
	}
	return M{"anyOf": []any{s, M{"type": "null"}}}
}

// With returns a copy of m with the key/value pairs kv set.
func With(m M, kv ...any) M {
	c := M{}
	maps.Copy(c, m)
	for i := 0; i+1 < len(kv); i += 2 {
		c[kv[i].(string)] = kv[i+1]
	}
	return c
}

// Bounds sets the minimum and maximum (the length of a string, the items
// of an array) that are not nil.
func Bounds(m M, min, max any) M {
	c := With(m)
	key := map[string][2]string{"string": {"minLength", "maxLength"}, "array": {"minItems", "maxItems"}}
	names := [2]string{"minimum", "maximum"}
	if t, ok := m["type"].(string); ok {
		if n, ok := key[t]; ok {
			names = n
		}
	}
	if min != nil {
		c[names[0]] = min
	}
	if max != nil {
		c[names[1]] = max
	}
	return c
}

func toAny[T any](v []T) []any {
	out := make([]any, len(v))
	for i := range v {
		out[i] = v[i]
	}
	return out
}
