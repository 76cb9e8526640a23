package main

import (
	"fmt"
	"os"
	"reflect"
	"strings"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/monitorconfig"
)

// The generated part of docs/rest-api.md lies between these lines.
const (
	keysBegin = "<!-- BEGIN config keys: written by hack/gen-openapi from the config structs (make manifests); do not edit -->\n"
	keysEnd   = "<!-- END config keys -->\n"
)

// spliceConfigKeys rewrites the config keys table of the markdown file at
// path.
func spliceConfigKeys(path string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	doc := string(raw)
	before, rest, ok := strings.Cut(doc, keysBegin)
	_, after, ok2 := strings.Cut(rest, keysEnd)
	if !ok || !ok2 {
		return fmt.Errorf("%s: no %q ... %q block", path, strings.TrimSpace(keysBegin), strings.TrimSpace(keysEnd))
	}
	return write(path, []byte(before+keysBegin+configKeysTable()+keysEnd+after))
}

// configKeysTable is the table of each monitor type's REST config keys
// and the CRD struct they land in, one row per config struct of
// monv1.MonitorTypeRegistry, read from the struct (internal/monitorconfig).
func configKeysTable() string {
	var b strings.Builder
	b.WriteString("| type | CR struct | keys |\n|---|---|---|\n")
	for _, name := range monitorconfig.ConfigNames() {
		var types []string
		var first monv1.MonitorType
		ext := false
		for _, r := range monv1.MonitorTypeRegistry {
			if r.Config == name {
				if first == "" {
					first = r.Type
				}
				types = append(types, string(r.Type))
				ext = ext || r.Extension
			}
		}
		label := strings.Join(types, ", ")
		if ext {
			label += " (extension)"
		}
		fmt.Fprintf(&b, "| %s | `spec.%s` | %s |\n", label, name, keys(monitorconfig.ConfigType(first)))
	}
	return b.String()
}

// keys lists the wire keys of config struct t, nested objects and lists
// in braces, with the CRD field a key maps to when the names differ.
func keys(t reflect.Type) string {
	var out []string
	for _, f := range monitorconfig.Fields(t) {
		s := "`" + f.Key + "`"
		switch f.Kind {
		case monitorconfig.KindStruct:
			s += " {" + keys(f.Elem) + "}"
		case monitorconfig.KindList:
			s += " [{" + keys(f.Elem) + "}]"
		case monitorconfig.KindHeaders:
			s += " (object name → value)"
		case monitorconfig.KindJSON:
			s += " (object → `" + f.Name + "`)"
		}
		switch {
		case f.Key == monitorconfig.TimeoutKey && strings.HasSuffix(f.Name, "Seconds"):
			s += " (s → `" + f.Name + "`)"
		case f.Key == monitorconfig.TimeoutKey:
			s += " (ms → `" + f.Name + "`)"
		case f.Kind != monitorconfig.KindJSON && f.Key != monitorconfig.Snake(f.Name):
			s += " (→ `" + f.Name + "`)"
		}
		out = append(out, s)
	}
	return strings.Join(out, ", ")
}
