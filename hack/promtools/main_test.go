package main

import (
	"strings"
	"testing"
)

func TestLintQuery(t *testing.T) {
	names := map[string]bool{"up": true, "uptime_operator_monitor_response_seconds": true, "uptime_operator_monitor_up": true}
	for _, tc := range []struct {
		name, expr, problem string
	}{
		{"histogram series of a listed family", `histogram_quantile(0.95, sum by (le) (rate(uptime_operator_monitor_response_seconds_bucket{namespace=~"$namespace"}[$__rate_interval])))`, ""},
		{"a variable in a label value", `max(uptime_operator_monitor_up{monitor=~"${monitor}"})`, ""},
		{"a name no component exports", `sum(uptime_operator_monitor_upp)`, "metric uptime_operator_monitor_upp is not exported"},
		{"does not parse", `sum(uptime_operator_monitor_up`, "does not parse"},
		{"a variable outside a string", `sum(uptime_operator_monitor_up) > $threshold`, "does not parse"},
		{"no metric name", `{namespace="shop"}`, "selects no single metric name"},
		{"empty", ` `, "empty query"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Join(lintQuery(tc.expr, names), "; ")
			if tc.problem == "" && got != "" || tc.problem != "" && !strings.Contains(got, tc.problem) {
				t.Errorf("lintQuery(%q) = %q, want %q", tc.expr, got, tc.problem)
			}
		})
	}
}

func TestDashboardQueries(t *testing.T) {
	qs, err := dashboardQueries([]byte(`{"title": "t", "uid": "u",
		"panels": [{"type": "row", "title": "r", "panels": [{"title": "p", "targets": [{"refId": "A", "expr": "up"}]}]}],
		"templating": {"list": [{"name": "ns", "type": "query", "query": {"query": "label_values(uptime_operator_monitor_up, namespace)"}},
			{"name": "ds", "type": "datasource", "query": "prometheus"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 2 || qs[0].expr != "up" || qs[1].expr != "uptime_operator_monitor_up" {
		t.Errorf("queries = %+v, want the nested panel's and the variable's", qs)
	}
	if _, err := dashboardQueries([]byte(`{"title": "t", "uid": "u", "templating": {"list": [{"name": "x", "type": "query", "query": "query_result(up)"}]}}`)); err == nil {
		t.Errorf("a variable query other than label_values was accepted")
	}
}

func TestRuleFile(t *testing.T) {
	var out strings.Builder
	err := ruleFile(strings.NewReader("apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n---\napiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule\nspec:\n  groups:\n  - name: g\n    rules:\n    - alert: A\n      expr: up == 0\n"), &out)
	if err != nil {
		t.Fatal(err)
	}
	if want := "groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n"; out.String() != want {
		t.Errorf("rule file:\n%s\nwant:\n%s", out.String(), want)
	}
}
