package incidents

import (
	"testing"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
)

func TestSnoozeUntil(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	b := restapi.SnoozeBody{Minutes: core.Nullable[int]{Set: true, V: 30}}
	if got, errs := snoozeUntil(&b, now); len(errs) > 0 || !got.Equal(now.Add(30*time.Minute)) {
		t.Errorf("minutes: %v %v", got, errs)
	}
	b = restapi.SnoozeBody{Until: core.Nullable[string]{Set: true, V: "2026-05-01T14:00:00Z"}}
	if got, errs := snoozeUntil(&b, now); len(errs) > 0 || !got.Equal(now.Add(2*time.Hour)) {
		t.Errorf("until: %v %v", got, errs)
	}
	for _, bad := range []restapi.SnoozeBody{{}, {Minutes: core.Nullable[int]{Set: true, V: 0}}, {Until: core.Nullable[string]{Set: true, V: "2026-04-01T00:00:00Z"}},
		{Until: core.Nullable[string]{Set: true, V: "2026-05-01T14:00:00Z"}, Minutes: core.Nullable[int]{Set: true, V: 5}}} {
		if _, errs := snoozeUntil(&bad, now); len(errs) == 0 {
			t.Errorf("%+v: expected a validation error", bad)
		}
	}
}
