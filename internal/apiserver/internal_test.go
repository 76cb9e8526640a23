package apiserver

import (
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

func TestMonitorFieldPath(t *testing.T) {
	for in, want := range map[string]string{
		"spec.intervalSeconds":             "interval_seconds",
		"spec.http.timeoutMs":              "config.timeout",
		"spec.ping.timeoutSeconds":         "config.timeout",
		"spec.http.degradedResponseTimeMs": "config.degraded_response_time_ms",
		"spec.cron.cronExpression":         "config.cron_expression",
		"spec.multistep.steps[1].url":      "config.steps[1].url",
		"spec.mcp.toolCall.argumentsJSON":  "config.tool_call.arguments",
		"spec.udp.payloadHex":              "config.payload_hex",
		"spec.groupRef.name":               "group_id",
		"spec.escalationPolicyRef.name":    "escalation_policy_id",
		"spec.regions[0]":                  "regions",
		"spec.tags[3]":                     "tags",
		"spec.notificationEmails[0]":       "config.notification_emails",
		"spec.port":                        "config",
		"spec":                             "",
	} {
		if got := monitorFieldPath(in); got != want {
			t.Errorf("monitorFieldPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestStripCauseType(t *testing.T) {
	for in, want := range map[string]string{
		`Invalid value: 10: must be between 15 and 900`:                              "must be between 15 and 900",
		`Invalid value: "ftp://x": must be a valid http:// or https:// URL`:          "must be a valid http:// or https:// URL",
		`Forbidden: plan limit reached: 3 of 3 monitors (ENTITLEMENT_LIMIT_REACHED)`: "plan limit reached: 3 of 3 monitors (ENTITLEMENT_LIMIT_REACHED)",
		`Required value: required for http monitors`:                                 "required for http monitors",
		`Unsupported value: "mars-1": supported values: "eu-1", "us-1"`:              `supported values: "eu-1", "us-1"`,
		`plain message`: "plain message",
	} {
		if got := stripCauseType(in); got != want {
			t.Errorf("stripCauseType(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseCursorKeepsMicroseconds(t *testing.T) {
	for in, want := range map[string]string{
		"2026-03-01T12:00:04.123457Z": "2026-03-01T12:00:04.123457Z",
		"2026-03-01T12:00:04.123457":  "2026-03-01T12:00:04.123457Z",
		"2026-03-01T12:00:04Z":        "2026-03-01T12:00:04.000000Z",
		"2026-03-01T12:00:04.5":       "2026-03-01T12:00:04.500000Z",
	} {
		got, ok := parseCursor(in)
		if !ok || isoTime(got) != want {
			t.Errorf("parseCursor(%q) = %v %v, want %s", in, isoTime(got), ok, want)
		}
	}
	for _, bad := range []string{"", "2026-03-01", "2026-03-01T12:00:04.1234567Z", "2026-03-01T12:00:04+02:00", "yesterday"} {
		if _, ok := parseCursor(bad); ok {
			t.Errorf("parseCursor(%q) accepted", bad)
		}
	}
}

func TestLimiterFixedWindow(t *testing.T) {
	l := newLimiter("t", 3, time.Minute, perIP, false)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 3 {
		d := l.take("a", t0.Add(time.Duration(i)*time.Second))
		if !d.allowed || d.remaining != 2-i {
			t.Fatalf("take %d = %+v", i, d)
		}
	}
	d := l.take("a", t0.Add(10*time.Second))
	if d.allowed || d.remaining != 0 || d.reset != 50*time.Second {
		t.Fatalf("fourth take = %+v, want refused with 50s reset", d)
	}
	if d := l.take("b", t0.Add(10*time.Second)); !d.allowed {
		t.Fatalf("other key refused: %+v", d)
	}
	if d := l.take("a", t0.Add(time.Minute)); !d.allowed || d.remaining != 2 {
		t.Fatalf("new window = %+v", d)
	}
}

func TestObjectNamePrefix(t *testing.T) {
	for in, want := range map[string]string{"Shop API": "shop-api-", "  ": "monitor-", "123 go": "monitor-123-go-", "Ünïcode!": "n-code-"} {
		if got := objectNamePrefix(in, "monitor"); got != want {
			t.Errorf("objectNamePrefix(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestScoreFlakiness(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	from := now.Add(-7 * 24 * time.Hour)
	series := func(region string, n int, down func(i int) bool) []store.Check {
		var out []store.Check
		for i := range n {
			st := store.StatusUp
			if down(i) {
				st = store.StatusDown
			}
			out = append(out, store.Check{Region: region, CheckedAt: now.Add(-time.Duration(i+1) * time.Hour), Status: st})
		}
		return out
	}
	never := func(int) bool { return false }
	resolved := func(start time.Time, d time.Duration) store.Incident {
		end := start.Add(d)
		return store.Incident{StartedAt: start, ResolvedAt: &end}
	}
	for _, tc := range []struct {
		name                  string
		checks                []store.Check
		incidents             []store.Incident
		wantScore             *int
		wantFlips, wantUnconf int
		wantShort             int
		wantLevel             string
	}{
		{name: "no data", wantLevel: "unknown"},
		{name: "steady", checks: series("eu-1", 100, never), wantScore: ptrTo(0), wantLevel: "stable"},
		{name: "blocked checks are ignored", checks: append(series("eu-1", 10, never),
			store.Check{Region: "eu-1", CheckedAt: now.Add(-90 * time.Minute), Status: store.StatusBlocked}), wantScore: ptrTo(0), wantLevel: "stable"},
		{name: "one unconfirmed blip", checks: series("eu-1", 100, func(i int) bool { return i == 50 }),
			wantFlips: 2, wantUnconf: 1, wantScore: ptrTo(5), wantLevel: "stable"},
		{name: "a confirmed outage is not unconfirmed", checks: series("eu-1", 100, func(i int) bool { return i == 50 }),
			incidents: []store.Incident{resolved(now.Add(-52*time.Hour), 3*time.Hour)}, wantFlips: 2, wantScore: ptrTo(3), wantLevel: "stable"},
		{name: "saturated", checks: series("eu-1", 168, func(i int) bool { return i%2 == 0 }),
			incidents: []store.Incident{resolved(now.Add(-200*time.Hour), time.Minute), resolved(now.Add(-5*time.Hour), time.Minute),
				resolved(now.Add(-6*time.Hour), 2*time.Minute), resolved(now.Add(-7*time.Hour), time.Minute)},
			wantFlips: 167, wantUnconf: 82, wantShort: 3, wantScore: ptrTo(100), wantLevel: "high"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := scoreFlakiness(from, now, tc.checks, tc.incidents)
			if (got.Score == nil) != (tc.wantScore == nil) || (got.Score != nil && *got.Score != *tc.wantScore) {
				t.Errorf("score = %v, want %v (%+v)", deref(intStr(got.Score)), deref(intStr(tc.wantScore)), got)
			}
			if got.StateFlips != tc.wantFlips || got.UnconfirmedFailures != tc.wantUnconf || got.ShortIncidents != tc.wantShort || got.Level != tc.wantLevel {
				t.Errorf("got flips %d unconfirmed %d short %d level %s, want %d %d %d %s", got.StateFlips, got.UnconfirmedFailures,
					got.ShortIncidents, got.Level, tc.wantFlips, tc.wantUnconf, tc.wantShort, tc.wantLevel)
			}
		})
	}
}

func intStr(p *int) *string {
	if p == nil {
		return nil
	}
	s := strconv.Itoa(*p)
	return &s
}

func TestHealthScore(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	from := now.Add(-reliabilityWindow)
	inc := func(ago, d time.Duration) store.Incident {
		start := now.Add(-ago)
		end := start.Add(d)
		return store.Incident{StartedAt: start, ResolvedAt: &end}
	}
	f := func(v float64) *float64 { return &v }
	for _, tc := range []struct {
		name string
		in   healthInput
		want *int
	}{
		{name: "no data", in: healthInput{}},
		{name: "perfect", in: healthInput{Uptime30d: f(100)}, want: ptrTo(100)},
		{name: "three nines, one quick incident", in: healthInput{Uptime30d: f(99.9),
			Incidents: incidentFigures(from, now, []store.Incident{inc(time.Hour, 2*time.Minute)})}, want: ptrTo(98)},
		{name: "two nines", in: healthInput{Uptime30d: f(99)}, want: ptrTo(81)},
		{name: "slow repairs", in: healthInput{Uptime30d: f(100),
			Incidents: incidentFigures(from, now, []store.Incident{inc(time.Hour, 3*time.Hour), inc(2*time.Hour, 3*time.Hour)})}, want: ptrTo(76)},
		{name: "budget half spent", in: healthInput{Uptime30d: f(100), BudgetRemaining: f(50)}, want: ptrTo(90)},
		{name: "burning fast", in: healthInput{Uptime30d: f(100), BudgetRemaining: f(50), BurningFast: true}, want: ptrTo(80)},
		{name: "open incident caps at 50", in: healthInput{Uptime30d: f(100),
			Incidents: incidentFigures(from, now, []store.Incident{{StartedAt: now.Add(-time.Minute)}})}, want: ptrTo(50)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := healthScore(tc.in)
			if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
				t.Errorf("healthScore = %v, want %v", deref(intStr(got)), deref(intStr(tc.want)))
			}
		})
	}
}

func TestIncidentFigures(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	from := now.Add(-10 * time.Hour)
	end := func(t time.Time) *time.Time { return &t }
	st := incidentFigures(from, now, []store.Incident{
		{StartedAt: from.Add(-time.Hour), ResolvedAt: end(from.Add(time.Hour))}, // before the window: downtime only
		{StartedAt: now.Add(-5 * time.Hour), ResolvedAt: end(now.Add(-4 * time.Hour))},
		{StartedAt: now.Add(-time.Hour)},
	})
	if st.Count != 2 || st.Resolved != 1 || !st.Open || st.Downtime != 3*time.Hour {
		t.Fatalf("figures = %+v", st)
	}
	if got := *st.mttr(); got != 3600 {
		t.Errorf("mttr = %v, want 3600", got)
	}
	if got := *st.mtbf(); got != 7*3600/2 {
		t.Errorf("mtbf = %v, want %v", got, 7*3600/2)
	}
}

func TestSLOStateName(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	cond := func(typ string) []metav1.Condition {
		return []metav1.Condition{{Type: typ, Status: metav1.ConditionTrue}}
	}
	off := false
	for _, tc := range []struct {
		name string
		spec monv1.SLOSpec
		st   monv1.SLOStatus
		want string
	}{
		{"pending", monv1.SLOSpec{TargetPercentage: 99}, monv1.SLOStatus{}, "pending"},
		{"disabled", monv1.SLOSpec{TargetPercentage: 99, Enabled: &off}, monv1.SLOStatus{CurrentSLI: f(50)}, "disabled"},
		{"met", monv1.SLOSpec{TargetPercentage: 99}, monv1.SLOStatus{CurrentSLI: f(99.5)}, "met"},
		{"breaching", monv1.SLOSpec{TargetPercentage: 99}, monv1.SLOStatus{CurrentSLI: f(98)}, "breaching"},
		{"exhausted", monv1.SLOSpec{TargetPercentage: 99}, monv1.SLOStatus{CurrentSLI: f(98), Conditions: cond(monv1.SLOConditionBudgetExhausted)}, "budget_exhausted"},
		{"fast", monv1.SLOSpec{TargetPercentage: 99}, monv1.SLOStatus{CurrentSLI: f(99.5), Conditions: cond(monv1.SLOConditionBurningFast)}, "burning_fast"},
		{"slow", monv1.SLOSpec{TargetPercentage: 99}, monv1.SLOStatus{CurrentSLI: f(99.5), Conditions: cond(monv1.SLOConditionBurningSlow)}, "burning_slow"},
	} {
		if got := sloStateName(&monv1.SLO{Spec: tc.spec, Status: tc.st}); got != tc.want {
			t.Errorf("%s: sloStateName = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestPlanFingerprint(t *testing.T) {
	a := &monv1.MonitorSpec{Name: "web", URL: "https://example.com", IntervalSeconds: 60, Key: "web"}
	b := a.DeepCopy()
	b.IntervalSeconds = 120
	diff := diffViews(managedView(a), managedView(b))
	if len(diff) != 1 || diff[0].Field != "interval_seconds" {
		t.Fatalf("diff = %+v", diff)
	}
	id := "uid-1"
	plan := func(d []fieldChange) []*planChange {
		return []*planChange{{Action: actionUpdate, Key: "web", MonitorID: &id, Diff: d}, {Action: actionNoop, Key: "db", MonitorID: &id}}
	}
	if fingerprint(plan(diff)) != fingerprint(plan(diffViews(managedView(a), managedView(b)))) {
		t.Error("the same plan must hash the same")
	}
	c := a.DeepCopy()
	c.IntervalSeconds = 300
	if fingerprint(plan(diff)) == fingerprint(plan(diffViews(managedView(a), managedView(c)))) {
		t.Error("a different target value must change the fingerprint")
	}
	if fingerprint(plan(nil)) == fingerprint([]*planChange{{Action: actionDelete, Key: "web", MonitorID: &id}}) {
		t.Error("a different action must change the fingerprint")
	}
	for k, ok := range map[string]bool{"web": true, "team/api:v1": true, "a.b_c-d": true, "-x": false, "": false, "has space": false, "x%2F": false} {
		if validKey(k) != ok {
			t.Errorf("validKey(%q) = %v", k, !ok)
		}
	}
}

func TestSnoozeUntil(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	b := snoozeBody{Minutes: nullable[int]{Set: true, V: 30}}
	if got, errs := b.snoozeUntil(now); len(errs) > 0 || !got.Equal(now.Add(30*time.Minute)) {
		t.Errorf("minutes: %v %v", got, errs)
	}
	b = snoozeBody{Until: nullable[string]{Set: true, V: "2026-05-01T14:00:00Z"}}
	if got, errs := b.snoozeUntil(now); len(errs) > 0 || !got.Equal(now.Add(2*time.Hour)) {
		t.Errorf("until: %v %v", got, errs)
	}
	for _, bad := range []snoozeBody{{}, {Minutes: nullable[int]{Set: true, V: 0}}, {Until: nullable[string]{Set: true, V: "2026-04-01T00:00:00Z"}},
		{Until: nullable[string]{Set: true, V: "2026-05-01T14:00:00Z"}, Minutes: nullable[int]{Set: true, V: 5}}} {
		if _, errs := bad.snoozeUntil(now); len(errs) == 0 {
			t.Errorf("%+v: expected a validation error", bad)
		}
	}
}
