//go:build e2e

package e2e

import (
	"bytes"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

// A remote site: a second cluster (hack/cluster.sh with SITE=2: its own
// namespace, node, runtime and ranges, joined to the first cluster's
// namespace by a routed veth link), where the chart is installed in remote
// mode exactly as docs/install.md says; its agent reaches the probe API the
// same way as the bare agent below, its cluster DNS mapping the API
// Service's name to the first node's address.
//
// A remote region that lives on a VM: the bare agent of docs/install.md
// ("Remote regions"), `uptime-operator probe` as a plain process, in a
// network namespace of its own (bareNetns) joined to the node's namespace
// by a routed veth link and nothing else. It reaches the manager's probe
// API through the API Service's NodePort on the node's address, over TLS
// verified against the chart's CA, under the Service's DNS name (which its
// /etc/hosts, through /etc/netns, maps to the node's address, as a VM's
// DNS would map a public name), and it reaches the target by the target
// Service's cluster IP, routed through the node.
const (
	localRegion     = "e2e-a"
	siteRegion      = "e2e-remote"
	bareRegion      = "e2e-bare"
	bareNetns       = "uptime-bare"
	bareLinkHost    = "bare0" // the node's end of the link
	bareNodeAddr    = "10.251.0.1"
	bareAddr        = "10.251.0.2"
	bareTokenSecret = "region-e2e-bare-token"
	siteTokenSecret = "region-e2e-remote-token"
	// The remote site's namespace and release, as docs/install.md names them.
	siteNS      = "uptime-probe"
	siteRelease = "probe-e2e-remote"
	remoteMon   = "e2e-remote"
	// apiServiceName is the chart's API Service, the name in its certificate.
	apiServiceName = "uptime-operator-api." + ns + ".svc"
)

// remoteValues installs one managed region and exposes the API Service
// (and so the probe API's TLS port) on a NodePort: "make /probe/
// reachable from outside" of docs/install.md without an ingress controller.
const remoteValues = `
allowPrivateTargets: true
aggregatedAPI: {enabled: true}
trustedCA: {configMap: e2e-trusted-ca, key: ca.crt}
api:
  service: {type: NodePort}
regions:
- name: e2e-a
  displayName: Region A
  city: Aville
  country: DE
  continent: europe
  placement: {mode: managed, replicas: 1}
`

// siteKubeconfig is the second cluster's admin kubeconfig; its apiserver is
// reached over the link.
func siteKubeconfig() string {
	return filepath.Join(os.Getenv("HOME"), ".cache", "uptime-operator", "cluster", "run-site2", "admin.kubeconfig")
}

func siteKubectl(args ...string) string {
	GinkgoHelper()
	out, err := run("kubectl", append([]string{"--kubeconfig", siteKubeconfig()}, args...)...)
	Expect(err).NotTo(HaveOccurred(), out)
	return out
}

// siteUp brings the second cluster up (or finds it running), loads the
// release's image into it and points its DNS at the first node for the
// API Service's name.
func siteUp() {
	GinkgoHelper()
	out, err := runIn("", "env", "SITE=2", "hack/cluster.sh", "up")
	Expect(err).NotTo(HaveOccurred(), out)
	version, err := chartVersion()
	Expect(err).NotTo(HaveOccurred())
	out, err = runIn("", "env", "SITE=2", "hack/cluster.sh", "load", filepath.Join(releaseDir, "uptime-operator-image-"+version+".tar"))
	Expect(err).NotTo(HaveOccurred(), out)
	corefile := siteKubectl("-n", "kube-system", "get", "configmap", "coredns", "-o", "jsonpath={.data.Corefile}")
	if !strings.Contains(corefile, apiServiceName) {
		corefile = strings.Replace(corefile, ".:53 {\n", ".:53 {\n    hosts {\n        "+nodeIP+" "+apiServiceName+"\n        fallthrough\n    }\n", 1)
		b, err := json.Marshal(map[string]any{"data": map[string]string{"Corefile": corefile}})
		Expect(err).NotTo(HaveOccurred())
		siteKubectl("-n", "kube-system", "patch", "configmap", "coredns", "--type=merge", "-p", string(b))
		siteKubectl("-n", "kube-system", "rollout", "restart", "deploy/coredns")
	}
	siteKubectl("-n", "kube-system", "rollout", "status", "deploy/coredns", "--timeout=120s")
}

// siteInstall is docs/install.md's step 2 on the remote cluster.
func siteInstall(token, caFile, serverURL string) {
	GinkgoHelper()
	_, _ = run("helm", "--kubeconfig", siteKubeconfig(), "uninstall", siteRelease, "-n", siteNS, "--wait", "--timeout", "2m")
	_, _ = run("kubectl", "--kubeconfig", siteKubeconfig(), "delete", "namespace", siteNS, "--timeout=120s")
	siteKubectl("create", "namespace", siteNS)
	siteKubectl("-n", siteNS, "create", "secret", "generic", siteTokenSecret, "--from-literal=token="+token)
	siteKubectl("-n", siteNS, "create", "configmap", "uptime-manager-ca", "--from-file=ca.crt="+caFile)
	out, err := run("helm", "--kubeconfig", siteKubeconfig(), "install", siteRelease, chartPackage(), "-n", siteNS,
		"--set", "mode=remote",
		"--set", "remote.serverURL="+serverURL,
		"--set", "remote.region="+siteRegion,
		"--set", "remote.tokenSecret.name="+siteTokenSecret,
		"--set", "remote.serverCA.configMap=uptime-manager-ca",
		"--set", "remote.allowPrivate=true",
		"--wait", "--timeout", "3m")
	Expect(err).NotTo(HaveOccurred(), out)
}

// bareSite is the bare agent's namespace, files and process.
type bareSite struct {
	dir       string // token, CA, buffer and log
	tokenFile string
	agent     *exec.Cmd
	log       *os.File
}

func (b *bareSite) bufferDir() string { return filepath.Join(b.dir, "buffer") }

// bareUp makes the namespace and the routed link (idempotent after
// bareDown).
func bareUp() {
	GinkgoHelper()
	bareDown()
	must := func(args ...string) {
		GinkgoHelper()
		out, err := run(args[0], args[1:]...)
		Expect(err).NotTo(HaveOccurred(), out)
	}
	in := func(args ...string) {
		GinkgoHelper()
		must(append([]string{"ip", "netns", "exec", bareNetns}, args...)...)
	}
	must("ip", "netns", "add", bareNetns)
	must("ip", "link", "add", bareLinkHost, "type", "veth", "peer", "name", "eth0", "netns", bareNetns)
	must("ip", "addr", "add", bareNodeAddr+"/30", "dev", bareLinkHost)
	must("ip", "link", "set", bareLinkHost, "up")
	in("ip", "link", "set", "lo", "up")
	in("ip", "addr", "add", bareAddr+"/30", "dev", "eth0")
	in("ip", "link", "set", "eth0", "up")
	in("ip", "route", "add", "default", "via", bareNodeAddr)
	// `ip netns exec` bind-mounts these over /etc/hosts and /etc/resolv.conf.
	etc := filepath.Join("/etc/netns", bareNetns)
	Expect(os.MkdirAll(etc, 0o755)).To(Succeed())
	Expect(os.WriteFile(filepath.Join(etc, "hosts"), []byte("127.0.0.1 localhost\n"+nodeIP+" "+apiServiceName+"\n"), 0o644)).To(Succeed())
	Expect(os.WriteFile(filepath.Join(etc, "resolv.conf"), []byte("nameserver 127.0.0.1\n"), 0o644)).To(Succeed())
}

// bareDown removes the namespace (and with it the link) and its /etc files;
// hack/cluster.sh down does the same for a run that died.
func bareDown() {
	_, _ = run("ip", "link", "del", bareLinkHost)
	_, _ = run("ip", "netns", "del", bareNetns)
	_ = os.RemoveAll(filepath.Join("/etc/netns", bareNetns))
}

// inBare runs a command in the bare agent's namespace.
func inBare(args ...string) {
	GinkgoHelper()
	out, err := run("ip", append([]string{"netns", "exec", bareNetns}, args...)...)
	Expect(err).NotTo(HaveOccurred(), out)
}

// start runs the agent exactly as docs/install.md says, plus the flags a
// private CA and a private target need.
func (b *bareSite) start(serverURL, caFile string) {
	GinkgoHelper()
	Expect(b.agent).To(BeNil())
	bin := filepath.Join(repoRoot, "bin", "e2e", "uptime-operator")
	var err error
	b.log, err = os.OpenFile(filepath.Join(b.dir, "agent.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	Expect(err).NotTo(HaveOccurred())
	b.agent = exec.Command("ip", "netns", "exec", bareNetns, bin, "probe",
		"--region", bareRegion, "--server", serverURL, "--token-file", b.tokenFile, "--buffer-dir", b.bufferDir(),
		"--server-ca-file", caFile, "--allow-private", "--listen", net.JoinHostPort(bareAddr, "8081"))
	b.agent.Stdout, b.agent.Stderr = b.log, b.log
	Expect(b.agent.Start()).To(Succeed())
	fmt.Fprintf(GinkgoWriter, "bare agent: pid %d, log %s\n", b.agent.Process.Pid, b.log.Name())
}

func (b *bareSite) stop() {
	if b.agent == nil {
		return
	}
	_ = b.agent.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = b.agent.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = b.agent.Process.Kill()
		<-done
	}
	b.agent = nil
	_ = b.log.Close()
}

// agentMetric reads one family of the bare agent's /metrics (summed over
// its labels, or those matching label when set).
func agentMetric(name, label string) (float64, error) {
	return metricAt(net.JoinHostPort(bareAddr, "8081"), name, label)
}

func mustMetricAt(addr, name, label string) float64 {
	GinkgoHelper()
	v, err := metricAt(addr, name, label)
	Expect(err).NotTo(HaveOccurred())
	return v
}

// metricAt reads one family of an agent's /metrics at addr.
func metricAt(addr, name, label string) (float64, error) {
	code, body, err := httpDo("GET", "http://"+addr+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	if code != 200 {
		return 0, fmt.Errorf("agent /metrics: %d", code)
	}
	sum := 0.0
	for _, line := range strings.Split(string(body), "\n") {
		if !strings.HasPrefix(line, name+" ") && !strings.HasPrefix(line, name+"{") {
			continue
		}
		if label != "" && !strings.Contains(line, label) {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			return 0, err
		}
		sum += v
	}
	return sum, nil
}

func mustAgentMetric(name, label string) float64 {
	GinkgoHelper()
	v, err := agentMetric(name, label)
	Expect(err).NotTo(HaveOccurred())
	return v
}

// storedCheck is one check record of the REST API.
type storedCheck struct {
	ID        string `json:"id"`
	Region    string `json:"region"`
	Status    string `json:"status"`
	CheckedAt string `json:"checked_at"`
}

func (c storedCheck) at() time.Time {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999"} {
		if t, err := time.Parse(layout, c.CheckedAt); err == nil {
			return t
		}
	}
	return time.Time{}
}

// regionChecks are the stored checks of the remote Monitor from one
// region, oldest first.
func regionChecks(uid, region string) []storedCheck {
	GinkgoHelper()
	out, err := rawAPI(fmt.Sprintf("/namespaces/default/stats/%s/checks?limit=5000&region=%s", uid, region))
	Expect(err).NotTo(HaveOccurred(), out)
	var list []storedCheck
	for _, it := range items(out) {
		b, _ := json.Marshal(it)
		var c storedCheck
		Expect(json.Unmarshal(b, &c)).To(Succeed())
		if c.Region == region {
			list = append(list, c)
		}
	}
	sort.Slice(list, func(i, j int) bool { return list[i].at().Before(list[j].at()) })
	return list
}

// explanation is the part of GET /monitors/:id/explanation the specs read.
type explanation struct {
	State      string   `json:"state"`
	Abstaining []string `json:"abstaining_regions"`
	Votes      []struct {
		Region string `json:"region"`
		Vote   string `json:"vote"`
		Error  string `json:"error"`
	} `json:"region_votes"`
	Summary string `json:"summary"`
}

func (x explanation) vote(region string) string {
	for _, v := range x.Votes {
		if v.Region == region {
			return v.Vote
		}
	}
	return ""
}

func explain(uid string) (explanation, string, error) {
	out, err := rawAPI(fmt.Sprintf("/namespaces/default/monitors/%s/explanation", uid))
	if err != nil {
		return explanation{}, out, err
	}
	var x explanation
	return x, out, json.Unmarshal([]byte(out), &x)
}

// regionLine is a region's row as `kubectl get proberegions` would judge it.
func regionLine(region string) string {
	out, _ := kubectl("get", "proberegion", region, "-o",
		`jsonpath={.metadata.name}: online={.status.online} agents={.status.onlineAgents} lastContact={.status.lastContact}`)
	return out
}

// regionStatus reads a ProbeRegion's status as kubectl shows it.
func regionStatus(region string) (monv1.ProbeRegionStatus, error) {
	out, err := kubectl("get", "proberegion", region, "-o", "json")
	if err != nil {
		return monv1.ProbeRegionStatus{}, fmt.Errorf("get proberegion %s: %w: %s", region, err, out)
	}
	var pr monv1.ProbeRegion
	if err := json.Unmarshal([]byte(out), &pr); err != nil {
		return monv1.ProbeRegionStatus{}, err
	}
	return pr.Status, nil
}

func mustRegionStatus(region string) monv1.ProbeRegionStatus {
	GinkgoHelper()
	st, err := regionStatus(region)
	Expect(err).NotTo(HaveOccurred())
	return st
}

// noGaps checks that checks (oldest first) from..to follow each other at
// most 1.5 intervals apart: no result of the window was lost.
func noGaps(checks []storedCheck, from, to time.Time) (int, error) {
	var in []time.Time
	for _, c := range checks {
		if t := c.at(); !t.Before(from) && !t.After(to) {
			in = append(in, t)
		}
	}
	if len(in) == 0 {
		return 0, fmt.Errorf("no check stored between %s and %s", from.Format(time.TimeOnly), to.Format(time.TimeOnly))
	}
	limit := 3 * checkInterval * time.Second / 2
	if d := in[0].Sub(from); d > limit {
		return len(in), fmt.Errorf("first check of the window %s after its start", d)
	}
	for i := 1; i < len(in); i++ {
		if d := in[i].Sub(in[i-1]); d > limit {
			return len(in), fmt.Errorf("%s between checks at %s and %s", d, in[i-1].Format(time.TimeOnly), in[i].Format(time.TimeOnly))
		}
	}
	return len(in), nil
}

// uniqueIDs fails when a check id is stored twice.
func uniqueIDs(checks []storedCheck) error {
	seen := map[string]bool{}
	for _, c := range checks {
		if seen[c.ID] {
			return fmt.Errorf("check %s stored twice", c.ID)
		}
		seen[c.ID] = true
	}
	return nil
}

var _ = Describe("remote regions: a second cluster and a bare agent, each in a network namespace of its own", Ordered, func() {
	var (
		site       = &bareSite{}
		targetIP   string
		receiverIP string
		uid        string
		serverURL  string
		caFile     string
	)

	BeforeAll(func() {
		resetCluster()
		installTestCA()
		dir := GinkgoT().TempDir()
		values := filepath.Join(dir, "values.yaml")
		Expect(os.WriteFile(values, []byte(remoteValues), 0o644)).To(Succeed())
		mustHelm("install", release, chartPackage(), "-n", ns, "--create-namespace", "-f", values, "--wait", "--timeout", "5m")
		targetIP, receiverIP = deployTargetAndReceiver()

		// docs/install.md, "Remote regions", step 1: a token and a remote
		// region on the manager's cluster.
		token := newToken()
		mustKubectl("-n", ns, "create", "secret", "generic", bareTokenSecret, "--from-literal=token="+token)
		apply(fmt.Sprintf(`apiVersion: monitoring.uptime-operator.io/v1alpha1
kind: ProbeRegion
metadata:
  name: %s
spec:
  displayName: Bare VM
  city: Ashburn
  country: US
  continent: north-america
  placement:
    mode: remote
    tokenSecretRef: {name: %s, key: token}
`, bareRegion, bareTokenSecret))

		siteToken := newToken()
		mustKubectl("-n", ns, "create", "secret", "generic", siteTokenSecret, "--from-literal=token="+siteToken)
		apply(fmt.Sprintf(`apiVersion: monitoring.uptime-operator.io/v1alpha1
kind: ProbeRegion
metadata:
  name: %s
spec:
  displayName: Remote cluster
  city: Dublin
  country: IE
  continent: europe
  placement:
    mode: remote
    tokenSecretRef: {name: %s, key: token}
`, siteRegion, siteTokenSecret))

		// Step 2, outside Kubernetes: the agent as a plain process, with
		// the token in a file and the CA that signed the probe API's
		// certificate.
		site.dir = GinkgoT().TempDir()
		site.tokenFile = filepath.Join(site.dir, "token")
		Expect(os.WriteFile(site.tokenFile, []byte(token+"\n"), 0o600)).To(Succeed())
		caFile = filepath.Join(site.dir, "ca.crt")
		ca, err := base64.StdEncoding.DecodeString(mustKubectl("-n", ns, "get", "secret", "uptime-operator-api-cert", "-o", `jsonpath={.data.ca\.crt}`))
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(caFile, ca, 0o644)).To(Succeed())
		nodePort := strings.TrimSpace(mustKubectl("-n", ns, "get", "svc", "uptime-operator-api", "-o", `jsonpath={.spec.ports[?(@.name=="probe")].nodePort}`))
		Expect(nodePort).NotTo(BeEmpty())
		serverURL = "https://" + net.JoinHostPort(apiServiceName, nodePort)
		bareUp()
		DeferCleanup(bareDown)
		site.start(serverURL, caFile)
		DeferCleanup(site.stop)
		// Step 2 on a remote cluster: the chart in remote mode.
		siteUp()
		siteInstall(siteToken, caFile, serverURL)

		apply(receiverChannel(webSecret) + fmt.Sprintf(`apiVersion: monitoring.uptime-operator.io/v1alpha1
kind: Monitor
metadata: {name: %s, namespace: default}
spec:
  name: E2E remote target
  type: http
  url: http://%s:8080/
  intervalSeconds: %d
  regions: [%s, %s, %s]
  http: {timeoutMs: 3000}
`, remoteMon, targetIP, checkInterval, localRegion, siteRegion, bareRegion))
		Eventually(func() string {
			out, _ := kubectl("-n", workNS, "get", "monitor", remoteMon, "-o", "jsonpath={.metadata.uid}")
			return out
		}, time.Minute, time.Second).ShouldNot(BeEmpty())
		uid = mustKubectl("-n", workNS, "get", "monitor", remoteMon, "-o", "jsonpath={.metadata.uid}")
	})

	AfterAll(func() {
		if CurrentSpecReport().Failed() || os.Getenv("UPTIME_E2E_KEEP_AGENT_LOG") != "" {
			if b, err := os.ReadFile(filepath.Join(site.dir, "agent.log")); err == nil {
				fmt.Fprintf(GinkgoWriter, "bare agent log (tail):\n%s\n", tail(string(b), 40))
			}
		}
		site.stop()
		bareDown()
		_, _ = kubectl("-n", workNS, "delete", "monitor", remoteMon, "--timeout=60s")
		_, _ = kubectl("delete", "proberegion", bareRegion, siteRegion, "--timeout=60s")
		_, _ = run("helm", "--kubeconfig", siteKubeconfig(), "uninstall", siteRelease, "-n", siteNS, "--wait", "--timeout", "2m")
		_, _ = helm("uninstall", release, "-n", ns, "--wait", "--timeout", "3m")
	})

	It("judges a Monitor with a local, a remote-cluster and a bare region: all three vote, each region online with one agent", func() {
		Eventually(func() []string {
			return []string{regionLine(localRegion), regionLine(siteRegion), regionLine(bareRegion)}
		}, 3*time.Minute, 2*time.Second).Should(ConsistOf(
			HavePrefix(localRegion+": online=true agents=1 "), HavePrefix(siteRegion+": online=true agents=1 "),
			HavePrefix(bareRegion+": online=true agents=1 ")))
		Eventually(func(g Gomega) {
			m, err := getMonitor(workNS, remoteMon)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(string(m.Status.CurrentStatus)).To(Equal("up"))
			g.Expect(m.Status.Regions).To(HaveLen(3))
			for _, r := range m.Status.Regions {
				g.Expect(r.Status).To(Equal("up"), "region %s", r.Code)
			}
			x, _, err := explain(uid)
			g.Expect(err).NotTo(HaveOccurred())
			for _, r := range []string{localRegion, siteRegion, bareRegion} {
				g.Expect(x.vote(r)).To(Equal("pass"), "region %s", r)
			}
		}, 3*time.Minute, 3*time.Second).Should(Succeed())
		proved("remote: the chart in remote mode on a second cluster (%s), a bare agent (`uptime-operator probe` in netns %s) and managed region %s all vote pass, both remote ones over routed links to the API Service's NodePort, TLS verified with the chart's CA; `kubectl get proberegions`:\n%s",
			siteRegion, bareNetns, localRegion, mustKubectl("get", "proberegions"))
	})

	It("runs a browser Monitor from the bare agent's local Chromium: a page rendered by its script is up, its region's vote passes", func() {
		apply(fmt.Sprintf(`apiVersion: monitoring.uptime-operator.io/v1alpha1
kind: Monitor
metadata: {name: e2e-browser, namespace: default}
spec:
  name: E2E app in a browser
  type: browser
  url: http://%s:8080/app
  intervalSeconds: %d
  regions: [%s]
  browser: {waitForSelector: "#ready", waitForText: Storefront ready, timeoutMs: 45000}
`, targetIP, checkInterval, bareRegion))
		DeferCleanup(func() { _, _ = kubectl("-n", workNS, "delete", "monitor", "e2e-browser", "--timeout=60s") })
		Eventually(func(g Gomega) {
			m, err := getMonitor(workNS, "e2e-browser")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(string(m.Status.CurrentStatus)).To(Equal("up"))
			g.Expect(m.Status.Regions).To(HaveLen(1))
			g.Expect(m.Status.Regions[0].Code).To(Equal(bareRegion))
			g.Expect(m.Status.Regions[0].Status).To(Equal("up"))
		}, 4*time.Minute, 3*time.Second).Should(Succeed())
		proved("browser: the bare agent's local Chromium loaded http://%s:8080/app and found the text its script renders; region %s up",
			targetIP, bareRegion)
	})

	It("confirms a real outage from the three regions: one incident, one signed monitor.down", func() {
		before, err := deliveries(receiverIP)
		Expect(err).NotTo(HaveOccurred())
		downBefore := len(eventsFor(before, "monitor.down", ""))
		setTarget(targetIP, "fail")
		var id string
		Eventually(func(g Gomega) {
			m, err := getMonitor(workNS, remoteMon)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(m.Status.OpenIncident).NotTo(BeNil())
			// The default quorum opens it on the first two failing regions.
			g.Expect(len(m.Status.OpenIncident.ConfirmingRegions)).To(BeNumerically(">=", 2))
			g.Expect(m.Status.OpenIncident.ConfirmingRegions).To(HaveEach(BeElementOf(localRegion, siteRegion, bareRegion)))
			id = m.Status.OpenIncident.ID
		}, 3*time.Minute, 3*time.Second).Should(Succeed())
		var confirming []string
		Eventually(func(g Gomega) {
			m, err := getMonitor(workNS, remoteMon)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(m.Status.OpenIncident).NotTo(BeNil())
			g.Expect(m.Status.OpenIncident.ID).To(Equal(id))
			confirming = m.Status.OpenIncident.ConfirmingRegions
			x, raw, err := explain(uid)
			g.Expect(err).NotTo(HaveOccurred())
			for _, r := range []string{localRegion, siteRegion, bareRegion} {
				g.Expect(x.vote(r)).To(Equal("fail"), "region %s: %s", r, raw)
			}
		}, 2*time.Minute, 3*time.Second).Should(Succeed(), "all three regions fail the target")
		expectDelivery(receiverIP, "monitor.down", id)
		Consistently(func(g Gomega) {
			ds, err := deliveries(receiverIP)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(eventsFor(ds, "monitor.down", "")).To(HaveLen(downBefore + 1))
		}, checkInterval*time.Second, 5*time.Second).Should(Succeed())
		setTarget(targetIP, "recover")
		Eventually(func(g Gomega) {
			ds, err := deliveries(receiverIP)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(eventsFor(ds, "monitor.up", id)).To(HaveLen(1))
			m, err := getMonitor(workNS, remoteMon)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(string(m.Status.CurrentStatus)).To(Equal("up"))
		}, 3*time.Minute, 3*time.Second).Should(Succeed())
		proved("remote: target failing → one incident %s (opened on %v), all three regions voting fail, one signed monitor.down, one monitor.up on recovery", id, confirming)
	})

	It("survives cut links to both remote regions: no incident, each goes stale and abstains, each backlog is replayed once", func() {
		// The link is cut where the agent's traffic to the manager leaves
		// its site: the bare agent's own packets (OUTPUT) and the remote
		// cluster's Pods' (FORWARD, in its node's namespace). The target
		// stays reachable from both.
		sitePod := strings.TrimSpace(siteKubectl("-n", siteNS, "get", "pods", "-l", "uptime-operator.io/region="+siteRegion,
			"--field-selector=status.phase=Running", "-o", "jsonpath={.items[0].status.podIP}"))
		Expect(sitePod).NotTo(BeEmpty())
		type cutLink struct {
			region, netns, chain, metrics string
			replayedBefore, maxBuffered   float64
			toStale, toOffline, toOnline  time.Duration
			restored                      bool
			// What the region's status said: replayedResults before the
			// cut, the largest bufferedResults seen, the replayed results
			// it added.
			statusReplayedBefore, statusMaxBuffered, statusReplayed int64
		}
		links := []*cutLink{
			{region: bareRegion, netns: bareNetns, chain: "OUTPUT", metrics: net.JoinHostPort(bareAddr, "8081")},
			{region: siteRegion, netns: "uptime-k8s-2", chain: "FORWARD", metrics: net.JoinHostPort(sitePod, "8081")},
		}
		rule := func(l *cutLink, op string) []string {
			return []string{"netns", "exec", l.netns, "iptables", op, l.chain, "-d", nodeIP, "-j", "DROP", "-m", "comment", "--comment", "uptime-e2e link cut"}
		}
		for _, l := range links {
			l.replayedBefore = mustMetricAt(l.metrics, "uptime_probe_replayed_results_total", "")
			l.statusReplayedBefore = mustRegionStatus(l.region).ReplayedResults
		}
		start := time.Now()
		for _, l := range links {
			out, err := run("ip", rule(l, "-I")...)
			Expect(err).NotTo(HaveOccurred(), out)
			DeferCleanup(func() {
				if !l.restored {
					_, _ = run("ip", rule(l, "-D")...)
				}
			})
		}
		// At least three intervals, and until each region is both stale in
		// the judgement and offline in its status; never an incident, as
		// the local region still passes.
		Eventually(func(g Gomega) {
			m, err := getMonitor(workNS, remoteMon)
			g.Expect(err).NotTo(HaveOccurred())
			Expect(m.Status.OpenIncident).To(BeNil(), "an incident opened while only the links to the remote regions were cut")
			x, _, err := explain(uid)
			g.Expect(err).NotTo(HaveOccurred())
			Expect(x.vote(localRegion)).To(Equal("pass"))
			for _, l := range links {
				if b, err := metricAt(l.metrics, "uptime_probe_buffered_results", ""); err == nil {
					l.maxBuffered = max(l.maxBuffered, b)
				}
				if st, err := regionStatus(l.region); err == nil {
					l.statusMaxBuffered = max(l.statusMaxBuffered, st.BufferedResults)
				}
				if l.toStale == 0 && slices.Contains(x.Abstaining, l.region) {
					l.toStale = time.Since(start)
				}
				if line := regionLine(l.region); l.toOffline == 0 && line != "" && !strings.Contains(line, "online=true") {
					l.toOffline = time.Since(start)
				}
				g.Expect(l.toStale).NotTo(BeZero(), "%s not stale yet", l.region)
				g.Expect(l.toOffline).NotTo(BeZero(), "%s not offline yet", l.region)
			}
			g.Expect(x.State).To(Equal("up"))
			g.Expect(time.Since(start)).To(BeNumerically(">=", 3*checkInterval*time.Second))
		}, 5*time.Minute, 3*time.Second).Should(Succeed())
		cutFor := time.Since(start)
		for _, l := range links {
			out, err := run("ip", rule(l, "-D")...)
			Expect(err).NotTo(HaveOccurred(), out)
			l.restored = true
		}
		restoredAt := time.Now()
		Eventually(func(g Gomega) {
			x, _, err := explain(uid)
			g.Expect(err).NotTo(HaveOccurred())
			for _, l := range links {
				g.Expect(metricAt(l.metrics, "uptime_probe_buffered_results", "")).To(BeZero(), l.region)
				g.Expect(regionLine(l.region)).To(HavePrefix(l.region + ": online=true agents=1 "))
				if l.toOnline == 0 {
					l.toOnline = time.Since(restoredAt)
				}
				g.Expect(x.vote(l.region)).To(Equal("pass"), l.region)
				if st, err := regionStatus(l.region); err == nil {
					l.statusMaxBuffered = max(l.statusMaxBuffered, st.BufferedResults)
				}
			}
		}, 3*time.Minute, 2*time.Second).Should(Succeed())
		var report []string
		for _, l := range links {
			replayed := mustMetricAt(l.metrics, "uptime_probe_replayed_results_total", "") - l.replayedBefore
			Expect(replayed).To(BeNumerically(">=", 3), "%s: results checked during the cut were replayed", l.region)
			// The region's status (docs/operations.md, "A cut link"): the
			// managers counted at least what the agent says it replayed (a
			// push accepted whose answer was lost is replayed and counted
			// again), and nothing is left buffered. The status is
			// refreshed every 30 s.
			Eventually(func(g Gomega) {
				st, err := regionStatus(l.region)
				g.Expect(err).NotTo(HaveOccurred())
				l.statusMaxBuffered = max(l.statusMaxBuffered, st.BufferedResults)
				l.statusReplayed = st.ReplayedResults - l.statusReplayedBefore
				g.Expect(float64(l.statusReplayed)).To(BeNumerically(">=", replayed), "%s: status.replayedResults", l.region)
				g.Expect(st.BufferedResults).To(BeZero(), "%s: status.bufferedResults", l.region)
				g.Expect(st.LastReplay).NotTo(BeNil(), "%s: status.lastReplay", l.region)
				g.Expect(st.LastReplay.Time).To(BeTemporally(">=", start.Truncate(time.Second)), "%s: status.lastReplay", l.region)
			}, 2*time.Minute, 2*time.Second).Should(Succeed())
			checks := regionChecks(uid, l.region)
			Expect(uniqueIDs(checks)).To(Succeed(), l.region)
			n, err := noGaps(checks, start, restoredAt)
			Expect(err).NotTo(HaveOccurred(), "%s: the checks of the cut were not all stored", l.region)
			report = append(report, fmt.Sprintf("%s stale and abstaining after %s, offline after %s, up to %.0f results buffered, online again %s after the link returned, %.0f replayed, %d checks of the cut stored with no gap and no id twice; status: replayedResults +%d, bufferedResults at most %d seen, back to 0",
				l.region, l.toStale.Round(time.Second), l.toOffline.Round(time.Second), l.maxBuffered, l.toOnline.Round(time.Second), replayed, n,
				l.statusReplayed, l.statusMaxBuffered))
		}
		m, err := getMonitor(workNS, remoteMon)
		Expect(err).NotTo(HaveOccurred())
		Expect(m.Status.OpenIncident).To(BeNil())
		proved("remote: links to %s and %s cut for %s (iptables DROP towards the manager), no incident (duplicates 0):\n%s",
			bareRegion, siteRegion, cutFor.Round(time.Second), strings.Join(report, "\n"))
	})

	It("tells a path failure from an outage: the target unreachable from the bare region only opens no incident, and the explanation names the failing region", func() {
		block := []string{"iptables", "-I", "OUTPUT", "-d", targetIP, "-p", "tcp", "--dport", "8080", "-j", "REJECT", "--reject-with", "tcp-reset"}
		inBare(block...)
		unblocked := false
		unblock := func() {
			if !unblocked {
				inBare(append([]string{"iptables", "-D"}, block[2:]...)...)
				unblocked = true
			}
		}
		DeferCleanup(unblock)
		var x explanation
		var raw string
		Eventually(func(g Gomega) {
			var err error
			x, raw, err = explain(uid)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(x.vote(bareRegion)).To(Equal("fail"), raw)
			g.Expect(x.vote(localRegion)).To(Equal("pass"), raw)
			g.Expect(x.vote(siteRegion)).To(Equal("pass"), raw)
		}, 2*time.Minute, 3*time.Second).Should(Succeed())
		Expect(x.State).To(Equal("unconfirmed_failure"), raw)
		Consistently(func(g Gomega) {
			m, err := getMonitor(workNS, remoteMon)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(m.Status.OpenIncident).To(BeNil())
		}, 2*checkInterval*time.Second, 5*time.Second).Should(Succeed())
		unblock()
		Eventually(func() string { x, _, _ := explain(uid); return x.vote(bareRegion) }, 2*time.Minute, 3*time.Second).Should(Equal("pass"))
		proved("remote: target unreachable from %s only → no incident at the default quorum; explanation: state %s, %q, %s votes fail (%s)",
			bareRegion, x.State, x.Summary, bareRegion, voteError(x, bareRegion))
	})

	It("rotates the region token as docs/operations.md says: refused and buffering in between, nothing lost after", func() {
		errorsBefore := mustAgentMetric("uptime_probe_result_pushes_total", `outcome="error"`)
		start := time.Now()
		token := newToken()
		// First the remote side (the agent rereads its file per request)...
		Expect(os.WriteFile(site.tokenFile, []byte(token+"\n"), 0o600)).To(Succeed())
		replayedBefore := mustAgentMetric("uptime_probe_replayed_results_total", "")
		var refusedAfter time.Duration
		buffered := 0.0
		// Refused, and two checks' results waiting, before the manager
		// learns the new token.
		Eventually(func(g Gomega) {
			g.Expect(agentMetric("uptime_probe_result_pushes_total", `outcome="error"`)).To(BeNumerically(">", errorsBefore))
			if refusedAfter == 0 {
				refusedAfter = time.Since(start)
			}
			b, err := agentMetric("uptime_probe_buffered_results", "")
			g.Expect(err).NotTo(HaveOccurred())
			buffered = b
			g.Expect(b).To(BeNumerically(">=", 2))
		}, 2*time.Minute, time.Second).Should(Succeed(), "the agent's new token is refused until the manager's Secret has it")
		// ...then the manager's Secret.
		changed := time.Now()
		apply(fmt.Sprintf(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":%q,"namespace":%q},"stringData":{"token":%q}}`, bareTokenSecret, ns, token))
		Eventually(func(g Gomega) {
			g.Expect(agentMetric("uptime_probe_buffered_results", "")).To(BeZero())
			g.Expect(agentMetric("uptime_probe_last_delivery_timestamp_seconds", "")).To(BeNumerically(">", float64(changed.Unix())))
		}, 2*time.Minute, time.Second).Should(Succeed())
		accepted := time.Since(changed)
		done := time.Now()
		replayed := mustAgentMetric("uptime_probe_replayed_results_total", "") - replayedBefore
		Expect(replayed).To(BeNumerically(">=", buffered), "the results refused meanwhile were delivered")
		checks := regionChecks(uid, bareRegion)
		Expect(uniqueIDs(checks)).To(Succeed())
		n, err := noGaps(checks, start, done)
		Expect(err).NotTo(HaveOccurred())
		Expect(n).To(BeNumerically(">=", 2))
		// The ProbeRegion status follows the agent's return within a status
		// round: after a minute of refusals the region went offline.
		Eventually(func() string { return regionLine(bareRegion) }, time.Minute, 2*time.Second).Should(HavePrefix(bareRegion + ": online=true agents=1 "))
		proved("remote: token rotated (agent's file first, then the manager's Secret): first refusal %s after the agent's change (%.0f failed pushes in all, %.0f results buffered), accepted %s after the Secret's; %.0f results replayed, %d checks of the window stored, no gap, no id twice",
			refusedAfter.Round(time.Second), mustAgentMetric("uptime_probe_result_pushes_total", `outcome="error"`)-errorsBefore, buffered,
			accepted.Round(time.Second), replayed, n)
	})

	It("refuses a forged batch: the bare region's token claiming region e2e-a gets 403", func() {
		token, err := os.ReadFile(site.tokenFile)
		Expect(err).NotTo(HaveOccurred())
		pool := x509.NewCertPool()
		ca, err := os.ReadFile(caFile)
		Expect(err).NotTo(HaveOccurred())
		Expect(pool.AppendCertsFromPEM(ca)).To(BeTrue())
		nodePort := strings.TrimPrefix(serverURL[strings.LastIndex(serverURL, ":"):], ":")
		c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: apiServiceName},
		}}
		forgedID := newUUID()
		body, _ := json.Marshal(map[string]any{"region": localRegion, "agent_id": "forger", "results": []map[string]any{{
			"id": forgedID, "monitor_id": uid, "region": localRegion, "checked_at": time.Now().UTC().Format(time.RFC3339Nano),
			"status": "down", "status_code": nil, "response_time_ms": 1, "error_type": "connection", "error_message": "forged",
		}}})
		req, err := http.NewRequest("POST", "https://"+net.JoinHostPort(nodeIP, nodePort)+"/probe/v1/results", bytes.NewReader(body))
		Expect(err).NotTo(HaveOccurred())
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
		req.Header.Set("Content-Type", "application/json")
		resp, err := c.Do(req)
		Expect(err).NotTo(HaveOccurred())
		answer := new(bytes.Buffer)
		_, _ = answer.ReadFrom(resp.Body)
		resp.Body.Close()
		Expect(resp.StatusCode).To(Equal(http.StatusForbidden), answer.String())
		for _, ch := range regionChecks(uid, localRegion) {
			Expect(ch.ID).NotTo(Equal(forgedID))
		}
		m, err := getMonitor(workNS, remoteMon)
		Expect(err).NotTo(HaveOccurred())
		Expect(m.Status.OpenIncident).To(BeNil())
		proved("remote: a batch with %s's token claiming region %s → %d %s; nothing stored", bareRegion, localRegion, resp.StatusCode, strings.TrimSpace(answer.String()))
	})
})

func voteError(x explanation, region string) string {
	for _, v := range x.Votes {
		if v.Region == region {
			return v.Error
		}
	}
	return ""
}

// newToken is a region token as docs/install.md makes one
// (`openssl rand -hex 32`).
func newToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func newUUID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

var tailSplit = regexp.MustCompile(`\n`)

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := tailSplit.Split(strings.TrimRight(s, "\n"), -1)
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
