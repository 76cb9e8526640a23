//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// The node's address, where the suite (inside the node's namespace) serves
// the PostgreSQL forwarder that Pods reach.
const nodeIP = "10.250.0.1"

// pgSocketDir is where hack/postgres.sh's server keeps its unix socket: the
// suite reaches the host's server through it, since no TCP path leads from
// the node's namespace to the host's loopback.
func pgSocketDir() string {
	if d := os.Getenv("PG_DATA"); d != "" {
		return d
	}
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		base = filepath.Join(os.Getenv("HOME"), ".cache")
	}
	return filepath.Join(base, "uptime-operator", "pg")
}

const pgPort = "55432"

// forwardPostgres listens on the node's address and copies every connection
// to the host server's unix socket, until the listener is closed.
func forwardPostgres() (io.Closer, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(nodeIP, pgPort))
	if err != nil {
		return nil, err
	}
	sock := filepath.Join(pgSocketDir(), ".s.PGSQL."+pgPort)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				u, err := net.Dial("unix", sock)
				if err != nil {
					return
				}
				defer u.Close()
				go func() { _, _ = io.Copy(u, c) }()
				_, _ = io.Copy(c, u)
			}()
		}
	}()
	return ln, nil
}

// haScenario runs the outage again with two manager replicas on PostgreSQL
// and the two regions' agents sending to different replicas: one incident,
// confirmed by both, one delivery per event.
func haScenario(targetIP, receiverIP *string, valuesFile *string) {
	It("HA on PostgreSQL: two replicas, agents on different replicas, one incident and one delivery per event", func() {
		fwd, err := forwardPostgres()
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(fwd.Close)

		ctx := context.Background()
		conn, err := pgx.Connect(ctx, fmt.Sprintf("host=%s port=%s user=uptime dbname=postgres sslmode=disable", pgSocketDir(), pgPort))
		Expect(err).NotTo(HaveOccurred(), "hack/postgres.sh's server (socket in %s)", pgSocketDir())
		_, err = conn.Exec(ctx, `DROP DATABASE IF EXISTS uptime_e2e WITH (FORCE)`)
		Expect(err).NotTo(HaveOccurred())
		_, err = conn.Exec(ctx, `CREATE DATABASE uptime_e2e`)
		Expect(err).NotTo(HaveOccurred())
		Expect(conn.Close(ctx)).To(Succeed())

		installTestCA()
		_, _ = kubectl("-n", ns, "delete", "secret", "e2e-pg")
		mustKubectl("-n", ns, "create", "secret", "generic", "e2e-pg",
			"--from-literal=dsn=postgres://uptime:uptime@"+nodeIP+":"+pgPort+"/uptime_e2e?sslmode=disable")
		mustHelm("install", release, chartPackage(), "-n", ns, "-f", *valuesFile,
			"--set", "store.type=postgres", "--set", "store.postgres.existingSecret=e2e-pg",
			"--set", "manager.replicas=2", "--set", "aggregatedAPI.enabled=auto", "--wait", "--timeout", "5m")
		Eventually(func() []string { return managerPods(ns) }, 3*time.Minute, 2*time.Second).Should(HaveLen(2))
		Eventually(func() string {
			out, _ := kubectl("get", "apiservice", "v1.api.uptime-operator.io", "-o", `jsonpath={.status.conditions[?(@.type=="Available")].status}`)
			return out
		}, 2*time.Minute, 2*time.Second).Should(Equal("True"))
		// aggregatedAPI.enabled=auto registers the APIService for 2 replicas on PostgreSQL.
		waitRegionsOnline()
		proved("HA: aggregatedAPI.enabled=auto with 2 replicas on PostgreSQL registered APIService v1.api.uptime-operator.io (Available)")

		spread := spreadAgents()
		proved("HA: 2 manager replicas on PostgreSQL; agents' connections by replica: %s", spread)

		expectMonitorUp()
		before, err := deliveries(*receiverIP)
		Expect(err).NotTo(HaveOccurred())
		downBefore := len(eventsFor(before, "monitor.down", ""))

		setTarget(*targetIP, "fail")
		id := expectIncidentOpen()
		Eventually(func(g Gomega) {
			m, err := getMonitor(workNS, monName)
			g.Expect(err).NotTo(HaveOccurred())
			for _, r := range m.Status.Regions {
				g.Expect(r.Status).To(Equal("down"), "region %s in the Monitor's status", r.Code)
			}
		}, time.Minute, 3*time.Second).Should(Succeed())
		expectDelivery(*receiverIP, "monitor.down", id)
		Consistently(func(g Gomega) {
			ds, err := deliveries(*receiverIP)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(eventsFor(ds, "monitor.down", "")).To(HaveLen(downBefore + 1))
			out, err := rawAPI("/namespaces/default/incidents")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(incidentIDs(out)).To(Equal([]string{id}))
		}, 2*checkInterval*time.Second, 5*time.Second).Should(Succeed())

		setTarget(*targetIP, "recover")
		Eventually(func(g Gomega) {
			ds, err := deliveries(*receiverIP)
			g.Expect(err).NotTo(HaveOccurred())
			up := eventsFor(ds, "monitor.up", id)
			g.Expect(up).To(HaveLen(1))
			g.Expect(*up[0].Body.Resolution).To(Equal("recovered"))
			m, err := getMonitor(workNS, monName)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(string(m.Status.CurrentStatus)).To(Equal("up"))
		}, 3*time.Minute, 3*time.Second).Should(Succeed())
		proved("HA: one incident %s confirmed by e2e-a and e2e-b, one monitor.down and one monitor.up (recovered), regions' states right", id)

		deleteNamespaceDuringRestart()
		mustHelm("uninstall", release, "-n", ns, "--wait", "--timeout", "3m")
	})
}

// spreadAgents makes the two regions' agents send to different manager
// replicas, as an L4 load balancer that spreads clients over backends would,
// and describes where each agent's connections go.
//
// kube-proxy cannot be relied on for the spread here: on this kernel its
// random endpoint choice (iptables `statistic --mode random` and nftables
// `numgen random` alike) always yields the first endpoint, so every agent
// lands on one replica. The suite therefore pins each agent, by its Pod IP, to
// one replica with a DNAT rule ahead of kube-proxy's in the node's nat table,
// drops the agents' tracked connections so that they reconnect through the
// rules, and checks the result in the connection tracking table (original
// destination the API Service, reply source the manager Pod). The rules stay
// until the spec ends.
func spreadAgents() string {
	GinkgoHelper()
	apiIP := clusterIP(ns, "uptime-operator-api")
	// Managed agents talk to the probe API's TLS port of the API Service.
	svcPort := strings.TrimSpace(mustKubectl("-n", ns, "get", "svc", "uptime-operator-api", "-o", `jsonpath={.spec.ports[?(@.name=="probe")].port}`))
	Expect(svcPort).NotTo(BeEmpty(), "the API Service has a probe port")
	replicas := managerPods(ns)
	Expect(replicas).To(HaveLen(2), "two ready manager replicas")
	sort.Strings(replicas)
	pin := map[string]string{"e2e-a": replicas[0], "e2e-b": replicas[1]}
	for _, region := range []string{"e2e-a", "e2e-b"} {
		agentIP := agentPodIP(region)
		mgr := pin[region]
		mgrIP := strings.TrimSpace(mustKubectl("-n", ns, "get", "pod", mgr, "-o", "jsonpath={.status.podIP}"))
		mgrPort := strings.TrimSpace(mustKubectl("-n", ns, "get", "pod", mgr, "-o",
			`jsonpath={.spec.containers[0].ports[?(@.name=="probe")].containerPort}`))
		Expect(mgrIP).NotTo(BeEmpty(), "manager Pod %s has an IP", mgr)
		Expect(mgrPort).NotTo(BeEmpty(), "manager Pod %s declares its probe port", mgr)
		rule := []string{"PREROUTING", "-s", agentIP, "-d", apiIP, "-p", "tcp", "--dport", svcPort,
			"-m", "comment", "--comment", "uptime-e2e pins " + region + " to " + mgr,
			"-j", "DNAT", "--to-destination", mgrIP + ":" + mgrPort}
		out, err := run("iptables", append([]string{"-t", "nat", "-I"}, rule...)...)
		Expect(err).NotTo(HaveOccurred(), out)
		DeferCleanup(func() { _, _ = run("iptables", append([]string{"-t", "nat", "-D"}, rule...)...) })
		// Existing connections keep their NAT mapping: forget them, so the
		// agent's next packet is answered with a reset and it reconnects
		// through the rule. conntrack exits 1 when nothing matched.
		_, _ = run("conntrack", "-D", "-p", "tcp", "-s", agentIP, "-d", apiIP)
	}
	var desc string
	Eventually(func(g Gomega) {
		byRegion := map[string]map[string]bool{}
		for _, region := range []string{"e2e-a", "e2e-b"} {
			byRegion[region] = replicasOf(agentPodIP(region), apiIP)
		}
		desc = describeSpread(byRegion)
		for region, mgr := range pin {
			g.Expect(byRegion[region]).To(Equal(map[string]bool{mgr: true}),
				"agent of %s should reach only replica %s through the pinning DNAT rule; connections by replica: %s", region, mgr, desc)
		}
	}, 2*time.Minute, 2*time.Second).Should(Succeed())
	return desc
}

// agentPodIP is the IP of the running agent Pod of a managed region.
func agentPodIP(region string) string {
	GinkgoHelper()
	ip := strings.TrimSpace(mustKubectl("-n", ns, "get", "pods", "-l", "uptime-operator.io/region="+region,
		"--field-selector=status.phase=Running", "-o", "jsonpath={.items[0].status.podIP}"))
	Expect(ip).NotTo(BeEmpty(), "a running agent Pod of region %s", region)
	return ip
}

func describeSpread(byRegion map[string]map[string]bool) string {
	var parts []string
	for _, region := range []string{"e2e-a", "e2e-b"} {
		var rs []string
		for r := range byRegion[region] {
			rs = append(rs, r)
		}
		sort.Strings(rs)
		parts = append(parts, region+"→"+strings.Join(rs, ","))
	}
	return strings.Join(parts, "; ")
}

// replicasOf returns the manager Pods (by name) that podIP has established
// connections with through the API Service.
func replicasOf(podIP, serviceIP string) map[string]bool {
	GinkgoHelper()
	out, err := run("conntrack", "-L", "-p", "tcp", "-s", podIP, "-d", serviceIP)
	Expect(err).NotTo(HaveOccurred(), out)
	byIP := map[string]string{}
	for _, line := range strings.Split(mustKubectl("-n", ns, "get", "pods", "-l", "app.kubernetes.io/component=manager",
		"-o", `jsonpath={range .items[*]}{.status.podIP} {.metadata.name}{"\n"}{end}`), "\n") {
		if f := strings.Fields(line); len(f) == 2 {
			byIP[f[0]] = f[1]
		}
	}
	got := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		if !strings.Contains(line, "ESTABLISHED") {
			continue
		}
		// The reply direction's src= is the second src= of the line.
		f := strings.Fields(line)
		n := 0
		for _, w := range f {
			if v, ok := strings.CutPrefix(w, "src="); ok {
				n++
				if n == 2 {
					if name, ok := byIP[v]; ok {
						got[name] = true
					}
				}
			}
		}
	}
	return got
}

// deleteNamespaceDuringRestart deletes a workspace namespace, with a Monitor
// whose history finalizer the manager must remove, while the manager
// Deployment restarts (issue 28 row 2): with the APIService registered by
// the chart's rule (two replicas rolling one at a time) the deletion
// finishes; whether the namespace controller ever saw a discovery failure
// is reported.
func deleteNamespaceDuringRestart() {
	GinkgoHelper()
	const doomed = "e2e-doomed"
	_, _ = kubectl("delete", "namespace", doomed, "--timeout=120s")
	mustKubectl("create", "namespace", doomed)
	apply(fmt.Sprintf(`apiVersion: monitoring.uptime-operator.io/v1alpha1
kind: Monitor
metadata: {name: doomed, namespace: %s}
spec:
  type: http
  url: http://e2e-target.default.svc.cluster.local:8080/
  intervalSeconds: 60
  regions: [e2e-a]
`, doomed))
	Eventually(func() string {
		out, _ := kubectl("-n", doomed, "get", "monitor", "doomed", "-o", "jsonpath={.metadata.finalizers}")
		return out
	}, time.Minute, time.Second).ShouldNot(BeEmpty(), "the manager adds the history finalizer")
	start := time.Now()
	mustKubectl("-n", ns, "rollout", "restart", "deploy/uptime-operator-manager")
	mustKubectl("delete", "namespace", doomed, "--wait=false")
	discoveryFailed := false
	Eventually(func() bool {
		out, err := kubectl("get", "namespace", doomed, "-o",
			`jsonpath={.status.conditions[?(@.type=="NamespaceDeletionDiscoveryFailure")].status}`)
		if strings.TrimSpace(out) == "True" {
			discoveryFailed = true
		}
		return err != nil && strings.Contains(out, "NotFound")
	}, 4*time.Minute, 2*time.Second).Should(BeTrue(), "namespace %s is still there", doomed)
	took := time.Since(start).Round(time.Second)
	mustKubectl("-n", ns, "rollout", "status", "deploy/uptime-operator-manager", "--timeout=180s")
	proved("namespace %s (a Monitor with the history finalizer) deleted in %s while the manager rolled its 2 replicas (NamespaceDeletionDiscoveryFailure seen: %v)", doomed, took, discoveryFailed)
}
