//go:build e2e

package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// The previous release hack/previous-release.sh built (its directory), or
// why it could not.
const (
	envPrevious      = "UPTIME_E2E_PREVIOUS"
	envPreviousError = "UPTIME_E2E_PREVIOUS_ERROR"
)

// upgradeValues are the values of both releases: two managed regions, the
// default SQLite store with one replica, the APIService forced on (so its
// availability during the upgrade is measured) and the suite's test CA for
// the receiver. Every key exists in the previous chart too.
const upgradeValues = `
allowPrivateTargets: true
aggregatedAPI: {enabled: true}
trustedCA: {configMap: e2e-trusted-ca, key: ca.crt}
` + twoRegions

// maxUpgradeGap bounds how long the admission webhook and the APIService may
// stop answering while one SQLite replica is replaced (a Recreate: the old
// Pod stops before the new one starts), as docs/upgrade.md states it.
const maxUpgradeGap = 90 * time.Second

var _ = Describe("upgrade from the previous release with data in place, and rollback", Ordered, Label("upgrade"), func() {
	var (
		previousChart string
		currentImage  string
		previousImage string
		valuesFile    string
		targetIP      string
		receiverIP    string
		apiIP         string
		pageID        string
		steadyDown    string // the incident of upg-refused, open from the start
		targetDown    string // the incident of upg-target, opened before the upgrade
		notes         upgradeNotes
		start         time.Time
	)

	BeforeAll(func() {
		start = time.Now()
		if why := os.Getenv(envPreviousError); why != "" {
			Fail("the previous release could not be built: " + why)
		}
		dir := os.Getenv(envPrevious)
		Expect(dir).NotTo(BeEmpty(), "no previous release (%s)", envPrevious)
		charts, _ := filepath.Glob(filepath.Join(dir, "uptime-operator-*.tgz"))
		Expect(charts).To(HaveLen(1), "the previous release's chart package in %s", dir)
		previousChart = charts[0]
		commit, err := os.ReadFile(filepath.Join(dir, "commit"))
		Expect(err).NotTo(HaveOccurred())
		previousImage = "ghcr.io/uptime-operator/uptime-operator:" + chartAppVersion(previousChart)
		currentImage = "ghcr.io/uptime-operator/uptime-operator:" + chartAppVersion(chartPackage())
		Expect(previousImage).NotTo(Equal(currentImage))
		notes = readUpgradeNotes()
		fmt.Fprintf(GinkgoWriter, "previous release: %s (%s) from commit %s\n", previousChart, previousImage, strings.TrimSpace(string(commit)))

		valuesFile = filepath.Join(GinkgoT().TempDir(), "values.yaml")
		Expect(os.WriteFile(valuesFile, []byte(upgradeValues), 0o644)).To(Succeed())
		resetCluster()
		installTestCA()
	})

	It("installs the previous release", func() {
		mustHelm("install", release, previousChart, "-n", ns, "--create-namespace", "-f", valuesFile, "--wait", "--timeout", "5m")
		mustKubectl("-n", ns, "rollout", "status", "deploy/uptime-operator-manager", "--timeout=180s")
		expectManagerImage(previousImage)
		expectAPIServiceAvailable()
		proved("helm install of the previous release %s: the manager runs %s", filepath.Base(previousChart), previousImage)
	})

	It("puts data in: monitors up and down, open incidents, check history, an alert channel, status page subscribers", func() {
		targetIP, receiverIP = deployTargetAndReceiver()
		apiIP = clusterIP(ns, "uptime-operator-api")
		monitor := func(name, url string) string {
			return fmt.Sprintf(`apiVersion: monitoring.uptime-operator.io/v1alpha1
kind: Monitor
metadata: {name: %s, namespace: default}
spec:
  name: %s
  type: http
  url: %s
  intervalSeconds: %d
  regions: [e2e-a, e2e-b]
  confirmation: {regions: 2}
  http: {timeoutMs: 3000}
---
`, name, name, url, checkInterval)
		}
		apply(receiverChannel(webSecret) +
			// Up throughout (the receiver's own list), down when the target
			// fails, and down from the start (nothing listens on 8089).
			monitor("upg-steady", "http://e2e-receiver.default.svc.cluster.local:8080/deliveries") +
			monitor("upg-target", "http://e2e-target.default.svc.cluster.local:8080/") +
			monitor("upg-refused", "http://e2e-target.default.svc.cluster.local:8089/") + `apiVersion: monitoring.uptime-operator.io/v1alpha1
kind: StatusPage
metadata: {name: upg-status, namespace: default}
spec:
  title: Upgrade status
  slug: upg-status
  isPublic: true
  monitors:
  - monitorRef: {name: upg-steady}
  - monitorRef: {name: upg-target}
`)
		waitRegionsOnline()
		expectNamedMonitorUp("upg-steady")
		expectNamedMonitorUp("upg-target")
		steadyDown = expectNamedIncidentOpen("upg-refused")
		expectAccepted(receiverIP, "monitor.down", steadyDown)

		pageID = strings.TrimSpace(mustKubectl("-n", workNS, "get", "statuspage", "upg-status", "-o", "jsonpath={.metadata.uid}"))
		Eventually(func() int {
			code, _, _ := httpDo("GET", "http://"+apiIP+":443/status/upg-status", nil)
			return code
		}, 2*time.Minute, 2*time.Second).Should(Equal(200))
		// Webhook subscribers (e-mail needs SMTP): pending, since their
		// confirmation goes to a path of the receiver that answers 404.
		for _, path := range []string{"/subscriber/ops", "/subscriber/oncall"} {
			req, err := http.NewRequest("POST", "http://"+apiIP+":443/s/upg-status/subscribe",
				strings.NewReader(fmt.Sprintf(`{"channel":"webhook","url":"https://e2e-receiver.default.svc.cluster.local:8443%s"}`, path)))
			Expect(err).NotTo(HaveOccurred())
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json")
			resp, err := httpClient.Do(req)
			Expect(err).NotTo(HaveOccurred())
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			Expect(resp.StatusCode).To(Equal(202), string(body))
		}
		snap := takeSnapshot(pageID)
		Expect(snap.Subscribers).To(HaveLen(2))
		proved("data in the previous release's SQLite store: %s", snap.summary())
	})

	It("upgrades to the current tree with the CHANGELOG's command: nothing lost, no alert twice, webhooks and APIService back within the bound", func() {
		// A delivery in flight: the receiver refuses (503, Retry-After 30)
		// the monitor.down of the incident that opens now, and accepts it
		// only once the upgrade is done.
		hold(receiverIP, true)
		setTarget(targetIP, "fail")
		targetDown = expectNamedIncidentOpen("upg-target")
		expectRefused(receiverIP, "monitor.down", targetDown)
		before := takeSnapshot(pageID)

		gaps := watchAvailability()
		out, err := runCommand(notes.upgrade(chartPackage()))
		Expect(err).NotTo(HaveOccurred(), out)
		waitRolledOut(currentImage)
		longest := gaps.stop()
		hold(receiverIP, false)

		expectAccepted(receiverIP, "monitor.down", targetDown)
		expectNoDuplicates(receiverIP)
		after := takeSnapshot(pageID)
		expectKept(before, after)
		proved("%s (%s → %s): %s kept; the in-flight monitor.down of incident %s delivered once after it; longest gap %s (bound %s)",
			notes.upgradeLine, previousImage, currentImage, after.summary(), targetDown, longest, maxUpgradeGap)
	})

	It("rolls back with helm rollback: the previous release starts on the migrated store, nothing lost, no alert twice", func() {
		hold(receiverIP, true)
		setTarget(targetIP, "recover")
		Eventually(func(g Gomega) {
			m, err := getMonitor(workNS, "upg-target")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(m.Status.OpenIncident).To(BeNil())
		}, 3*time.Minute, 3*time.Second).Should(Succeed())
		expectRefused(receiverIP, "monitor.up", targetDown)
		before := takeSnapshot(pageID)

		gaps := watchAvailability()
		out, err := runCommand(notes.rollback())
		Expect(err).NotTo(HaveOccurred(), out)
		waitRolledOut(previousImage)
		longest := gaps.stop()
		hold(receiverIP, false)

		expectAccepted(receiverIP, "monitor.up", targetDown)
		expectNoDuplicates(receiverIP)
		after := takeSnapshot(pageID)
		expectKept(before, after)
		// The previous release keeps checking on the newer schema: new
		// checks are stored after the rollback.
		Eventually(func() int { return takeSnapshot(pageID).checkCount() }, 2*time.Minute, 5*time.Second).Should(
			BeNumerically(">", after.checkCount()))
		proved("%s (%s → %s): the previous release runs on the store the current tree migrated; %s kept; the in-flight monitor.up of incident %s delivered once after it; longest gap %s (bound %s); upgrade and rollback spec took %s",
			notes.rollbackLine, currentImage, previousImage, after.summary(), targetDown, longest, maxUpgradeGap, time.Since(start).Round(time.Second))
	})
})

// chartAppVersion is the appVersion of a chart package.
func chartAppVersion(pkg string) string {
	GinkgoHelper()
	out, err := helm("show", "chart", pkg)
	Expect(err).NotTo(HaveOccurred(), out)
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "appVersion: "); ok {
			return strings.Trim(strings.TrimSpace(v), `"'`)
		}
	}
	Fail("no appVersion in " + pkg)
	return ""
}

// upgradeNotes are the commands of CHANGELOG.md's upgrade notes, which the
// spec runs as written (with the chart package of this run in place of the
// one they name).
type upgradeNotes struct{ upgradeLine, rollbackLine string }

// readUpgradeNotes reads the code block under "### Upgrading" of the first
// (newest) section of CHANGELOG.md: one helm upgrade and one helm rollback.
func readUpgradeNotes() upgradeNotes {
	GinkgoHelper()
	f, err := os.Open(filepath.Join(repoRoot, "CHANGELOG.md"))
	Expect(err).NotTo(HaveOccurred())
	defer f.Close()
	var n upgradeNotes
	in, fence := false, false
	for sc := bufio.NewScanner(f); sc.Scan(); {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "### Upgrading"):
			in = true
		case in && strings.HasPrefix(line, "```"):
			if fence {
				in = false
			}
			fence = !fence
		case in && fence && strings.HasPrefix(line, "helm upgrade "):
			n.upgradeLine = line
		case in && fence && strings.HasPrefix(line, "helm rollback "):
			n.rollbackLine = line
		}
		if strings.HasPrefix(line, "## [0") {
			break // the notes are those of the newest section
		}
	}
	Expect(n.upgradeLine).NotTo(BeEmpty(), "CHANGELOG.md has no helm upgrade command under ### Upgrading")
	Expect(n.rollbackLine).NotTo(BeEmpty(), "CHANGELOG.md has no helm rollback command under ### Upgrading")
	return n
}

// upgrade is the upgrade command with chart in place of the package named.
func (n upgradeNotes) upgrade(chart string) []string {
	GinkgoHelper()
	f := strings.Fields(n.upgradeLine)
	Expect(len(f)).To(BeNumerically(">", 3))
	Expect(f[3]).To(HaveSuffix(".tgz"), "the fourth word of %q is the chart package", n.upgradeLine)
	f[3] = chart
	Expect(f).To(ContainElement("--reset-then-reuse-values"))
	return f
}

func (n upgradeNotes) rollback() []string { return strings.Fields(n.rollbackLine) }

func runCommand(f []string) (string, error) {
	fmt.Fprintf(GinkgoWriter, "running: %s\n", strings.Join(f, " "))
	return run(f[0], f[1:]...)
}

// expectManagerImage waits for the manager's one ready Pod to run image.
func expectManagerImage(image string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		pods := managerPods(ns)
		g.Expect(pods).To(HaveLen(1))
		got := mustKubectl("-n", ns, "get", "pod", pods[0], "-o", "jsonpath={.spec.containers[0].image}")
		g.Expect(got).To(Equal(image))
	}, 3*time.Minute, 2*time.Second).Should(Succeed())
}

func expectAPIServiceAvailable() {
	GinkgoHelper()
	Eventually(func() string {
		out, _ := kubectl("get", "apiservice", "v1.api.uptime-operator.io",
			"-o", `jsonpath={.status.conditions[?(@.type=="Available")].status}`)
		return out
	}, 2*time.Minute, 2*time.Second).Should(Equal("True"))
}

// waitRolledOut waits for the manager to run image and serve again, and for
// both regions' probe Deployments to roll out and run it too, and the
// regions to be online. (Not waitRegionsOnline: the agent of the replaced
// probe Pod counts as online for the presence window after it stopped.)
func waitRolledOut(image string) {
	GinkgoHelper()
	mustKubectl("-n", ns, "rollout", "status", "deploy/uptime-operator-manager", "--timeout=300s")
	expectManagerImage(image)
	expectAPIServiceAvailable()
	for _, region := range []string{"e2e-a", "e2e-b"} {
		Eventually(func(g Gomega) {
			_, err := kubectl("-n", ns, "rollout", "status", "deploy/uptime-operator-probe-"+region, "--timeout=5s")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(kubectl("-n", ns, "get", "deploy", "uptime-operator-probe-"+region,
				"-o", "jsonpath={.spec.template.spec.containers[0].image}")).To(Equal(image))
		}, 3*time.Minute, 3*time.Second).Should(Succeed(), "probe Deployment of %s", region)
	}
	Eventually(func() string {
		out, _ := kubectl("get", "proberegions", "e2e-a", "e2e-b", "-o", `jsonpath={.items[*].status.online}`)
		return out
	}, 2*time.Minute, 2*time.Second).Should(Equal("true true"))
}

// hold makes the receiver refuse deliveries (503) or accept them again.
func hold(receiverIP string, on bool) {
	GinkgoHelper()
	path := map[bool]string{true: "/hooks/hold", false: "/hooks/release"}[on]
	code, _, err := httpDo("POST", "http://"+receiverIP+":8080"+path, nil)
	Expect(err).NotTo(HaveOccurred())
	Expect(code).To(Equal(204))
}

// expectRefused waits until the receiver has refused a delivery of event
// for incident id: the delivery is in flight.
func expectRefused(receiverIP, event, id string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		ds, err := deliveries(receiverIP)
		g.Expect(err).NotTo(HaveOccurred())
		refused := 0
		for _, d := range eventsFor(ds, event, id) {
			if d.Refused {
				refused++
			}
		}
		g.Expect(refused).To(BeNumerically(">", 0))
	}, 2*time.Minute, 2*time.Second).Should(Succeed(), "a refused %s for incident %s", event, id)
}

// expectAccepted waits until the receiver has accepted exactly one signed
// delivery of event for incident id.
func expectAccepted(receiverIP, event, id string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		ds, err := deliveries(receiverIP)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(accepted(eventsFor(ds, event, id))).To(HaveLen(1))
	}, 3*time.Minute, 2*time.Second).Should(Succeed(), "one accepted %s for incident %s", event, id)
}

// accepted are the deliveries the receiver verified and did not refuse.
func accepted(ds []delivery) []delivery {
	var out []delivery
	for _, d := range ds {
		if d.Verified && !d.Refused {
			out = append(out, d)
		}
	}
	return out
}

// expectNoDuplicates checks, for two check rounds, that the receiver
// accepted no event of an incident twice, and that each event of an
// incident came under one delivery id (retries reuse it).
func expectNoDuplicates(receiverIP string) {
	GinkgoHelper()
	Consistently(func(g Gomega) {
		ds, err := deliveries(receiverIP)
		g.Expect(err).NotTo(HaveOccurred())
		perEvent := map[string]int{}
		ids := map[string]map[string]bool{}
		for _, d := range ds {
			key := d.Body.Event + " " + d.Body.IncidentID
			if d.Verified && !d.Refused {
				perEvent[key]++
			}
			if ids[key] == nil {
				ids[key] = map[string]bool{}
			}
			ids[key][d.ID] = true
		}
		for key, n := range perEvent {
			g.Expect(n).To(Equal(1), "accepted deliveries of %s", key)
		}
		for key, set := range ids {
			g.Expect(set).To(HaveLen(1), "delivery ids of %s", key)
		}
	}, 2*checkInterval*time.Second, 5*time.Second).Should(Succeed())
}

// snapshot is what the store holds, read through the aggregated API: the
// ids of the monitors, the incidents and their state, the checks of each
// monitor and the status page's subscribers.
type snapshot struct {
	Monitors    []string
	Incidents   map[string]string // id → open or resolved
	Checks      map[string][]string
	Subscribers []string
}

func takeSnapshot(pageID string) snapshot {
	GinkgoHelper()
	var s snapshot
	var out string
	Eventually(func() error {
		var err error
		out, err = rawAPI("/namespaces/default/monitors")
		return err
	}, time.Minute, 2*time.Second).Should(Succeed())
	s.Checks = map[string][]string{}
	for _, m := range items(out) {
		id := idOf(m)
		s.Monitors = append(s.Monitors, id)
		checks, err := rawAPI(fmt.Sprintf("/namespaces/default/stats/%s/checks?limit=5000", id))
		Expect(err).NotTo(HaveOccurred())
		for _, c := range items(checks) {
			s.Checks[id] = append(s.Checks[id], idOf(c))
		}
	}
	sort.Strings(s.Monitors)
	out, err := rawAPI("/namespaces/default/incidents?page_size=100")
	Expect(err).NotTo(HaveOccurred())
	s.Incidents = map[string]string{}
	for _, in := range items(out) {
		state := "resolved"
		if in["resolved_at"] == nil {
			state = "open"
		}
		s.Incidents[idOf(in)] = state
	}
	out, err = rawAPI("/namespaces/default/status/pages/" + pageID + "/subscribers")
	Expect(err).NotTo(HaveOccurred())
	var subs map[string]any
	Expect(json.Unmarshal([]byte(out), &subs)).To(Succeed())
	for _, channel := range []string{"email", "chat", "webhook"} {
		list, _ := subs[channel].([]any)
		for _, e := range list {
			sub, _ := e.(map[string]any)
			s.Subscribers = append(s.Subscribers, idOf(sub))
		}
	}
	sort.Strings(s.Subscribers)
	return s
}

// idOf is the id of an object of a REST answer; the snapshot compares ids,
// so one without an id fails the spec.
func idOf(obj map[string]any) string {
	GinkgoHelper()
	id, _ := obj["id"].(string)
	Expect(id).NotTo(BeEmpty(), "no id in %v", obj)
	return id
}

func (s snapshot) checkCount() int {
	n := 0
	for _, c := range s.Checks {
		n += len(c)
	}
	return n
}

func (s snapshot) summary() string {
	open := 0
	for _, st := range s.Incidents {
		if st == "open" {
			open++
		}
	}
	return fmt.Sprintf("%d monitors, %d incidents (%d open), %d checks, %d subscribers",
		len(s.Monitors), len(s.Incidents), open, s.checkCount(), len(s.Subscribers))
}

// expectKept checks that after holds everything before held: the same
// monitors, incidents and subscribers (by id), and every check.
func expectKept(before, after snapshot) {
	GinkgoHelper()
	Expect(after.Monitors).To(Equal(before.Monitors), "monitor ids")
	Expect(slices.Sorted(maps.Keys(after.Incidents))).To(Equal(slices.Sorted(maps.Keys(before.Incidents))), "incident ids")
	Expect(after.Subscribers).To(Equal(before.Subscribers), "subscriber ids")
	for id, checks := range before.Checks {
		Expect(after.Checks[id]).To(ContainElements(checks), "the checks of monitor %s", id)
	}
}

// availability polls the admission webhook (a server-side dry run of a
// Monitor that only the webhook refuses) and the APIService once a second
// and keeps the longest gap between two answers.
type availability struct {
	mu      sync.Mutex
	lastOK  map[string]time.Time
	failing map[string]bool
	longest map[string]time.Duration
	done    chan struct{}
	wg      sync.WaitGroup
}

const badMonitor = `apiVersion: monitoring.uptime-operator.io/v1alpha1
kind: Monitor
metadata: {name: upg-bad, namespace: default}
spec:
  type: http
  url: http://e2e-target.default.svc.cluster.local:8080/
  intervalSeconds: 30
  regions: [e2e-a, mars-1]
`

func watchAvailability() *availability {
	a := &availability{lastOK: map[string]time.Time{}, failing: map[string]bool{}, longest: map[string]time.Duration{}, done: make(chan struct{})}
	probes := map[string]func() bool{
		"webhook": func() bool {
			out, err := runIn(badMonitor, "kubectl", "apply", "--dry-run=server", "-f", "-")
			return err != nil && strings.Contains(out, `Unsupported value: "mars-1"`)
		},
		"APIService": func() bool {
			_, err := rawAPI("/namespaces/default/monitors")
			return err == nil
		},
	}
	now := time.Now()
	for name, probe := range probes {
		a.lastOK[name] = now
		a.wg.Add(1)
		go func() {
			defer GinkgoRecover()
			defer a.wg.Done()
			tick := time.NewTicker(time.Second)
			defer tick.Stop()
			for {
				ok := probe()
				a.record(name, ok, time.Now())
				select {
				case <-a.done:
					return
				case <-tick.C:
				}
			}
		}()
	}
	return a
}

// record keeps, per endpoint, the longest time between two answers: a
// refusal in between or one slow answer (a call the aggregator holds while
// the backend is away) both widen it. Polling once a second, it is about a
// second while everything answers.
func (a *availability) record(name string, ok bool, at time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !ok {
		a.failing[name] = true
		return
	}
	a.longest[name] = max(a.longest[name], at.Sub(a.lastOK[name]))
	a.failing[name] = false
	a.lastOK[name] = at
}

// stop ends the polling, checks that both answer again and that the
// longest gap is within maxUpgradeGap, and describes the gaps.
func (a *availability) stop() string {
	GinkgoHelper()
	Eventually(func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		return !a.failing["webhook"] && !a.failing["APIService"]
	}, time.Minute, time.Second).Should(BeTrue(), "the webhook and the APIService answer again")
	close(a.done)
	a.wg.Wait()
	var parts []string
	for _, name := range []string{"webhook", "APIService"} {
		Expect(a.longest[name]).To(BeNumerically("<=", maxUpgradeGap), "%s gap", name)
		parts = append(parts, fmt.Sprintf("%s %s", name, a.longest[name].Round(time.Second)))
	}
	return strings.Join(parts, ", ")
}
