package schema

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/util/validation/field"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/monitorconfig"
)

// Validate checks the config struct of spec's type against the bounds its
// CRD schema declares (from the struct's kubebuilder markers): minimum and
// maximum, lengths, item counts, enums and patterns, at any depth. It
// gives admission and the REST API the refusals kube-apiserver would give,
// with the specification's words, before the object is written. Values at
// their zero value are not checked (an absent optional field; a missing
// required one is the type's own rule). Errors are rooted at path
// (spec.<config>).
func Validate(spec *monv1.MonitorSpec, path *field.Path) field.ErrorList {
	f, ok := monitorconfig.ConfigField(spec, spec.Type)
	if !ok || f.IsNil() {
		return nil
	}
	crd, err := Config(spec.Type)
	if err != nil {
		return field.ErrorList{field.InternalError(path, err)}
	}
	return validateValue(f, crd, path)
}

func validateValue(v reflect.Value, s M, path *field.Path) field.ErrorList {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	if v.IsZero() {
		return nil
	}
	var errs field.ErrorList
	switch v.Kind() {
	case reflect.Struct:
		props, _ := s["properties"].(map[string]any)
		for i := range v.NumField() {
			name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
			if p, ok := props[name].(map[string]any); ok {
				errs = append(errs, validateValue(v.Field(i), p, path.Child(name))...)
			}
		}
	case reflect.Slice:
		if n, ok := number(s["maxItems"]); ok && v.Len() > int(n) {
			errs = append(errs, field.TooMany(path, v.Len(), int(n)))
		}
		if n, ok := number(s["minItems"]); ok && v.Len() < int(n) {
			errs = append(errs, field.Invalid(path, v.Len(), fmt.Sprintf("must have at least %d items", int(n))))
		}
		if items, ok := s["items"].(map[string]any); ok {
			for i := range v.Len() {
				errs = append(errs, validateValue(v.Index(i), items, path.Index(i))...)
			}
		}
	case reflect.String:
		str := v.String()
		if n, ok := number(s["maxLength"]); ok && len([]rune(str)) > int(n) {
			errs = append(errs, field.TooLong(path, "", int(n)))
		}
		if n, ok := number(s["minLength"]); ok && len([]rune(str)) < int(n) {
			errs = append(errs, field.Invalid(path, str, fmt.Sprintf("must be at least %d characters", int(n))))
		}
		if enum, ok := s["enum"].([]any); ok && !slices.Contains(enum, any(str)) {
			var vals []string
			for _, e := range enum {
				vals = append(vals, fmt.Sprint(e))
			}
			errs = append(errs, field.NotSupported(path, str, vals))
		}
		if p, ok := s["pattern"].(string); ok && !compiled(p).MatchString(str) {
			errs = append(errs, field.Invalid(path, str, "must match "+p))
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n := v.Int()
		lo, hasLo := number(s["minimum"])
		hi, hasHi := number(s["maximum"])
		switch {
		case hasLo && hasHi && (float64(n) < lo || float64(n) > hi):
			errs = append(errs, field.Invalid(path, n, fmt.Sprintf("must be between %v and %v", lo, hi)))
		case hasLo && !hasHi && float64(n) < lo:
			errs = append(errs, field.Invalid(path, n, fmt.Sprintf("must be at least %v", lo)))
		case hasHi && !hasLo && float64(n) > hi:
			errs = append(errs, field.Invalid(path, n, fmt.Sprintf("must be at most %v", hi)))
		}
	}
	return errs
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	}
	return 0, false
}

var patterns sync.Map // string → *regexp.Regexp

func compiled(p string) *regexp.Regexp {
	if re, ok := patterns.Load(p); ok {
		return re.(*regexp.Regexp)
	}
	re, err := regexp.Compile(p)
	if err != nil {
		re = regexp.MustCompile(".*") // a pattern Go cannot read is left to kube-apiserver
	}
	patterns.Store(p, re)
	return re
}
