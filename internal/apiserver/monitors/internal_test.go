package monitors

import (
	"testing"

	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
)

func TestParseCursorKeepsMicroseconds(t *testing.T) {
	for in, want := range map[string]string{
		"2026-03-01T12:00:04.123457Z": "2026-03-01T12:00:04.123457Z",
		"2026-03-01T12:00:04.123457":  "2026-03-01T12:00:04.123457Z",
		"2026-03-01T12:00:04Z":        "2026-03-01T12:00:04.000000Z",
		"2026-03-01T12:00:04.5":       "2026-03-01T12:00:04.500000Z",
	} {
		got, ok := core.ParseCursor(in)
		if !ok || core.ISOTime(got) != want {
			t.Errorf("core.ParseCursor(%q) = %v %v, want %s", in, core.ISOTime(got), ok, want)
		}
	}
	for _, bad := range []string{"", "2026-03-01", "2026-03-01T12:00:04.1234567Z", "2026-03-01T12:00:04+02:00", "yesterday"} {
		if _, ok := core.ParseCursor(bad); ok {
			t.Errorf("core.ParseCursor(%q) accepted", bad)
		}
	}
}

func TestObjectNamePrefix(t *testing.T) {
	for in, want := range map[string]string{"Shop API": "shop-api-", "  ": "monitor-", "123 go": "monitor-123-go-", "Ünïcode!": "n-code-"} {
		if got := core.ObjectNamePrefix(in, "monitor"); got != want {
			t.Errorf("core.ObjectNamePrefix(%q) = %q, want %q", in, got, want)
		}
	}
}
