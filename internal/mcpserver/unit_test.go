package mcpserver

import (
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/reliability"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
)

var specTools = []string{
	"service_whoami", "service_list_regions", "service_monitor_summary", "service_list_monitors", "service_get_monitor",
	"service_get_check_results", "service_create_monitor", "service_update_monitor", "service_pause_monitor",
	"service_resume_monitor", "service_run_check", "service_delete_monitor", "service_list_incidents",
	"service_get_incident", "service_explain_incident", "service_acknowledge_incident", "service_resolve_incident",
	"service_add_incident_note", "service_list_status_pages", "service_get_status_page", "service_create_status_page",
	"service_update_status_page", "service_set_status_page_monitors", "service_delete_status_page",
	"service_uptime_report", "service_list_maintenance_windows",
}

var readTools = []string{
	"service_whoami", "service_list_regions", "service_monitor_summary", "service_list_monitors", "service_get_monitor",
	"service_get_check_results", "service_list_incidents", "service_get_incident", "service_explain_incident",
	"service_list_status_pages", "service_get_status_page", "service_uptime_report", "service_list_maintenance_windows",
}

var destructiveTools = []string{"service_delete_monitor", "service_set_status_page_monitors", "service_delete_status_page"}

func without(all []string, drop ...string) []string {
	var out []string
	for _, n := range all {
		if !slices.Contains(drop, n) {
			out = append(out, n)
		}
	}
	return out
}

func TestToolNamesPerMode(t *testing.T) {
	if got := ToolNames(Mode{Destructive: true}); !reflect.DeepEqual(got, specTools) {
		t.Fatalf("destructive mode tools = %v, want the 26 of the spec", got)
	}
	if got := ToolNames(Mode{}); !reflect.DeepEqual(got, without(specTools, destructiveTools...)) {
		t.Errorf("default mode tools = %v", got)
	}
	if got := ToolNames(Mode{ReadOnly: true}); !reflect.DeepEqual(got, readTools) {
		t.Errorf("read-only tools = %v", got)
	}
	if got := ToolNames(Mode{ReadOnly: true, Destructive: true}); !reflect.DeepEqual(got, readTools) {
		t.Errorf("read-only must win over destructive, got %v", got)
	}
	for _, tl := range allTools() {
		if !strings.Contains(tl.name, "service_") {
			t.Errorf("tool %s lacks the prefix", tl.name)
		}
	}
}

func TestTruthy(t *testing.T) {
	for _, v := range []string{"true", "TRUE", "1", "yes", "on", " On "} {
		if !Truthy(v) {
			t.Errorf("Truthy(%q) = false", v)
		}
	}
	for _, v := range []string{"", "false", "0", "no", "off", "y", "enabled"} {
		if Truthy(v) {
			t.Errorf("Truthy(%q) = true", v)
		}
	}
}

func TestRequestMode(t *testing.T) {
	h := func(kv ...string) http.Header {
		out := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			out.Set(kv[i], kv[i+1])
		}
		return out
	}
	cases := []struct {
		name string
		opts Options
		h    http.Header
		want Mode
	}{
		{"default", Options{}, h(), Mode{}},
		{"env read-only", Options{ReadOnly: true}, h(), Mode{ReadOnly: true}},
		{"header narrows to read-only", Options{}, h(HeaderReadOnly, "yes"), Mode{ReadOnly: true}},
		{"header cannot undo env read-only", Options{ReadOnly: true}, h(HeaderReadOnly, "false"), Mode{ReadOnly: true}},
		{"env destructive", Options{AllowDestructive: true}, h(), Mode{Destructive: true}},
		{"read-only wins", Options{ReadOnly: true, AllowDestructive: true}, h(), Mode{ReadOnly: true}},
		{"destructive header ignored without operator switch", Options{}, h(HeaderAllowDestructive, "true"), Mode{}},
		{"destructive header with operator switch", Options{AllowDestructiveHeader: true}, h(HeaderAllowDestructive, "on"), Mode{Destructive: true}},
		{"destructive header vs read-only header", Options{AllowDestructiveHeader: true}, h(HeaderAllowDestructive, "1", HeaderReadOnly, "1"), Mode{ReadOnly: true}},
		{"header narrows env destructive off", Options{AllowDestructive: true}, h(HeaderAllowDestructive, "false"), Mode{}},
		{"hosted never destructive", Options{AllowDestructive: true, AllowDestructiveHeader: true, hosted: true}, h(HeaderAllowDestructive, "true"), Mode{}},
		{"hosted read-only header", Options{hosted: true}, h(HeaderReadOnly, "true"), Mode{ReadOnly: true}},
	}
	for _, tc := range cases {
		if got := tc.opts.requestMode(tc.h); got != tc.want {
			t.Errorf("%s: mode = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func TestWriteLimits(t *testing.T) {
	clk := &fakeClock{t: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	l := newWriteLimiter(&Options{MaxWritesPerMinute: 3, MaxWritesPerHour: 5, MaxPausesPerHour: 2}, clk.now)
	for i := range 3 {
		if err := l.allow("a", actionWrite, false); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	err := l.allow("a", actionWrite, false)
	if err == nil || !strings.Contains(err.Error(), "session limit of this MCP server") {
		t.Fatalf("4th write in a minute: %v", err)
	}
	if err := l.allow("b", actionWrite, false); err != nil {
		t.Fatalf("another session has its own limit: %v", err)
	}
	clk.t = clk.t.Add(time.Minute)
	for i := range 2 {
		if err := l.allow("a", actionWrite, false); err != nil {
			t.Fatalf("write after a minute %d: %v", i, err)
		}
	}
	if err := l.allow("a", actionWrite, false); err == nil || !strings.Contains(err.Error(), "per hour") {
		t.Fatalf("6th write in an hour: %v", err)
	}
	clk.t = clk.t.Add(time.Hour)
	// Pauses: 2 per hour without destructive mode, unlimited with it.
	for i := range 2 {
		if err := l.allow("a", actionPause, false); err != nil {
			t.Fatalf("pause %d: %v", i, err)
		}
	}
	if err := l.allow("a", actionPause, false); err == nil || !strings.Contains(err.Error(), "pauses") {
		t.Fatalf("3rd pause: %v", err)
	}
	if err := l.allow("a", actionPause, true); err != nil {
		t.Fatalf("pause in destructive mode: %v", err)
	}
}

func TestDefaultLimits(t *testing.T) {
	l := newWriteLimiter(&Options{}, time.Now)
	if l.perMin.max != 20 || l.perHour.max != 200 || l.pauses.max != 10 || l.runCheck.max != 30 {
		t.Fatalf("defaults = %d %d %d %d", l.perMin.max, l.perHour.max, l.pauses.max, l.runCheck.max)
	}
}

func TestRedactAndRestore(t *testing.T) {
	stored := map[string]any{
		"method":    "POST",
		"headers":   map[string]any{"Authorization": "Bearer abc", "X-Env": "prod", "X-Ref": map[string]any{"secret_ref": map[string]any{"name": "s", "key": "k"}}},
		"body":      `{"q":1}`,
		"steps":     []any{map[string]any{"url": "https://a", "headers": map[string]any{"Cookie": "sid=1"}}},
		"tool_call": map[string]any{"name": "x", "arguments": map[string]any{"api_token": "tok", "n": 1.0}},
		"password":  "pw",
	}
	red := RedactConfig(stored)
	hs := red["headers"].(map[string]any)
	if hs["Authorization"] != Redacted || hs["X-Env"] != Redacted {
		t.Errorf("header values not redacted: %v", hs)
	}
	if _, ok := hs["X-Ref"].(map[string]any); !ok {
		t.Errorf("secret reference should stay visible: %v", hs["X-Ref"])
	}
	if red["steps"].([]any)[0].(map[string]any)["headers"].(map[string]any)["Cookie"] != Redacted {
		t.Errorf("step header not redacted")
	}
	if red["tool_call"].(map[string]any)["arguments"].(map[string]any)["api_token"] != Redacted || red["password"] != Redacted {
		t.Errorf("token/password not redacted: %v", red)
	}
	if red["method"] != "POST" || stored["headers"].(map[string]any)["Authorization"] != "Bearer abc" {
		t.Errorf("redaction changed other values or the input")
	}
	// Sending the redacted config back with one change keeps every secret.
	sent := RedactConfig(stored)
	sent["method"] = "GET"
	delete(sent, "body")
	out, err := replacementConfig(sent, stored)
	if err != nil {
		t.Fatal(err)
	}
	if out["headers"].(map[string]any)["Authorization"] != "Bearer abc" || out["password"] != "pw" ||
		out["steps"].([]any)[0].(map[string]any)["headers"].(map[string]any)["Cookie"] != "sid=1" {
		t.Errorf("stored values not restored: %v", out)
	}
	if out["method"] != "GET" {
		t.Errorf("changed value lost")
	}
	if v, ok := out["body"]; !ok || v != nil {
		t.Errorf("a key left out must be sent as null to replace the whole config, got %v", out["body"])
	}
	// [REDACTED] where nothing is stored is refused.
	if _, err := replacementConfig(map[string]any{"headers": map[string]any{"X-New": Redacted}}, stored); err == nil {
		t.Error("[REDACTED] without a stored value should be refused")
	}
	if got := redactURL("https://u:p@host/x"); got != "https://u:[REDACTED]@host/x" {
		t.Errorf("redactURL = %s", got)
	}
	if got := redactURL("https://host/x"); got != "https://host/x" {
		t.Errorf("redactURL = %s", got)
	}
}

func TestMatchMonitors(t *testing.T) {
	key := "shop-api"
	u := func(s string) *string { return &s }
	all := []restapi.Monitor{
		{ID: "1", Name: "Shop API", URL: u("https://shop.example.com/api"), Key: &key},
		{ID: "2", Name: "Shop web", URL: u("https://shop.example.com/")},
		{ID: "3", Name: "Blog", URL: u("https://blog.example.org")},
	}
	ids := func(ms []restapi.Monitor) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.ID)
		}
		return out
	}
	cases := map[string][]string{
		"shop api":    {"1"},      // exact name wins over fragments
		"shop-api":    {"1"},      // key
		"2":           {"2"},      // id
		"shop":        {"1", "2"}, // ambiguous
		"example.org": {"3"},      // URL fragment
		"nothing":     nil,
	}
	for q, want := range cases {
		if got := ids(MatchMonitors(all, q)); !reflect.DeepEqual(got, want) {
			t.Errorf("MatchMonitors(%q) = %v, want %v", q, got, want)
		}
	}
	var many []restapi.Monitor
	for i := range 15 {
		many = append(many, restapi.Monitor{ID: string(rune('a' + i)), Name: "api " + string(rune('a'+i))})
	}
	res := ambiguous(MatchMonitors(many, "api"))
	if res.Outcome != OutcomeAmbiguous || len(res.Candidates) != 10 || res.CandidatesTotal != 15 {
		t.Errorf("ambiguous = %+v", res)
	}
}

func TestMonitorOutcome(t *testing.T) {
	cases := []struct {
		x    explanation
		want string
	}{
		{explanation{State: "up", Voting: 3}, OutcomeHealthy},
		{explanation{State: "no_data"}, OutcomeNoData},
		{explanation{State: "unconfirmed_failure", Failing: 1, Voting: 3}, OutcomeFailingUnconfirmed},
		{explanation{State: "confirming", Failing: 2, Voting: 3}, OutcomeFailingUnconfirmed},
		{explanation{State: "last_mile", Failing: 1, Voting: 3}, OutcomeFailingUnconfirmed},
		// An incident state left over after a resolve falls back to counts.
		{explanation{State: "resolved", Voting: 2}, OutcomeHealthy},
		{explanation{State: "resolved"}, OutcomeNoData},
		{explanation{State: "incident_open", Failing: 1, Voting: 2}, OutcomeFailingUnconfirmed},
	}
	for _, tc := range cases {
		if got := monitorOutcome(&tc.x); got != tc.want {
			t.Errorf("monitorOutcome(%+v) = %s, want %s", tc.x, got, tc.want)
		}
	}
}

// TestReportHealth pins the uptime report to the one health score of
// docs/reliability.md, scaled to the report window.
func TestReportHealth(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	from := now.Add(-7 * 24 * time.Hour)
	iso := func(d time.Duration) string { return now.Add(-d).Format(time.RFC3339) }
	resolved := iso(2*time.Hour - 20*time.Minute)
	quick := []restapi.Incident{{MonitorID: "m", StartedAt: iso(2 * time.Hour), ResolvedAt: &resolved, DurationSeconds: 1200}}
	open := append(quick, restapi.Incident{MonitorID: "m", StartedAt: iso(time.Minute)})
	budget := func(fast bool) []sloReport {
		return []sloReport{{SLOTarget: restapi.SLOTarget{MonitorID: ptrTo("m"), IsEnabled: true, ErrorBudgetRemainingPercent: f(50)}, FastBurn: fast}}
	}
	for _, tc := range []struct {
		name      string
		checks    int
		incidents []restapi.Incident
		slos      []sloReport
		want      *int
	}{
		{name: "no checks, no score", checks: 0},
		{name: "perfect", checks: 100, want: ptrTo(100)},
		// 1 incident in 7 days: 1 - 1/(10*7/30) = 0.57; MTTR 20 min: 0.87.
		{name: "one 20-minute incident", checks: 100, incidents: quick, want: ptrTo(87)},
		{name: "open incident caps at 50", checks: 100, incidents: open, want: ptrTo(50)},
		{name: "half the error budget left", checks: 100, incidents: quick, slos: budget(false), want: ptrTo(79)},
		{name: "burning fast", checks: 100, incidents: quick, slos: budget(true), want: ptrTo(69)},
		{name: "disabled SLO is left out", checks: 100, incidents: quick,
			slos: []sloReport{{SLOTarget: restapi.SLOTarget{MonitorID: ptrTo("m"), IsEnabled: false, ErrorBudgetRemainingPercent: f(0)}}}, want: ptrTo(87)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fig := incidentStats(from, now, tc.incidents)
			rep := &uptimeReport{Days: 7, SLOs: tc.slos, Monitors: []monitorReport{{MonitorID: "m", UptimePercent: f(100),
				Checks: tc.checks, Incidents: fig.Count, MTTRSeconds: fig.MTTR()}}}
			reportHealth(rep, map[string]reliability.IncidentStats{"m": fig})
			got := rep.Monitors[0].HealthScore
			if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
				t.Errorf("health score = %v, want %v", fmtInt(got), fmtInt(tc.want))
			}
		})
	}
	fig := incidentStats(from, now, open)
	if fig.Count != 2 || fig.MTTR() == nil || *fig.MTTR() != 1200 || !fig.Open {
		t.Errorf("incident figures = %+v (MTTR %v), want 2 incidents, MTTR 1200 s (ongoing excluded), open", fig, fig.MTTR())
	}
	if br := burnRate(f(99.8), 99.9); br == nil || *br < 1.99 || *br > 2.01 {
		t.Errorf("burnRate = %v", br)
	}
}

func ptrTo[T any](v T) *T { return &v }

func fmtInt(p *int) string {
	if p == nil {
		return "<nil>"
	}
	return strconv.Itoa(*p)
}

func TestCheckAPIURL(t *testing.T) {
	for _, ok := range []string{"https://api.example.com", "http://localhost:8080", "http://127.0.0.1:8080", "http://[::1]:8080"} {
		if err := CheckAPIURL(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"http://api.example.com", "ftp://x", "not a url", "http://10.0.0.1"} {
		if err := CheckAPIURL(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

func TestPageUpdateBody(t *testing.T) {
	s := func(v string) *string { return &v }
	if _, err := pageUpdateBody(&updatePageIn{OtherFields: map[string]any{"custom_domain": "x"}}); err == nil {
		t.Error("unknown other_fields accepted")
	}
	if _, err := pageUpdateBody(&updatePageIn{LogoURL: s("http://x/logo.png")}); err == nil {
		t.Error("http logo accepted")
	}
	if _, err := pageUpdateBody(&updatePageIn{AccentColor: s("red")}); err == nil {
		t.Error("non-hex colour accepted")
	}
	b, err := pageUpdateBody(&updatePageIn{Title: s("T"), OtherFields: map[string]any{"show_response_times": true}})
	if err != nil || b["title"] != "T" || b["show_response_times"] != true {
		t.Errorf("body = %v, %v", b, err)
	}
	if _, err := pageUpdateBody(&updatePageIn{}); err == nil {
		t.Error("empty update accepted")
	}
}

func TestLoopbackURL(t *testing.T) {
	for addr, want := range map[string]string{"[::]:8080": "http://127.0.0.1:8080", "0.0.0.0:80": "http://127.0.0.1:80",
		":9000": "http://127.0.0.1:9000", "127.0.0.1:3000": "http://127.0.0.1:3000", "[::1]:1": "http://[::1]:1"} {
		if got := LoopbackURL(addr); got != want {
			t.Errorf("LoopbackURL(%s) = %s, want %s", addr, got, want)
		}
	}
}

// TestMonitorTypeArguments: the type argument of service_create_monitor
// enumerates monv1.MonitorTypes and its description and that of url name
// each type where the registry says (extension types, types with a url),
// so a type added to the registry needs no edit here.
func TestMonitorTypeArguments(t *testing.T) {
	var create *mcp.Tool
	for _, ts := range allTools() {
		if ts.name == "service_create_monitor" {
			create = ts.tool
		}
	}
	if create == nil {
		t.Fatal("no service_create_monitor tool")
	}
	props := create.InputSchema.(*jsonschema.Schema).Properties
	if got := props["type"].Enum; !slices.Equal(got, toAny(monitorTypes)) {
		t.Errorf("type enum %v, want monv1.MonitorTypes %v", got, monitorTypes)
	}
	typeDesc, urlDesc := props["type"].Description, props["url"].Description
	spec, _, _ := strings.Cut(typeDesc, "extension types")
	for _, r := range monv1.MonitorTypeRegistry {
		name := string(r.Type)
		if inSpec := strings.Contains(spec, name); !strings.Contains(typeDesc, name) || inSpec == r.Extension {
			t.Errorf("type description %q does not name %s (extension %v) in its place", typeDesc, name, r.Extension)
		}
		if strings.Contains(urlDesc, name) != (r.URL != monv1.URLNone) {
			t.Errorf("url description %q and the registry disagree on %s", urlDesc, name)
		}
	}
}
