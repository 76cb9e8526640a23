package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// generate runs the generator against the real CRDs into a temporary file.
func generate(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "docs", "crd-reference.md")
	if err := run(filepath.Join("..", "..", "config", "crd", "bases"), out); err != nil {
		t.Fatalf("run: %v", err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("read output: %v", err)
	}
	return string(data)
}

// fieldRow returns the table row of a field path inside the section of kind.
func fieldRow(t *testing.T, doc, kind, path string) string {
	t.Helper()
	start := strings.Index(doc, "\n## "+kind+"\n")
	if start < 0 {
		t.Fatalf("no section for kind %s", kind)
	}
	section := doc[start+1:]
	if end := strings.Index(section[1:], "\n## "); end >= 0 {
		section = section[:end+1]
	}
	for _, line := range strings.Split(section, "\n") {
		if strings.HasPrefix(line, "| `"+path+"` |") {
			return line
		}
	}
	t.Fatalf("no row for %s in the %s section", path, kind)
	return ""
}

func TestGeneratesKnownFieldsAndLimits(t *testing.T) {
	doc := generate(t)

	for _, tc := range []struct {
		kind, path string
		want       []string
	}{
		{"Monitor", "spec.intervalSeconds", []string{"integer (int32)", "optional", "range 15–900", "intervalSeconds is"}},
		{"Monitor", "spec.type", []string{"`\"http\"`", "one of `http`, `api`, `ping`", "`mcp`", "type cannot change after creation"}},
		{"Monitor", "spec.http.headers", []string{"[]object", "items ≤ 50"}},
		{"Monitor", "spec.http.headers[]", []string{"rule `has(self.value) != has(self.valueFrom)`", "exactly one of value and valueFrom is required"}},
		{"Monitor", "spec.http.headers[].name", []string{"**required**", "length 1–256", "pattern `"}},
		{"StatusPage", "spec.slug", []string{"length 3–64", "pattern `^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`", "&lt;slug&gt;"}},
		{"AlertChannel", "spec.emails", []string{"[]string", "items ≤ 20", "each item length ≤ 254"}},
	} {
		row := fieldRow(t, doc, tc.kind, tc.path)
		for _, w := range tc.want {
			if !strings.Contains(row, w) {
				t.Errorf("%s %s: row lacks %q:\n%s", tc.kind, tc.path, w, row)
			}
		}
	}

	for _, w := range []string{
		"| [Monitor](#monitor) | `monitoring.uptime-operator.io/v1alpha1` | Namespaced | `mon` |",
		"| [ProbeRegion](#proberegion) | `monitoring.uptime-operator.io/v1alpha1` | Cluster |",
		"| Status | string | `.status.currentStatus` | always |",
	} {
		if !strings.Contains(doc, w) {
			t.Errorf("output lacks %q", w)
		}
	}
}

func TestTableRowsKeepTheirColumns(t *testing.T) {
	doc := generate(t)
	for i, line := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		if n := strings.Count(strings.ReplaceAll(line, `\|`, ""), "|"); n != 7 {
			t.Errorf("line %d has %d cell separators, want 7: %s", i+1, n, line)
		}
	}
}

func TestOutputIsDeterministic(t *testing.T) {
	first := generate(t)
	for range 3 {
		if got := generate(t); got != first {
			t.Fatal("two runs produced different output")
		}
	}
}
