package kubectlplugin

import (
	"bytes"
	"fmt"
	"testing"
	"text/tabwriter"
)

// TestEscapeControl: what a monitor writer may put in a name reaches the
// terminal as visible escapes, through the plugin's tabwriter too, while
// tabs and newlines of the plugin's own layout and other Unicode pass.
func TestEscapeControl(t *testing.T) {
	for in, want := range map[string]string{
		"API":                   "API",
		"Zahlungs-API ✓ 東京":     "Zahlungs-API ✓ 東京",
		"evil\x1b]0;pwned\x07":  `evil\x1b]0;pwned\x07`,
		"over\rwrite":           `over\x0dwrite`,
		"csi\u009b31m":          `csi\u009b31m`,
		"rtl\u202eevil":         `rtl\u202eevil`,
		"bad\xffutf8":           `bad\xffutf8`,
		"keep\ttabs\nand lines": "keep\ttabs\nand lines",
	} {
		if got := EscapeControl(in); got != want {
			t.Errorf("EscapeControl(%q) = %q, want %q", in, got, want)
		}
	}
	var out bytes.Buffer
	tw := tabwriter.NewWriter(safeWriter{&out}, 0, 4, 3, ' ', 0)
	fmt.Fprintf(tw, "MONITOR\tSTATUS\n%s\t%s\n", "evil\x1b[2J\x1b[H", "down")
	_ = tw.Flush()
	if bytes.ContainsAny(out.Bytes(), "\x1b\x07") {
		t.Fatalf("an escape reached the output: %q", out.String())
	}
	if !bytes.Contains(out.Bytes(), []byte(`evil\x1b[2J\x1b[H`)) {
		t.Fatalf("the name is not shown escaped: %q", out.String())
	}
}
