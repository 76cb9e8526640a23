package kubectlplugin

import (
	"testing"
	"time"
)

func TestStamp(t *testing.T) {
	if got := stamp(time.Time{}); got != "-" {
		t.Errorf("zero time: %q, want -", got)
	}
	at := time.Date(2026, 11, 28, 7, 31, 0, 500, time.FixedZone("CET", 3600))
	if got := stamp(at); got != "2026-11-28T06:31:00Z" {
		t.Errorf("stamp = %q", got)
	}
}
