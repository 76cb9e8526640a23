// Package configtest builds monitor specs for tests that walk every config
// key of every monitor type: a config struct in which no field is left at
// its zero value, so a key some layer forgets shows in a round trip.
package configtest

import (
	"fmt"
	"reflect"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/monitorconfig"
)

// Full is a spec of type typ whose config struct has every field set to a
// distinct non-zero value (each list one item; a header list one literal
// value and one Secret reference, sorted by name as the CR keeps them).
func Full(typ monv1.MonitorType) (monv1.MonitorSpec, error) {
	spec := monv1.MonitorSpec{Type: typ}
	f, ok := monitorconfig.ConfigField(&spec, typ)
	if !ok {
		return spec, fmt.Errorf("no config struct for %s monitors", typ)
	}
	n := 0
	fill(f, &n)
	return spec, nil
}

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
		panic(fmt.Sprintf("configtest: no rule for %s", v.Type()))
	}
}
