//go:build e2e

package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

const (
	ns        = "uptime-operator-system"
	release   = "uptime-operator"
	workNS    = "default"
	monName   = "e2e-target"
	webSecret = "e2e-webhook-secret"
	// The interval and timeout of every wait on the product: a check every
	// 15 s from two regions, and confirmation needs both.
	checkInterval = 15
)

// chartValues installs two managed regions with one agent each, private
// targets allowed (the target is a Pod), and the default SQLite store.
const chartValues = `
allowPrivateTargets: true
# One SQLite replica: aggregatedAPI.enabled=auto would leave the APIService
# off (docs/helm.md); the suite forces it on to use it.
aggregatedAPI: {enabled: true}
# The receiver Pod's serving certificate comes from the suite's test CA
# (webhook channels take https:// URLs only); the manager trusts it as an
# admin's private CA.
trustedCA: {configMap: e2e-trusted-ca, key: ca.crt}
# A real Prometheus (test/e2e/prometheus_test.go) scrapes the manager and
# the agents as the ServiceMonitor and PodMonitor say, with the per-monitor
# series on, and evaluates the PrometheusRule.
metrics:
  monitorSeries: {enabled: true}
  readerSubjects: [{kind: ServiceAccount, name: e2e-prometheus, namespace: default}]
serviceMonitor: {enabled: true, interval: 10s}
podMonitor: {enabled: true, interval: 10s}
prometheusRule: {enabled: true, monitorDown: {for: 15s}}
` + twoRegions

var _ = Describe("uptime-operator on a real cluster", Ordered, func() {
	var (
		valuesFile string
		targetIP   string
		receiverIP string
		apiIP      string
		incidentID string
		firstPod   string
		prom       *prometheus
	)

	BeforeAll(func() {
		dir := GinkgoT().TempDir()
		valuesFile = filepath.Join(dir, "values.yaml")
		Expect(os.WriteFile(valuesFile, []byte(chartValues), 0o644)).To(Succeed())
		resetCluster()
		installTestCA()
		// The Prometheus Operator's kinds, so the chart's ServiceMonitor,
		// PodMonitor and PrometheusRule are created for real, and the
		// ServiceAccount the suite's Prometheus scrapes the manager as.
		mustKubectl("apply", "-f", filepath.Join(repoRoot, "test", "e2e", "testdata", "prometheus-operator-crds.yaml"))
		mustKubectl("wait", "--for=condition=Established", "--timeout=60s", "crd", "-l", "e2e=uptime")
		_, _ = kubectl("-n", workNS, "create", "serviceaccount", promSA)
	})

	It("installs the chart: manager Ready, APIService Available, webhook refusing a bad Monitor", func() {
		mustHelm("install", release, chartPackage(), "-n", ns, "--create-namespace",
			"-f", valuesFile, "--wait", "--timeout", "5m")
		mustKubectl("-n", ns, "rollout", "status", "deploy/uptime-operator-manager", "--timeout=180s")
		Eventually(func() string {
			out, _ := kubectl("get", "apiservice", "v1.api.uptime-operator.io",
				"-o", `jsonpath={.status.conditions[?(@.type=="Available")].status}`)
			return out
		}, 2*time.Minute, 2*time.Second).Should(Equal("True"))
		pvc := mustKubectl("-n", ns, "get", "pvc", "-o", "jsonpath={.items[0].status.phase} {.items[0].spec.volumeName}")
		Expect(pvc).To(HavePrefix("Bound "))
		proved("helm install of %s: manager Ready, SQLite on PersistentVolume %s, APIService v1.api.uptime-operator.io Available",
			filepath.Base(chartPackage()), strings.Fields(pvc)[1])
		Expect(mustKubectl("get", "namespace", ns, "-o", `jsonpath={.metadata.labels.pod-security\.kubernetes\.io/enforce}`)).To(Equal("restricted"))
		keep := mustKubectl("get", "crd", "monitors.monitoring.uptime-operator.io", "-o", `jsonpath={.metadata.annotations.helm\.sh/resource-policy}`)
		Expect(keep).To(Equal("keep"))
		proved("installed into namespace %s, which enforces Pod Security restricted; the CRDs came with the release, annotated helm.sh/resource-policy=keep", ns)

		bad := `apiVersion: monitoring.uptime-operator.io/v1alpha1
kind: Monitor
metadata: {name: e2e-bad, namespace: default}
spec:
  type: http
  url: http://e2e-target.default.svc.cluster.local:8080/
  intervalSeconds: 30
  regions: [e2e-a, mars-1]
`
		// Only the webhook knows which regions exist (the schema cannot).
		// Right after the Pod is Ready, kube-proxy may not have programmed
		// the webhook Service yet (connection refused), and kube-apiserver
		// may still call it with the CA bundle of the configuration it
		// had before this install re-created it (x509: unknown authority):
		// wait until the webhook itself answers.
		var out string
		Eventually(func(g Gomega) {
			var err error
			out, err = runIn(bad, "kubectl", "apply", "-f", "-")
			g.Expect(err).To(HaveOccurred(), "a Monitor naming an unknown region was admitted")
			g.Expect(out).NotTo(ContainSubstring("failed calling webhook"))
		}, "60s", "2s").Should(Succeed())
		Expect(out).To(ContainSubstring(`spec.regions[1]: Unsupported value: "mars-1": supported values: "e2e-a", "e2e-b"`))
		proved("admission webhook refused a bad Monitor naming the field: %s", strings.TrimSpace(lastLine(out)))
	})

	It("runs the target and the webhook receiver in Pods", func() {
		targetIP, receiverIP = deployTargetAndReceiver()
		apiIP = clusterIP(ns, "uptime-operator-api")
	})

	It("checks a Monitor from both regions' probe Pods: up everywhere", func() {
		apply(receiverChannel(webSecret) + fmt.Sprintf(`apiVersion: monitoring.uptime-operator.io/v1alpha1
kind: Monitor
metadata: {name: %s, namespace: default}
spec:
  name: E2E target
  type: http
  url: http://e2e-target.default.svc.cluster.local:8080/
  intervalSeconds: %d
  regions: [e2e-a, e2e-b]
  confirmation: {regions: 2}
  http: {timeoutMs: 3000}
`, monName, checkInterval))

		waitRegionsOnline()
		// The probe Pods were admitted under enforce=restricted.
		Expect(mustKubectl("-n", ns, "get", "pods", "-l", "uptime-operator.io/region=e2e-a", "-o",
			"jsonpath={.items[0].spec.securityContext.sysctls[0].name}")).To(Equal("net.ipv4.ping_group_range"))
		Eventually(func() string {
			out, _ := kubectl("get", "proberegion", "e2e-a", "-o", `jsonpath={.status.conditions[?(@.type=="ProbePods")].status}`)
			return out
		}, time.Minute, 2*time.Second).Should(Equal("True"))
		proved("probe Pods admitted by Pod Security restricted (ping through net.ipv4.ping_group_range, no NET_RAW); ProbePods=True")
		sa := mustKubectl("-n", ns, "get", "deploy", "uptime-operator-probe-e2e-a", "-o",
			"jsonpath={.spec.template.spec.serviceAccountName} {.spec.template.spec.containers[0].args}")
		Expect(strings.Fields(sa)[0]).To(Equal("uptime-operator-probe-e2e-a"))
		Expect(sa).To(ContainSubstring("/var/run/secrets/uptime-operator.io/probe/token"))
		Expect(sa).To(ContainSubstring("--server-ca-file"))
		Expect(sa).To(ContainSubstring("https://"))
		proved("both regions' probe Deployments run; agents authenticated with their region's own ServiceAccount (%s) tokens over TLS verified with the chart's CA; `kubectl get proberegions`:\n%s",
			strings.Fields(sa)[0], mustKubectl("get", "proberegions"))

		expectMonitorUp()
		proved("Monitor up from both regions; `kubectl get monitors`:\n%s", mustKubectl("-n", workNS, "get", "monitors"))
	})

	It("checks a grpc and a websocket Monitor from both regions' probe Pods: up everywhere", func() {
		apply(fmt.Sprintf(`apiVersion: monitoring.uptime-operator.io/v1alpha1
kind: Monitor
metadata: {name: e2e-grpc, namespace: default}
spec:
  name: E2E target gRPC health
  type: grpc
  intervalSeconds: %[1]d
  regions: [e2e-a, e2e-b]
  grpc: {target: "e2e-target.default.svc.cluster.local:9090", service: e2e.Target, plaintext: true, timeoutMs: 3000}
---
apiVersion: monitoring.uptime-operator.io/v1alpha1
kind: Monitor
metadata: {name: e2e-websocket, namespace: default}
spec:
  name: E2E target WebSocket echo
  type: websocket
  intervalSeconds: %[1]d
  regions: [e2e-a, e2e-b]
  websocket: {url: "ws://e2e-target.default.svc.cluster.local:8080/ws", message: e2e-ping, expectedReply: e2e-ping, timeoutMs: 3000}
`, checkInterval))
		for _, name := range []string{"e2e-grpc", "e2e-websocket"} {
			expectNamedMonitorUp(name)
		}
		proved("grpc (grpc.health.v1 SERVING) and websocket (echo) Monitors up from both regions' probe Pods; `kubectl get monitors`:\n%s",
			mustKubectl("-n", workNS, "get", "monitors"))
		mustKubectl("-n", workNS, "delete", "monitor", "e2e-grpc", "e2e-websocket")
	})

	discoveryScenario()

	It("is scraped by a real Prometheus through the chart's ServiceMonitor and PodMonitor: manager, both agents, per-monitor series", func() {
		// Not GinkgoT().TempDir(): Prometheus outlives this spec.
		dir, err := os.MkdirTemp("", "e2e-prometheus-")
		Expect(err).NotTo(HaveOccurred())
		prom = startPrometheus(dir)
		expectScraped(prom, "e2e-a", "e2e-b")
		proved("Prometheus %s (built from its Go module) scrapes the manager over HTTPS with a ServiceAccount token bound to the metrics-reader role, and the agents of e2e-a and e2e-b, as the chart's ServiceMonitor and PodMonitor say; uptime_operator_monitor_up{monitor=%q} is 1 from both regions",
			filepath.Base(os.Getenv(envPrometheus)), monName)
	})

	It("opens one incident confirmed by both regions and delivers a signed monitor.down to the receiver Pod", func() {
		setTarget(targetIP, "fail")
		incidentID = expectIncidentOpen()
		table := mustKubectl("-n", workNS, "get", "monitors")
		Expect(table).To(MatchRegexp(`(?m)^%s\s+http\s+\S+\s+down`, monName))
		proved("target failing → incident %s confirmed by e2e-a and e2e-b; `kubectl get monitors`:\n%s", incidentID, table)

		expectDelivery(receiverIP, "monitor.down", incidentID)
		proved("signed monitor.down for incident %s reached the receiver Pod and its signature check passed", incidentID)

		expectAlertFiring(prom, "UptimeOperatorMonitorDown")
		proved("Prometheus fires UptimeOperatorMonitorDown{namespace=%q, monitor=%q} from the chart's PrometheusRule", workNS, monName)
	})

	It("keeps history and the open incident when the manager Pod is deleted, duplicating nothing", func() {
		pods := managerPods(ns)
		Expect(pods).To(HaveLen(1))
		firstPod = pods[0]
		before, err := rawAPI("/namespaces/default/incidents")
		Expect(err).NotTo(HaveOccurred())
		checksBefore := countChecks()
		Expect(checksBefore).To(BeNumerically(">", 0))

		mustKubectl("-n", ns, "delete", "pod", firstPod, "--wait=true", "--timeout=120s")
		Eventually(func() []string { return managerPods(ns) }, 3*time.Minute, 2*time.Second).Should(
			And(HaveLen(1), Not(ContainElement(firstPod))))
		Eventually(func() error { _, err := rawAPI("/namespaces/default/incidents"); return err }, 2*time.Minute, 2*time.Second).Should(Succeed())

		m, err := getMonitor(workNS, monName)
		Expect(err).NotTo(HaveOccurred())
		Expect(m.Status.OpenIncident).NotTo(BeNil())
		Expect(m.Status.OpenIncident.ID).To(Equal(incidentID))
		after, err := rawAPI("/namespaces/default/incidents")
		Expect(err).NotTo(HaveOccurred())
		Expect(incidentIDs(after)).To(Equal(incidentIDs(before)))
		Expect(countChecks()).To(BeNumerically(">=", checksBefore))
		// Two more check rounds: a restarted engine must not re-open or re-alert.
		// The receiver hears every alert of the namespace (the discovery
		// specs' incidents too): this incident's are counted.
		Consistently(func(g Gomega) {
			ds, err := deliveries(receiverIP)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(eventsFor(ds, "monitor.down", incidentID)).To(HaveLen(1))
			out, err := rawAPI("/namespaces/default/incidents")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(incidentIDs(out)).To(Equal(incidentIDs(before)))
		}, 2*checkInterval*time.Second, 5*time.Second).Should(Succeed())
		proved("manager Pod %s deleted: the new Pod %s mounted the same volume; %d checks kept, incident %s still open, 1 incident and 1 monitor.down delivery",
			firstPod, managerPods(ns)[0], checksBefore, incidentID)
	})

	It("resolves the incident on recovery with one signed monitor.up, resolution recovered", func() {
		setTarget(targetIP, "recover")
		Eventually(func(g Gomega) {
			m, err := getMonitor(workNS, monName)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(string(m.Status.CurrentStatus)).To(Equal("up"))
			g.Expect(m.Status.OpenIncident).To(BeNil())
		}, 3*time.Minute, 3*time.Second).Should(Succeed())
		Eventually(func(g Gomega) {
			ds, err := deliveries(receiverIP)
			g.Expect(err).NotTo(HaveOccurred())
			up := eventsFor(ds, "monitor.up", incidentID)
			g.Expect(up).To(HaveLen(1))
			g.Expect(up[0].Verified).To(BeTrue())
			g.Expect(up[0].Body.Resolution).NotTo(BeNil())
			g.Expect(*up[0].Body.Resolution).To(Equal("recovered"))
			g.Expect(eventsFor(ds, "monitor.down", incidentID)).To(HaveLen(1))
		}, 2*time.Minute, 2*time.Second).Should(Succeed())
		proved("target recovered → one signed monitor.up for incident %s with resolution recovered", incidentID)
	})

	It("serves a status page through the manager's Service", func() {
		apply(fmt.Sprintf(`apiVersion: monitoring.uptime-operator.io/v1alpha1
kind: StatusPage
metadata: {name: e2e-status, namespace: default}
spec:
  title: E2E status
  slug: e2e-status
  isPublic: true
  monitors:
  - monitorRef: {name: %s}
`, monName))
		var body []byte
		Eventually(func(g Gomega) {
			code, b, err := httpDo("GET", "http://"+apiIP+":443/status/e2e-status", nil)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(code).To(Equal(200), string(b))
			g.Expect(string(b)).To(ContainSubstring("E2E target"))
			body = b
		}, 2*time.Minute, 2*time.Second).Should(Succeed())
		code, page, err := httpDo("GET", "http://"+apiIP+":443/s/e2e-status", nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(code).To(Equal(200))
		Expect(string(page)).To(ContainSubstring("E2E status"))
		proved("status page /status/e2e-status (%d bytes JSON) and /s/e2e-status (HTML) answer through Service uptime-operator-api", len(body))
	})

	It("serves the aggregated API with RBAC: the admin and a bound viewer read, a user without the role gets 403", func() {
		out, err := rawAPI("/namespaces/default/monitors")
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(ContainSubstring("E2E target"))
		out, err = rawAPI("/namespaces/default/monitors", "e2e-nobody")
		Expect(err).To(HaveOccurred())
		Expect(out).To(Or(ContainSubstring("Forbidden"), ContainSubstring("403")))
		apply(`apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: e2e-viewer, namespace: default, labels: {e2e: uptime}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: uptime-operator-viewer}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: e2e-viewer}]
`)
		Eventually(func() error { _, err := rawAPI("/namespaces/default/monitors", "e2e-viewer"); return err },
			time.Minute, 2*time.Second).Should(Succeed())
		proved("kubectl get --raw /apis/api.uptime-operator.io/v1/namespaces/default/monitors: admin and a bound viewer 200, user without the role 403 (%s)",
			strings.TrimSpace(lastLine(out)))
	})

	It("keeps data and certificates across helm upgrade with a changed value", func() {
		certs := secretDigest("uptime-operator-ca", "uptime-operator-webhook-cert", "uptime-operator-api-cert")
		caBundle := mustKubectl("get", "apiservice", "v1.api.uptime-operator.io", "-o", "jsonpath={.spec.caBundle}")
		incidents, err := rawAPI("/namespaces/default/incidents")
		Expect(err).NotTo(HaveOccurred())
		checks := countChecks()
		oldPods := managerPods(ns)

		mustHelm("upgrade", release, chartPackage(), "-n", ns, "-f", valuesFile,
			"--set", "manager.logLevel=debug", "--wait", "--timeout", "5m")
		Eventually(func() []string { return managerPods(ns) }, 3*time.Minute, 2*time.Second).Should(
			And(HaveLen(1), Not(ContainElement(oldPods[0]))))
		args := mustKubectl("-n", ns, "get", "deploy", "uptime-operator-manager", "-o", "jsonpath={.spec.template.spec.containers[0].args}")
		Expect(args).To(ContainSubstring("--zap-log-level=debug"))
		Expect(secretDigest("uptime-operator-ca", "uptime-operator-webhook-cert", "uptime-operator-api-cert")).To(Equal(certs))
		Expect(mustKubectl("get", "apiservice", "v1.api.uptime-operator.io", "-o", "jsonpath={.spec.caBundle}")).To(Equal(caBundle))
		Eventually(func() string {
			out, _ := kubectl("get", "apiservice", "v1.api.uptime-operator.io", "-o", `jsonpath={.status.conditions[?(@.type=="Available")].status}`)
			return out
		}, 2*time.Minute, 2*time.Second).Should(Equal("True"))
		Eventually(func() error { _, err := rawAPI("/namespaces/default/incidents"); return err }, time.Minute, 2*time.Second).Should(Succeed())
		after, err := rawAPI("/namespaces/default/incidents")
		Expect(err).NotTo(HaveOccurred())
		Expect(incidentIDs(after)).To(Equal(incidentIDs(incidents)))
		Expect(countChecks()).To(BeNumerically(">=", checks))
		proved("helm upgrade (manager.logLevel=debug): same CA and serving certificates, same APIService caBundle, %d checks and the incident kept", checks)
	})

	It("upgrades a CRD with the chart: helm upgrade with a changed CRD serves the new field", func() {
		upgraded := upgradedChart()
		const plan = `apiVersion: monitoring.uptime-operator.io/v1alpha1
kind: Plan
metadata: {name: e2e-upgrade}
spec: {displayName: E2E upgrade, e2eUpgradeMarker: served}
`
		// Before: the API server does not know the field (kubectl's strict
		// field validation refuses it).
		out, err := runIn(plan, "kubectl", "apply", "-f", "-")
		Expect(err).To(HaveOccurred(), "the field is served before the upgrade")
		Expect(out).To(ContainSubstring("e2eUpgradeMarker"))
		mustHelm("upgrade", release, upgraded, "-n", ns, "-f", valuesFile, "--wait", "--timeout", "5m")
		Eventually(func() error { _, err := runIn(plan, "kubectl", "apply", "-f", "-"); return err }, time.Minute, 2*time.Second).Should(Succeed())
		Expect(mustKubectl("get", "plan", "e2e-upgrade", "-o", "jsonpath={.spec.e2eUpgradeMarker}")).To(Equal("served"))
		mustKubectl("delete", "plan", "e2e-upgrade")
		Eventually(func() string {
			out, _ := kubectl("get", "apiservice", "v1.api.uptime-operator.io", "-o", `jsonpath={.status.conditions[?(@.type=="Available")].status}`)
			return out
		}, 2*time.Minute, 2*time.Second).Should(Equal("True"))
		proved("helm upgrade to %s (the Plan CRD with a new field): spec.e2eUpgradeMarker refused before, stored and served after", filepath.Base(upgraded))
	})

	It("leaves on helm uninstall exactly what docs/install.md says", func() {
		mustHelm("uninstall", release, "-n", ns, "--wait", "--timeout", "3m")
		// Left: the CRDs and so every Monitor.
		mustKubectl("get", "crd", "monitors.monitoring.uptime-operator.io")
		mustKubectl("-n", workNS, "get", "monitor", monName)
		// Gone: the manager, its volume claim (not annotated keep), the
		// APIService, the webhooks, the access roles and the probe Deployments.
		for _, gone := range [][]string{
			{"-n", ns, "get", "deploy", "uptime-operator-manager"},
			{"get", "apiservice", "v1.api.uptime-operator.io"},
			{"get", "clusterrole", "uptime-operator-viewer"},
		} {
			_, err := kubectl(gone...)
			Expect(err).To(HaveOccurred(), "still there after uninstall: %v", gone)
		}
		Eventually(func() string {
			out, _ := kubectl("-n", ns, "get", "pvc,deploy", "-o", "name")
			return strings.TrimSpace(out)
		}, 2*time.Minute, 2*time.Second).Should(BeEmpty())
		Eventually(func() string {
			out, _ := kubectl("get", "validatingwebhookconfigurations,mutatingwebhookconfigurations", "-o", "name")
			return out
		}, time.Minute, 2*time.Second).ShouldNot(ContainSubstring("uptime-operator"))
		proved("helm uninstall: CRDs and Monitors kept; manager, claim, APIService, webhooks, roles and probe Deployments removed")
	})

	haScenario(&targetIP, &receiverIP, &valuesFile)

	AfterAll(func() {
		prom.stop()
		fmt.Fprintf(os.Stderr, "\ne2e: what this run proved:\n")
		for _, l := range provedLines {
			fmt.Fprintf(os.Stderr, "  - %s\n", strings.ReplaceAll(l, "\n", "\n      "))
		}
	})
})

// resetCluster removes what a previous run (or another top-level container
// of this suite: they run in random order) left: the release, the work
// namespace's objects, the ProbeRegions and the CRDs, so that the next
// install is a first install.
func resetCluster() {
	// A reused cluster may hold a previous run's release and objects.
	_, _ = helm("uninstall", release, "-n", ns, "--wait", "--timeout", "3m")
	_, _ = kubectl("-n", workNS, "delete", "monitors,alertchannels,statuspages", "--all", "--wait=true", "--timeout=60s")
	_, _ = kubectl("delete", "proberegions", "--all", "--timeout=60s")
	_, _ = kubectl("-n", workNS, "delete", "deploy,svc,secret,rolebinding", "-l", "e2e=uptime", "--timeout=60s")
	_, _ = kubectl("delete", "namespace", ns, "--timeout=120s")
	// CRDs outlive a release (crds.keep): remove them, so the install
	// below is a first install, whose ProbeRegions the manager applies
	// once the chart's CRDs are served (internal/bootstrap).
	// A previous run's Monitors keep the history finalizer, and no
	// manager is left to remove it: drop it, or the CRD never goes.
	if out, err := kubectl("get", "monitors", "-A", "-o", `jsonpath={range .items[*]}{.metadata.namespace} {.metadata.name}{"\n"}{end}`); err == nil {
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			if f := strings.Fields(line); len(f) == 2 {
				_, _ = kubectl("-n", f[0], "patch", "monitor", f[1], "--type=merge", "-p", `{"metadata":{"finalizers":null}}`)
			}
		}
	}
	if out, err := kubectl("get", "crd", "-o", "name"); err == nil {
		for _, crd := range strings.Fields(out) {
			if strings.HasSuffix(crd, ".monitoring.uptime-operator.io") {
				_, _ = kubectl("delete", crd, "--timeout=120s")
			}
		}
	}
}

// deployTargetAndReceiver runs the target (test/e2e/testserver, made to
// fail and recover over HTTP) and the webhook receiver (verifying the
// signatures, serving TLS from the test CA) in Pods of the work namespace,
// and returns their Services' cluster IPs once both answer.
func deployTargetAndReceiver() (targetIP, receiverIP string) {
	GinkgoHelper()
	apply(fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata: {name: %[1]s, namespace: default, labels: {e2e: uptime, monitoring.uptime-operator.io/credentials: "true"}}
stringData: {secret: e2e-signing-secret-0123456789}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: e2e-target, namespace: default, labels: {e2e: uptime}}
spec:
  selector: {matchLabels: {app: e2e-target}}
  template:
    metadata: {labels: {app: e2e-target}}
    spec:
      containers:
      - {name: server, image: %[2]s, imagePullPolicy: Never, ports: [{containerPort: 8080}, {containerPort: 9090}]}
---
apiVersion: v1
kind: Service
metadata: {name: e2e-target, namespace: default, labels: {e2e: uptime}}
spec:
  selector: {app: e2e-target}
  ports: [{name: http, port: 8080, targetPort: 8080}, {name: grpc, port: 9090, targetPort: 9090}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: e2e-receiver, namespace: default, labels: {e2e: uptime}}
spec:
  selector: {matchLabels: {app: e2e-receiver}}
  template:
    metadata: {labels: {app: e2e-receiver}}
    spec:
      containers:
      - name: server
        image: %[2]s
        imagePullPolicy: Never
        ports: [{containerPort: 8080}, {containerPort: 8443}]
        env:
        - name: WEBHOOK_SECRET
          valueFrom: {secretKeyRef: {name: %[1]s, key: secret}}
        - {name: TLS_CERT_FILE, value: /tls/tls.crt}
        - {name: TLS_KEY_FILE, value: /tls/tls.key}
        volumeMounts: [{name: tls, mountPath: /tls, readOnly: true}]
      volumes:
      - name: tls
        secret: {secretName: %[3]s, defaultMode: 0444}
---
apiVersion: v1
kind: Service
metadata: {name: e2e-receiver, namespace: default, labels: {e2e: uptime}}
spec:
  selector: {app: e2e-receiver}
  ports: [{name: http, port: 8080, targetPort: 8080}, {name: https, port: 8443, targetPort: 8443}]
`, webSecret, testImage, receiverTLSSecret))
	mustKubectl("-n", workNS, "rollout", "status", "deploy/e2e-target", "--timeout=120s")
	mustKubectl("-n", workNS, "rollout", "status", "deploy/e2e-receiver", "--timeout=120s")
	targetIP, receiverIP = clusterIP(workNS, "e2e-target"), clusterIP(workNS, "e2e-receiver")
	Eventually(func() int {
		code, _, _ := httpDo("GET", "http://"+targetIP+":8080/", nil)
		return code
	}, time.Minute, time.Second).Should(Equal(200))
	return targetIP, receiverIP
}

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// items is the list of a REST answer: the answer itself when it is an
// array, else the first array among its fields.
func items(answer string) []map[string]any {
	GinkgoHelper()
	var v any
	Expect(json.Unmarshal([]byte(answer), &v)).To(Succeed(), answer)
	if obj, ok := v.(map[string]any); ok {
		for _, f := range obj {
			if arr, ok := f.([]any); ok {
				v = arr
				break
			}
		}
	}
	arr, ok := v.([]any)
	Expect(ok).To(BeTrue(), "no list in %s", answer)
	out := make([]map[string]any, 0, len(arr))
	for _, e := range arr {
		m, _ := e.(map[string]any)
		out = append(out, m)
	}
	return out
}

// incidentIDs are the ids of an incident list answer, in order.
func incidentIDs(answer string) []string {
	GinkgoHelper()
	var ids []string
	for _, it := range items(answer) {
		ids = append(ids, fmt.Sprint(it["id"]))
	}
	return ids
}

// countChecks is how many checks of the target the store holds.
func countChecks() int {
	GinkgoHelper()
	m, err := getMonitor(workNS, monName)
	Expect(err).NotTo(HaveOccurred())
	out, err := rawAPI(fmt.Sprintf("/namespaces/default/stats/%s/checks?limit=5000", m.UID))
	Expect(err).NotTo(HaveOccurred())
	return len(items(out))
}

// secretDigest hashes the data of Secrets in the release namespace.
func secretDigest(names ...string) string {
	GinkgoHelper()
	h := sha256.New()
	for _, n := range names {
		h.Write([]byte(mustKubectl("-n", ns, "get", "secret", n, "-o", "jsonpath={.data}")))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// upgradedChart unpacks the release's chart package, adds a field to the
// Plan CRD, and packages it as the next version: the CRD change a real
// release brings.
func upgradedChart() string {
	GinkgoHelper()
	dir := GinkgoT().TempDir()
	mustRun := func(name string, args ...string) {
		GinkgoHelper()
		out, err := run(name, args...)
		Expect(err).NotTo(HaveOccurred(), out)
	}
	mustRun("tar", "-xzf", chartPackage(), "-C", dir)
	crd := filepath.Join(dir, "uptime-operator", "templates", "crds", "monitoring.uptime-operator.io_plans.yaml")
	b, err := os.ReadFile(crd)
	Expect(err).NotTo(HaveOccurred())
	const at = "          spec:\n            description: PlanSpec is what a workspace on this plan may do.\n            properties:\n"
	Expect(string(b)).To(ContainSubstring(at))
	changed := strings.Replace(string(b), at, at+
		"              e2eUpgradeMarker:\n"+
		"                description: e2eUpgradeMarker exists only in the e2e suite's upgraded chart.\n"+
		"                type: string\n", 1)
	Expect(os.WriteFile(crd, []byte(changed), 0o644)).To(Succeed())
	version := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(chartPackage()), "uptime-operator-"), ".tgz") + "-e2e-upgrade"
	mustRun("helm", "package", filepath.Join(dir, "uptime-operator"), "--version", version, "-d", dir)
	return filepath.Join(dir, "uptime-operator-"+version+".tgz")
}
