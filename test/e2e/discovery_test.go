//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/discovery"
)

// discoveryScenario (issue 39, docs/discovery.md): apps opt in and get
// Monitors that follow them. Every spec's text starts with "discovery:",
// so E2E_FLAGS='-ginkgo.focus=installs the chart|runs the target|checks a
// Monitor from both|discovery:' runs them with only the specs they build on.
func discoveryScenario() {
	// The e2e target's Service opts in with a label a MonitorTemplate
	// selects; a Monitor appears, is checked up from both regions' probe
	// Pods, and goes when the label does.
	It("discovery: makes a Monitor of a Service that opts in, checks it from both regions, deletes it when the opt-in goes", func() {
		const label = "e2e-discovery"
		apply(fmt.Sprintf(`apiVersion: monitoring.uptime-operator.io/v1alpha1
kind: MonitorTemplate
metadata: {name: e2e-discovery, namespace: %[1]s}
spec:
  selector: {matchLabels: {%[2]s: "true"}}
  kinds: [Service]
  monitor:
    intervalSeconds: %[3]d
    regions: [e2e-a, e2e-b]
`, workNS, label, checkInterval))
		DeferCleanup(func() {
			_, _ = kubectl("-n", workNS, "label", "service", "e2e-target", label+"-")
			_, _ = kubectl("-n", workNS, "delete", "monitortemplate", "e2e-discovery", "--ignore-not-found")
		})
		host := "e2e-target." + workNS + ".svc"
		name := discovery.Name(monv1.KindService, "e2e-target", discovery.Endpoint{Host: host, Path: "/"})
		mustKubectl("-n", workNS, "label", "service", "e2e-target", label+"=true")
		expectNamedMonitorUp(name)
		m, err := getMonitor(workNS, name)
		Expect(err).NotTo(HaveOccurred())
		Expect(m.Spec.URL).To(Equal("http://" + host + ":8080/"))
		Expect(m.Labels).To(HaveKeyWithValue(monv1.DiscoveredFromLabel, "e2e-discovery"))
		proved("a labelled Service became Monitor %s (%s), up from both regions; `kubectl get mtpl`:\n%s",
			name, m.Spec.URL, mustKubectl("-n", workNS, "get", "monitortemplates"))

		mustKubectl("-n", workNS, "label", "service", "e2e-target", label+"-")
		Eventually(func() string {
			out, _ := kubectl("-n", workNS, "get", "monitor", name, "--ignore-not-found", "-o", "name")
			return strings.TrimSpace(out)
		}, 2*time.Minute, 2*time.Second).Should(BeEmpty(), "the Monitor goes with the opt-in")
		proved("the Service's label removed: Monitor %s deleted", name)
	})

	// Issue 39 item 4: an app (Deployment, Service, Ingress) applied with
	// the opt-in label is monitored, shown on a status page, opens one
	// incident when its Pods go, holds a rollout gate at "stop" until they
	// are back, and leaves monitoring and the page with its route. The
	// cluster runs no ingress controller: the Ingress's host is the
	// Service's cluster DNS name and the Service listens on 80, so the
	// Monitor made of the Ingress reaches the app the way the route says.
	It("discovery: an app's Ingress with the opt-in label gets a Monitor within one interval, on its status page; Pods at zero → one incident, gate stop; Pods back → resolved, gate go; Ingress removed → Monitor and page entry go", func() {
		const (
			app   = "e2e-disc"
			page  = "e2e-disc-status"
			label = "e2e-app"
		)
		began := time.Now()
		host := app + "." + workNS + ".svc.cluster.local"
		name := discovery.Name(monv1.KindIngress, app, discovery.Endpoint{Host: host, Path: "/"})
		display := host + "/"
		apiIP := clusterIP(ns, "uptime-operator-api")
		DeferCleanup(func() {
			_, _ = kubectl("-n", workNS, "delete", "ingress", app, "--ignore-not-found")
			_, _ = kubectl("-n", workNS, "delete", "monitortemplate", "e2e-apps", "--ignore-not-found")
			_, _ = kubectl("-n", workNS, "delete", "statuspage", page, "--ignore-not-found")
			_, _ = kubectl("-n", workNS, "delete", "deploy,svc", app, "--ignore-not-found")
		})

		// The page lists one monitor by hand; the template's Monitors
		// join it by label, and nothing writes its spec.
		apply(fmt.Sprintf(`apiVersion: monitoring.uptime-operator.io/v1alpha1
kind: StatusPage
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  title: E2E apps
  slug: %[1]s
  isPublic: true
  monitors:
  - {monitorRef: {name: %[3]s}, section: Platform}
---
apiVersion: monitoring.uptime-operator.io/v1alpha1
kind: MonitorTemplate
metadata: {name: e2e-apps, namespace: %[2]s}
spec:
  selector: {matchLabels: {%[4]s: "true"}}
  kinds: [Ingress]
  monitor:
    intervalSeconds: %[5]d
    regions: [e2e-a, e2e-b]
    confirmation: {regions: 2}
    http: {timeoutMs: 3000}
  statusPage: {name: %[1]s, section: Apps}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: %[6]s, namespace: %[2]s, labels: {e2e: uptime}}
spec:
  selector: {matchLabels: {app: %[6]s}}
  template:
    metadata: {labels: {app: %[6]s}}
    spec:
      containers:
      - {name: server, image: %[7]s, imagePullPolicy: Never, ports: [{containerPort: 8080}]}
---
apiVersion: v1
kind: Service
metadata: {name: %[6]s, namespace: %[2]s, labels: {e2e: uptime}}
spec:
  selector: {app: %[6]s}
  ports: [{name: http, port: 80, targetPort: 8080}]
`, page, workNS, monName, label, checkInterval, app, testImage))
		mustKubectl("-n", workNS, "rollout", "status", "deploy/"+app, "--timeout=120s")

		By("applying the Ingress with the opt-in label")
		applied := time.Now()
		apply(fmt.Sprintf(`apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: %[1]s, namespace: %[2]s, labels: {%[3]s: "true"}}
spec:
  rules:
  - host: %[4]s
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: %[1]s, port: {number: 80}}}}
`, app, workNS, label, host))
		Eventually(func() error { _, err := getMonitor(workNS, name); return err },
			checkInterval*time.Second, 250*time.Millisecond).Should(Succeed(), "the Monitor appears within one check interval")
		appeared := time.Since(applied)
		m, err := getMonitor(workNS, name)
		Expect(err).NotTo(HaveOccurred())
		Expect(m.Spec.URL).To(Equal("http://" + host + "/"))
		Expect(m.Labels).To(HaveKeyWithValue(monv1.StatusPageLabel, page))
		uid := string(m.UID)
		expectNamedMonitorUp(name)
		proved("Ingress %s labelled %s=true became Monitor %s (%s) %.1fs after it was applied (interval %ds), up from both regions %.0fs after",
			app, label, name, m.Spec.URL, appeared.Seconds(), checkInterval, time.Since(applied).Seconds())

		By("finding the Monitor on the status page, after the page's own entry")
		pageShows := func(g Gomega) []string {
			code, b, err := httpDo("GET", "http://"+apiIP+":443/status/"+page, nil)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(code).To(Equal(200), string(b))
			var doc struct {
				Sections []struct {
					Name     string `json:"name"`
					Monitors []struct {
						Name string `json:"name"`
					} `json:"monitors"`
				} `json:"sections"`
			}
			g.Expect(json.Unmarshal(b, &doc)).To(Succeed())
			var shown []string
			for _, s := range doc.Sections {
				for _, m := range s.Monitors {
					shown = append(shown, s.Name+": "+m.Name)
				}
			}
			return shown
		}
		Eventually(func(g Gomega) {
			g.Expect(pageShows(g)).To(Equal([]string{"Platform: E2E target", "Apps: " + display}))
			g.Expect(kubectl("-n", workNS, "get", "statuspage", page, "-o", "jsonpath={.status.monitors[*].name}")).To(Equal(monName + " " + name))
		}, time.Minute, 2*time.Second).Should(Succeed())
		Expect(mustKubectl("-n", workNS, "get", "statuspage", page, "-o", "jsonpath={.metadata.generation} {.spec.monitors[*].monitorRef.name}")).
			To(Equal("1 "+monName), "nothing wrote the page's spec")
		proved("status page /status/%s shows %q under Apps after its own entry; the StatusPage's spec was not written (generation 1)", page, display)

		gate := func(g Gomega) map[string]any {
			out, err := rawAPI("/namespaces/" + workNS + "/rolloutgates/" + uid)
			g.Expect(err).NotTo(HaveOccurred(), out)
			var v map[string]any
			g.Expect(json.Unmarshal([]byte(out), &v)).To(Succeed(), out)
			return v
		}
		Eventually(func(g Gomega) { g.Expect(gate(g)).To(HaveKeyWithValue("decision", "go")) }, time.Minute, 2*time.Second).Should(Succeed())

		By("scaling the app's Pods to zero")
		mustKubectl("-n", workNS, "scale", "deploy/"+app, "--replicas=0")
		scaled := time.Now()
		incident := expectNamedIncidentOpen(name)
		opened := time.Since(scaled)
		var stop map[string]any
		Eventually(func(g Gomega) {
			stop = gate(g)
			g.Expect(stop).To(HaveKeyWithValue("decision", "stop"))
			g.Expect(stop).To(HaveKeyWithValue("go", false))
			g.Expect(stop).To(HaveKeyWithValue("open_incident_id", incident))
		}, time.Minute, 2*time.Second).Should(Succeed())
		proved("Pods of %s scaled to zero: incident %s confirmed by e2e-a and e2e-b %.0fs later; rolloutgates/%s answers decision=stop (%v)",
			app, incident, opened.Seconds(), uid, stop["reasons"])

		By("bringing the Pods back")
		mustKubectl("-n", workNS, "scale", "deploy/"+app, "--replicas=1")
		mustKubectl("-n", workNS, "rollout", "status", "deploy/"+app, "--timeout=120s")
		back := time.Now()
		Eventually(func(g Gomega) {
			m, err := getMonitor(workNS, name)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(string(m.Status.CurrentStatus)).To(Equal("up"))
			g.Expect(m.Status.OpenIncident).To(BeNil())
		}, 3*time.Minute, 2*time.Second).Should(Succeed())
		resolved := time.Since(back)
		Eventually(func(g Gomega) {
			g.Expect(gate(g)).To(And(HaveKeyWithValue("decision", "go"), HaveKeyWithValue("go", true)))
		}, time.Minute, 2*time.Second).Should(Succeed())
		out, err := rawAPI("/namespaces/" + workNS + "/incidents?monitor_id=" + uid + "&page_size=100")
		Expect(err).NotTo(HaveOccurred())
		ids := incidentIDs(out)
		Expect(ids).To(Equal([]string{incident}), "exactly one incident for the outage")
		proved("Pods back: incident %s resolved %.0fs after the rollout, the gate answers decision=go; the Monitor has exactly 1 incident", incident, resolved.Seconds())

		By("removing the Ingress")
		mustKubectl("-n", workNS, "delete", "ingress", app)
		removed := time.Now()
		Eventually(func() string {
			out, _ := kubectl("-n", workNS, "get", "monitor", name, "--ignore-not-found", "-o", "name")
			return strings.TrimSpace(out)
		}, 2*time.Minute, time.Second).Should(BeEmpty(), "the Monitor goes with the route")
		gone := time.Since(removed)
		Eventually(func(g Gomega) {
			g.Expect(pageShows(g)).To(Equal([]string{"Platform: E2E target"}))
			g.Expect(kubectl("-n", workNS, "get", "statuspage", page, "-o", "jsonpath={.status.monitors[*].name}")).To(Equal(monName))
		}, time.Minute, 2*time.Second).Should(Succeed())
		proved("Ingress %s deleted: Monitor %s gone %.0fs later and off status page %s, whose own entry stays; the whole flow took %s",
			app, name, gone.Seconds(), page, time.Since(began).Round(time.Second))
	})
}
