// Command promtools holds the Prometheus checks of the Helm chart that
// need Prometheus's own packages. It is a module of its own, so that the
// operator's go.mod does not take on Prometheus's dependencies; promtool
// is built from the same go.mod (its `tool` line), at the version of the
// PromQL parser used here.
//
//	promtools lint-dashboard -names FILE DASHBOARD.json...
//	    Every query of the dashboards (panel targets and templating
//	    queries, Grafana variables replaced) must parse as PromQL and
//	    select only metric families listed in FILE (one name a line, as
//	    hack/metric-names prints them) or Prometheus's own "up".
//	promtools rule-file < RENDERED.yaml > RULES.yaml
//	    Writes the spec of the PrometheusRule among the rendered
//	    manifests as a Prometheus rule file, for `promtool test rules`.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"sigs.k8s.io/yaml"
)

func main() {
	if len(os.Args) < 2 {
		fatal(errors.New("usage: promtools lint-dashboard|rule-file ..."))
	}
	var err error
	switch os.Args[1] {
	case "lint-dashboard":
		err = lintDashboards(os.Args[2:])
	case "rule-file":
		err = ruleFile(os.Stdin, os.Stdout)
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "promtools:", err)
	os.Exit(1)
}

func lintDashboards(args []string) error {
	fs := flag.NewFlagSet("lint-dashboard", flag.ContinueOnError)
	namesFile := fs.String("names", "", "file with the exported metric family names, one a line")
	if err := fs.Parse(args); err != nil {
		return err
	}
	names, err := readNames(*namesFile)
	if err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return errors.New("lint-dashboard: no dashboard given")
	}
	var problems []string
	for _, path := range fs.Args() {
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		queries, err := dashboardQueries(raw)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", path, err))
			continue
		}
		if len(queries) == 0 {
			problems = append(problems, path+": no queries")
		}
		for _, q := range queries {
			for _, p := range lintQuery(q.expr, names) {
				problems = append(problems, fmt.Sprintf("%s: %s: %s", path, q.where, p))
			}
		}
		fmt.Printf("lint-dashboard: %s: %d queries checked\n", path, len(queries))
	}
	if len(problems) > 0 {
		return errors.New("dashboard problems:\n  " + strings.Join(problems, "\n  "))
	}
	return nil
}

func readNames(path string) (map[string]bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read -names: %w", err)
	}
	defer f.Close()
	names := map[string]bool{"up": true}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if n := strings.TrimSpace(sc.Text()); n != "" {
			names[n] = true
		}
	}
	if len(names) < 2 {
		return nil, fmt.Errorf("%s lists no metric names", path)
	}
	return names, sc.Err()
}

// query is a PromQL expression of a dashboard and where it sits.
type query struct{ where, expr string }

// dashboard is the part of a Grafana dashboard JSON model that holds
// queries: panels (rows nest theirs), their targets, and the templating
// variables.
type dashboard struct {
	Title      string  `json:"title"`
	UID        string  `json:"uid"`
	Panels     []panel `json:"panels"`
	Templating struct {
		List []struct {
			Name  string          `json:"name"`
			Type  string          `json:"type"`
			Query json.RawMessage `json:"query"`
		} `json:"list"`
	} `json:"templating"`
}

type panel struct {
	Title   string  `json:"title"`
	Type    string  `json:"type"`
	Panels  []panel `json:"panels"`
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
}

// labelValues matches a templating query label_values(EXPR, label).
var labelValues = regexp.MustCompile(`^\s*label_values\(\s*(.*?)\s*,\s*\w+\s*\)\s*$`)

func dashboardQueries(raw []byte) ([]query, error) {
	var d dashboard
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&d); err != nil {
		return nil, fmt.Errorf("not a dashboard JSON: %w", err)
	}
	if d.Title == "" || d.UID == "" {
		return nil, errors.New("the dashboard has no title or uid")
	}
	var out []query
	var walk func(ps []panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			walk(p.Panels)
			for _, t := range p.Targets {
				out = append(out, query{where: fmt.Sprintf("panel %q target %s", p.Title, t.RefID), expr: t.Expr})
			}
		}
	}
	walk(d.Panels)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q string
		if err := json.Unmarshal(v.Query, &q); err != nil {
			var obj struct {
				Query string `json:"query"`
			}
			if err := json.Unmarshal(v.Query, &obj); err != nil {
				return nil, fmt.Errorf("variable %s: query is neither a string nor an object", v.Name)
			}
			q = obj.Query
		}
		m := labelValues.FindStringSubmatch(q)
		if m == nil {
			return nil, fmt.Errorf("variable %s: query %q is not label_values(EXPR, label)", v.Name, q)
		}
		out = append(out, query{where: "variable " + v.Name, expr: m[1]})
	}
	return out, nil
}

// grafanaInterval matches Grafana's interval variables, which stand where
// PromQL wants a duration.
var grafanaInterval = regexp.MustCompile(`\$__(rate_interval|interval|range)\b|\$\{__(rate_interval|interval|range)\}`)

// lintQuery parses expr (Grafana variables replaced: intervals by a
// duration; others must sit inside label values) and checks the metric
// families it selects.
func lintQuery(expr string, names map[string]bool) []string {
	if strings.TrimSpace(expr) == "" {
		return []string{"empty query"}
	}
	e, err := parser.NewParser(parser.Options{}).ParseExpr(grafanaInterval.ReplaceAllString(expr, "5m"))
	if err != nil {
		return []string{fmt.Sprintf("%q does not parse: %v", expr, err)}
	}
	var problems []string
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		vs, ok := n.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		name := vs.Name
		for _, m := range vs.LabelMatchers {
			if m.Name == labels.MetricName && m.Type == labels.MatchEqual {
				name = m.Value
			}
		}
		if name == "" {
			problems = append(problems, fmt.Sprintf("%q selects no single metric name", vs.String()))
			return nil
		}
		if !exported(name, names) {
			problems = append(problems, fmt.Sprintf("metric %s is not exported by the product", name))
		}
		return nil
	})
	return problems
}

// exported reports whether name is a listed family or a series of a
// listed histogram or summary.
func exported(name string, names map[string]bool) bool {
	if names[name] {
		return true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok && names[base] {
			return true
		}
	}
	return false
}

// ruleFile copies the spec (groups) of the one PrometheusRule among the
// YAML documents of r to w.
func ruleFile(r io.Reader, w io.Writer) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	var found []byte
	for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(raw), -1) {
		var obj struct {
			Kind string          `json:"kind"`
			Spec json.RawMessage `json:"spec"`
		}
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			return fmt.Errorf("parse rendered manifests: %w", err)
		}
		if obj.Kind != "PrometheusRule" {
			continue
		}
		if found != nil {
			return errors.New("more than one PrometheusRule")
		}
		if found, err = yaml.JSONToYAML(obj.Spec); err != nil {
			return err
		}
	}
	if found == nil {
		return errors.New("no PrometheusRule among the rendered manifests")
	}
	_, err = w.Write(found)
	return err
}
