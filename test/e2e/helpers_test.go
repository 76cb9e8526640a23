//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

// run runs a command and returns its combined output.
func run(name string, args ...string) (string, error) {
	return runIn("", name, args...)
}

// runIn runs a command with stdin and returns its combined output.
func runIn(stdin, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = repoRoot
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

func kubectl(args ...string) (string, error) { return run("kubectl", args...) }

func mustKubectl(args ...string) string {
	GinkgoHelper()
	out, err := kubectl(args...)
	Expect(err).NotTo(HaveOccurred())
	return out
}

func apply(manifest string) {
	GinkgoHelper()
	out, err := runIn(manifest, "kubectl", "apply", "-f", "-")
	Expect(err).NotTo(HaveOccurred(), out)
}

func helm(args ...string) (string, error) { return run("helm", args...) }

func mustHelm(args ...string) string {
	GinkgoHelper()
	out, err := helm(args...)
	Expect(err).NotTo(HaveOccurred())
	return out
}

// proved prints one line of what the suite showed, for the summary.
func proved(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	provedLines = append(provedLines, line)
	fmt.Fprintf(GinkgoWriter, "PROVED: %s\n", line)
	fmt.Fprintf(os.Stderr, "e2e: PROVED: %s\n", line)
}

var provedLines []string

// getMonitor reads a Monitor as kubectl shows it.
func getMonitor(ns, name string) (*monv1.Monitor, error) {
	out, err := kubectl("-n", ns, "get", "monitor", name, "-o", "json")
	if err != nil {
		return nil, err
	}
	var m monv1.Monitor
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		return nil, err
	}
	return &m, nil
}

// clusterIP returns a Service's cluster IP: the suite reaches Services by IP,
// because its own resolver is the host's and must not be asked.
func clusterIP(ns, name string) string {
	GinkgoHelper()
	ip := strings.TrimSpace(mustKubectl("-n", ns, "get", "svc", name, "-o", "jsonpath={.spec.clusterIP}"))
	Expect(ip).NotTo(BeEmpty())
	return ip
}

var httpClient = &http.Client{Timeout: 10 * time.Second}

func httpDo(method, url string, body []byte) (int, []byte, error) {
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// delivery is one request the receiver Pod got (test/e2e/testserver).
type delivery struct {
	ID       string `json:"id"`
	Verified bool   `json:"verified"`
	// Refused: the receiver was holding deliveries and answered 503.
	Refused bool `json:"refused"`
	Body    struct {
		Event      string  `json:"event"`
		IncidentID string  `json:"incident_id"`
		Resolution *string `json:"resolution"`
		Region     *string `json:"region"`
		Monitor    string  `json:"monitor_name"`
	} `json:"body"`
}

func deliveries(receiverIP string) ([]delivery, error) {
	code, body, err := httpDo("GET", "http://"+receiverIP+":8080/deliveries", nil)
	if err != nil {
		return nil, err
	}
	if code != 200 {
		return nil, fmt.Errorf("GET /deliveries: %d", code)
	}
	var ds []delivery
	return ds, json.Unmarshal(body, &ds)
}

// eventsFor returns the deliveries of one event for one incident (any
// incident when id is empty).
func eventsFor(ds []delivery, event, id string) []delivery {
	var out []delivery
	for _, d := range ds {
		if d.Body.Event == event && (id == "" || d.Body.IncidentID == id) {
			out = append(out, d)
		}
	}
	return out
}

// rawAPI calls the aggregated API through kube-apiserver as the admin, or
// as another user with --as.
func rawAPI(path string, as ...string) (string, error) {
	args := []string{"get", "--raw", "/apis/api.uptime-operator.io/v1" + path}
	for _, u := range as {
		args = append(args, "--as="+u)
	}
	return kubectl(args...)
}

// managerPods returns the names of the manager's ready Pods that are not
// being deleted.
func managerPods(ns string) []string {
	out, err := kubectl("-n", ns, "get", "pods", "-l", "app.kubernetes.io/component=manager", "-o", "json")
	if err != nil {
		return nil
	}
	var list corev1.PodList
	if json.Unmarshal([]byte(out), &list) != nil {
		return nil
	}
	var names []string
	for _, p := range list.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				names = append(names, p.Name)
			}
		}
	}
	return names
}

// waitRegionsOnline waits for both managed regions' probe Deployments to roll
// out and for `kubectl get proberegions` to show them online.
func waitRegionsOnline() {
	GinkgoHelper()
	for _, region := range []string{"e2e-a", "e2e-b"} {
		Eventually(func() error {
			_, err := kubectl("-n", ns, "rollout", "status", "deploy/uptime-operator-probe-"+region, "--timeout=5s")
			return err
		}, 3*time.Minute, 3*time.Second).Should(Succeed(), "probe Deployment of %s", region)
	}
	Eventually(func() string {
		out, _ := kubectl("get", "proberegions", "e2e-a", "e2e-b", "-o",
			`jsonpath={range .items[*]}{.metadata.name}: online={.status.online} agents={.status.onlineAgents} {.status.conditions[?(@.type=="Ready")].message}{"\n"}{end}`)
		return out
	}, 2*time.Minute, 2*time.Second).Should(And(
		MatchRegexp(`(?m)^e2e-a: online=true agents=1 `), MatchRegexp(`(?m)^e2e-b: online=true agents=1 `)),
		"`kubectl get proberegions` shows both regions online, each with its one agent")
}

// expectMonitorUp waits for the e2e Monitor to be up from both regions.
func expectMonitorUp() {
	GinkgoHelper()
	expectNamedMonitorUp(monName)
}

// expectNamedMonitorUp waits for the Monitor name of the work namespace to
// be up with an up check from both regions.
func expectNamedMonitorUp(name string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		m, err := getMonitor(workNS, name)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(string(m.Status.CurrentStatus)).To(Equal("up"))
		g.Expect(m.Status.Regions).To(HaveLen(2))
		for _, r := range m.Status.Regions {
			g.Expect(r.Status).To(Equal("up"), "region %s", r.Code)
		}
	}, 3*time.Minute, 3*time.Second).Should(Succeed())
}

// setTarget makes the test server fail or recover ("fail", "recover").
func setTarget(targetIP, action string) {
	GinkgoHelper()
	code, _, err := httpDo("POST", "http://"+targetIP+":8080/"+action, nil)
	Expect(err).NotTo(HaveOccurred())
	Expect(code).To(Equal(204))
}

// expectIncidentOpen waits for the e2e Monitor to be down with an open
// incident confirmed by both regions, and returns the incident's id.
func expectIncidentOpen() string {
	GinkgoHelper()
	return expectNamedIncidentOpen(monName)
}

// expectNamedIncidentOpen waits for the Monitor name of the work namespace
// to be down with an open incident confirmed by both regions, and returns
// the incident's id.
func expectNamedIncidentOpen(name string) string {
	GinkgoHelper()
	var id string
	Eventually(func(g Gomega) {
		m, err := getMonitor(workNS, name)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(string(m.Status.CurrentStatus)).To(Equal("down"))
		g.Expect(m.Status.OpenIncident).NotTo(BeNil())
		g.Expect(m.Status.OpenIncident.ConfirmingRegions).To(ConsistOf("e2e-a", "e2e-b"))
		id = m.Status.OpenIncident.ID
	}, 3*time.Minute, 3*time.Second).Should(Succeed())
	return id
}

// expectDelivery waits for exactly one delivery of event for incident id at
// the receiver, with a signature that checks.
func expectDelivery(receiverIP, event, id string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		ds, err := deliveries(receiverIP)
		g.Expect(err).NotTo(HaveOccurred())
		got := eventsFor(ds, event, id)
		g.Expect(got).To(HaveLen(1))
		g.Expect(got[0].Verified).To(BeTrue())
	}, 2*time.Minute, 2*time.Second).Should(Succeed())
}

// twoRegions is the values' regions block of the suite's two managed
// regions, each with one probe Pod.
const twoRegions = `regions:
- name: e2e-a
  displayName: Region A
  city: Aville
  country: DE
  continent: europe
  placement: {mode: managed, replicas: 1}
- name: e2e-b
  displayName: Region B
  city: Beetown
  country: US
  continent: north-america
  placement: {mode: managed, replicas: 1}
`

// receiverChannel is the AlertChannel of the suite's webhook receiver Pod,
// signed with the Secret named secret, followed by a document separator.
func receiverChannel(secret string) string {
	return fmt.Sprintf(`apiVersion: monitoring.uptime-operator.io/v1alpha1
kind: AlertChannel
metadata: {name: e2e-receiver, namespace: default}
spec:
  type: webhook
  name: e2e receiver
  webhookURL: https://e2e-receiver.default.svc.cluster.local:8443/hooks/uptime
  signingSecretRef: {name: %s, key: secret}
  routing: {scope: all, minSeverity: down}
---
`, secret)
}
