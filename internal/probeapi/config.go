package probeapi

import (
	"slices"
	"strings"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

// HeaderText is a header list as text by name; headers still naming a
// Secret are left out (an assignment never holds one: the manager resolves
// them).
func HeaderText(hs []monv1.HTTPHeader) map[string]string {
	if len(hs) == 0 {
		return nil
	}
	out := make(map[string]string, len(hs))
	for _, h := range hs {
		if h.Value != nil && h.ValueFrom == nil {
			out[h.Name] = *h.Value
		}
	}
	return out
}

// TextHeaders is the header list of text values by name, sorted by name
// (tests and tools that build assignments).
func TextHeaders(h map[string]string) []monv1.HTTPHeader {
	if h == nil {
		return nil
	}
	out := make([]monv1.HTTPHeader, 0, len(h))
	for k, v := range h {
		out = append(out, monv1.HTTPHeader{Name: k, Value: &v})
	}
	slices.SortFunc(out, func(a, b monv1.HTTPHeader) int { return strings.Compare(a.Name, b.Name) })
	return out
}
