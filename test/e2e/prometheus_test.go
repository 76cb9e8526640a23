//go:build e2e

package e2e

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/yaml"
)

// envPrometheus names the Prometheus server binary (hack/prom-binary.sh)
// for the re-executed test binary.
const envPrometheus = "UPTIME_E2E_PROMETHEUS"

// promSA is the ServiceAccount whose token the suite's Prometheus presents
// to the manager's metrics endpoint; the chart binds it to the
// metrics-reader ClusterRole (metrics.readerSubjects in chartValues).
const promSA = "e2e-prometheus"

// prometheus is a real Prometheus server, built from its Go module, that the
// suite runs inside the node's network namespace (where Pod IPs are
// reachable), configured from the ServiceMonitor, PodMonitor and
// PrometheusRule the chart created, as the Prometheus Operator would.
type prometheus struct {
	cmd  *exec.Cmd
	base string
	dir  string
}

// startPrometheus writes the configuration and starts the server.
func startPrometheus(dir string) *prometheus {
	GinkgoHelper()
	bin := os.Getenv(envPrometheus)
	Expect(bin).NotTo(BeEmpty(), "no Prometheus binary (%s)", envPrometheus)
	token := mustKubectl("-n", workNS, "create", "token", promSA, "--duration=2h")
	tokenFile := filepath.Join(dir, "token")
	Expect(os.WriteFile(tokenFile, []byte(strings.TrimSpace(token)), 0o600)).To(Succeed())

	var scrape []map[string]any
	for _, sm := range listObjects("servicemonitors") {
		scrape = append(scrape, serviceMonitorJobs(sm, tokenFile)...)
	}
	for _, pm := range listObjects("podmonitors") {
		scrape = append(scrape, podMonitorJobs(pm, dir)...)
	}
	Expect(scrape).To(HaveLen(2), "one job for the manager's ServiceMonitor, one for the agents' PodMonitor")
	var groups []any
	for _, pr := range listObjects("prometheusrules") {
		groups = append(groups, dig(pr, "spec", "groups").([]any)...)
	}
	Expect(groups).NotTo(BeEmpty(), "the chart's PrometheusRule")
	rules, err := yaml.Marshal(map[string]any{"groups": groups})
	Expect(err).NotTo(HaveOccurred())
	Expect(os.WriteFile(filepath.Join(dir, "rules.yaml"), rules, 0o600)).To(Succeed())
	config, err := yaml.Marshal(map[string]any{
		"global":         map[string]any{"scrape_interval": "10s", "evaluation_interval": "5s"},
		"rule_files":     []string{filepath.Join(dir, "rules.yaml")},
		"scrape_configs": scrape,
	})
	Expect(err).NotTo(HaveOccurred())
	Expect(os.WriteFile(filepath.Join(dir, "prometheus.yml"), config, 0o600)).To(Succeed())
	GinkgoWriter.Printf("prometheus.yml:\n%s\n", config)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	addr := ln.Addr().String()
	Expect(ln.Close()).To(Succeed())
	log, err := os.Create(filepath.Join(dir, "prometheus.log"))
	Expect(err).NotTo(HaveOccurred())
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+addr)
	cmd.Stdout, cmd.Stderr = log, log
	Expect(cmd.Start()).To(Succeed())
	p := &prometheus{cmd: cmd, base: "http://" + addr, dir: dir}
	Eventually(func() int {
		code, _, _ := httpDo("GET", p.base+"/-/ready", nil)
		return code
	}, time.Minute, time.Second).Should(Equal(200), "Prometheus ready (log: %s)", log.Name())
	return p
}

func (p *prometheus) stop() {
	if p != nil && p.cmd.Process != nil {
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
		_ = os.RemoveAll(p.dir)
	}
}

// api GETs a Prometheus HTTP API path and decodes its data.
func (p *prometheus) api(path string, data any) error {
	code, body, err := httpDo("GET", p.base+path, nil)
	if err != nil {
		return err
	}
	if code != 200 {
		return fmt.Errorf("GET %s: %d %s", path, code, body)
	}
	var answer struct {
		Status string          `json:"status"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &answer); err != nil {
		return err
	}
	if answer.Status != "success" {
		return fmt.Errorf("GET %s: %s", path, body)
	}
	return json.Unmarshal(answer.Data, data)
}

// promSample is one series of an instant query.
type promSample struct {
	Metric map[string]string `json:"metric"`
	Value  []any             `json:"value"`
}

func (p *prometheus) query(q string) ([]promSample, error) {
	var data struct {
		Result []promSample `json:"result"`
	}
	err := p.api("/api/v1/query?query="+url.QueryEscape(q), &data)
	return data.Result, err
}

// promTarget is an active scrape target.
type promTarget struct {
	Labels    map[string]string `json:"labels"`
	Health    string            `json:"health"`
	LastError string            `json:"lastError"`
}

func (p *prometheus) targets() ([]promTarget, error) {
	var data struct {
		Active []promTarget `json:"activeTargets"`
	}
	err := p.api("/api/v1/targets?state=active", &data)
	return data.Active, err
}

// promAlert is an alert of the rule evaluation.
type promAlert struct {
	Labels map[string]string `json:"labels"`
	State  string            `json:"state"`
}

func (p *prometheus) alerts() ([]promAlert, error) {
	var data struct {
		Alerts []promAlert `json:"alerts"`
	}
	err := p.api("/api/v1/alerts", &data)
	return data.Alerts, err
}

// listObjects lists the release namespace's objects of a Prometheus
// Operator kind.
func listObjects(resource string) []map[string]any {
	GinkgoHelper()
	var list struct {
		Items []map[string]any `json:"items"`
	}
	Expect(json.Unmarshal([]byte(mustKubectl("-n", ns, "get", resource+".monitoring.coreos.com", "-o", "json")), &list)).To(Succeed())
	return list.Items
}

// dig walks nested maps.
func dig(obj map[string]any, path ...string) any {
	var cur any = obj
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}

func str(obj map[string]any, path ...string) string {
	s, _ := dig(obj, path...).(string)
	return s
}

var unsafeLabel = regexp.MustCompile(`[^a-zA-Z0-9_]`)

// selectorRelabels keeps the targets whose object (service or pod, by meta
// label prefix) matches a label selector, as the Prometheus Operator does.
func selectorRelabels(prefix string, selector map[string]any) []map[string]any {
	var out []map[string]any
	matchLabels, _ := selector["matchLabels"].(map[string]any)
	keys := make([]string, 0, len(matchLabels))
	for k := range matchLabels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		l := unsafeLabel.ReplaceAllString(k, "_")
		out = append(out, map[string]any{"action": "keep",
			"source_labels": []string{prefix + "_label_" + l, prefix + "_labelpresent_" + l},
			"regex":         "(" + regexp.QuoteMeta(fmt.Sprint(matchLabels[k])) + ");true"})
	}
	exprs, _ := selector["matchExpressions"].([]any)
	for _, e := range exprs {
		e := e.(map[string]any)
		l := unsafeLabel.ReplaceAllString(fmt.Sprint(e["key"]), "_")
		var values []string
		for _, v := range asSlice(e["values"]) {
			values = append(values, regexp.QuoteMeta(fmt.Sprint(v)))
		}
		switch e["operator"] {
		case "Exists":
			out = append(out, map[string]any{"action": "keep", "source_labels": []string{prefix + "_labelpresent_" + l}, "regex": "true"})
		case "DoesNotExist":
			out = append(out, map[string]any{"action": "drop", "source_labels": []string{prefix + "_labelpresent_" + l}, "regex": "true"})
		case "In":
			out = append(out, map[string]any{"action": "keep", "source_labels": []string{prefix + "_label_" + l, prefix + "_labelpresent_" + l},
				"regex": "(" + strings.Join(values, "|") + ");true"})
		case "NotIn":
			out = append(out, map[string]any{"action": "drop", "source_labels": []string{prefix + "_label_" + l, prefix + "_labelpresent_" + l},
				"regex": "(" + strings.Join(values, "|") + ");true"})
		default:
			Fail(fmt.Sprintf("selector operator %v", e["operator"]))
		}
	}
	return out
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

// relabelings turns a monitor's relabelings (camelCase) into Prometheus's.
func relabelings(v any) []map[string]any {
	var out []map[string]any
	for _, r := range asSlice(v) {
		r := r.(map[string]any)
		c := map[string]any{}
		for from, to := range map[string]string{"sourceLabels": "source_labels", "targetLabel": "target_label",
			"regex": "regex", "replacement": "replacement", "separator": "separator", "modulus": "modulus"} {
			if x, ok := r[from]; ok {
				c[to] = x
			}
		}
		if a, ok := r["action"].(string); ok {
			c["action"] = strings.ToLower(a)
		}
		out = append(out, c)
	}
	return out
}

// serviceMonitorJobs is one scrape job per ServiceMonitor endpoint, through
// EndpointSlices. bearerTokenFile names a path inside the Prometheus Pod;
// here the suite's own token file stands for it.
func serviceMonitorJobs(sm map[string]any, tokenFile string) []map[string]any {
	var jobs []map[string]any
	for i, e := range asSlice(dig(sm, "spec", "endpoints")) {
		e := e.(map[string]any)
		port := fmt.Sprint(e["port"])
		relabel := selectorRelabels("__meta_kubernetes_service", dig(sm, "spec", "selector").(map[string]any))
		relabel = append(relabel,
			map[string]any{"action": "keep", "source_labels": []string{"__meta_kubernetes_endpointslice_port_name"}, "regex": port},
			map[string]any{"source_labels": []string{"__meta_kubernetes_namespace"}, "target_label": "namespace"},
			map[string]any{"source_labels": []string{"__meta_kubernetes_service_name"}, "target_label": "service"},
			map[string]any{"source_labels": []string{"__meta_kubernetes_pod_name"}, "target_label": "pod"},
			map[string]any{"source_labels": []string{"__meta_kubernetes_service_name"}, "target_label": "job"},
			map[string]any{"target_label": "endpoint", "replacement": port})
		relabel = append(relabel, relabelings(e["relabelings"])...)
		job := map[string]any{
			"job_name":        fmt.Sprintf("serviceMonitor/%s/%s/%d", str(sm, "metadata", "namespace"), str(sm, "metadata", "name"), i),
			"honor_labels":    e["honorLabels"] == true,
			"metrics_path":    e["path"],
			"scheme":          e["scheme"],
			"relabel_configs": relabel,
			"kubernetes_sd_configs": []any{map[string]any{"role": "endpointslice", "kubeconfig_file": os.Getenv("KUBECONFIG"),
				"namespaces": map[string]any{"names": dig(sm, "spec", "namespaceSelector", "matchNames")}}},
		}
		if e["scheme"] == nil {
			job["scheme"] = "http"
		}
		if e["path"] == nil {
			job["metrics_path"] = "/metrics"
		}
		if skip, _ := dig(e, "tlsConfig", "insecureSkipVerify").(bool); skip {
			job["tls_config"] = map[string]any{"insecure_skip_verify": true}
		}
		if e["bearerTokenFile"] != nil {
			job["authorization"] = map[string]any{"credentials_file": tokenFile}
		}
		jobs = append(jobs, job)
	}
	return jobs
}

// podMonitorJobs is one scrape job per PodMonitor endpoint.
func podMonitorJobs(pm map[string]any, dir string) []map[string]any {
	var jobs []map[string]any
	name := str(pm, "metadata", "namespace") + "/" + str(pm, "metadata", "name")
	for i, e := range asSlice(dig(pm, "spec", "podMetricsEndpoints")) {
		e := e.(map[string]any)
		port := fmt.Sprint(e["port"])
		relabel := selectorRelabels("__meta_kubernetes_pod", dig(pm, "spec", "selector").(map[string]any))
		relabel = append(relabel,
			map[string]any{"action": "keep", "source_labels": []string{"__meta_kubernetes_pod_container_port_name"}, "regex": port},
			map[string]any{"source_labels": []string{"__meta_kubernetes_namespace"}, "target_label": "namespace"},
			map[string]any{"source_labels": []string{"__meta_kubernetes_pod_container_name"}, "target_label": "container"},
			map[string]any{"source_labels": []string{"__meta_kubernetes_pod_name"}, "target_label": "pod"},
			map[string]any{"target_label": "job", "replacement": name},
			map[string]any{"target_label": "endpoint", "replacement": port})
		relabel = append(relabel, relabelings(e["relabelings"])...)
		job := map[string]any{
			"job_name":        fmt.Sprintf("podMonitor/%s/%d", name, i),
			"honor_labels":    e["honorLabels"] == true,
			"metrics_path":    e["path"],
			"scheme":          e["scheme"],
			"relabel_configs": relabel,
			"kubernetes_sd_configs": []any{map[string]any{"role": "pod", "kubeconfig_file": os.Getenv("KUBECONFIG"),
				"namespaces": map[string]any{"names": dig(pm, "spec", "namespaceSelector", "matchNames")}}},
		}
		if e["scheme"] == nil {
			job["scheme"] = "http"
		}
		if e["path"] == nil {
			job["metrics_path"] = "/metrics"
		}
		if skip, _ := dig(e, "tlsConfig", "insecureSkipVerify").(bool); skip {
			job["tls_config"] = map[string]any{"insecure_skip_verify": true}
		}
		// A token from a Secret, as the Prometheus Operator reads it.
		if secret := str(e, "authorization", "credentials", "name"); secret != "" {
			key := str(e, "authorization", "credentials", "key")
			token := mustKubectl("-n", str(pm, "metadata", "namespace"), "get", "secret", secret,
				"-o", "jsonpath={.data."+key+"}")
			raw, err := base64.StdEncoding.DecodeString(token)
			Expect(err).NotTo(HaveOccurred())
			file := filepath.Join(dir, "podmonitor-"+secret)
			Expect(os.WriteFile(file, raw, 0o600)).To(Succeed())
			job["authorization"] = map[string]any{"type": "Bearer", "credentials_file": file}
		}
		jobs = append(jobs, job)
	}
	return jobs
}

// expectScraped waits until Prometheus scrapes the manager and one agent
// per region, and the per-monitor series of monitor show it up everywhere.
func expectScraped(p *prometheus, regions ...string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		ts, err := p.targets()
		g.Expect(err).NotTo(HaveOccurred())
		var manager, agents []string
		for _, t := range ts {
			g.Expect(t.Health).To(Equal("up"), "target %v: %s", t.Labels, t.LastError)
			switch t.Labels["job"] {
			case release + "-metrics":
				manager = append(manager, t.Labels["pod"])
			case ns + "/" + release + "-probe":
				agents = append(agents, t.Labels["region"])
			}
		}
		sort.Strings(agents)
		g.Expect(manager).To(HaveLen(1))
		g.Expect(agents).To(Equal(regions))
	}, 2*time.Minute, 5*time.Second).Should(Succeed())
	Eventually(func(g Gomega) {
		up, err := p.query(fmt.Sprintf(`uptime_operator_monitor_up{namespace=%q, monitor=%q}`, workNS, monName))
		g.Expect(err).NotTo(HaveOccurred())
		var got []string
		for _, s := range up {
			g.Expect(s.Value[1]).To(Equal("1"), "%v", s.Metric)
			got = append(got, s.Metric["region"])
		}
		sort.Strings(got)
		g.Expect(got).To(Equal(regions))
		checks, err := p.query(`sum by (region) (uptime_probe_checks_total)`)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(checks).To(HaveLen(len(regions)))
	}, 2*time.Minute, 5*time.Second).Should(Succeed())
}

// expectAlertFiring waits until Prometheus fires alertname for monitor.
func expectAlertFiring(p *prometheus, alertname string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		alerts, err := p.alerts()
		g.Expect(err).NotTo(HaveOccurred())
		var states []string
		for _, a := range alerts {
			if a.Labels["alertname"] == alertname && a.Labels["namespace"] == workNS && a.Labels["monitor"] == monName {
				states = append(states, a.State)
			}
		}
		g.Expect(states).To(Equal([]string{"firing"}))
	}, 3*time.Minute, 5*time.Second).Should(Succeed())
}
