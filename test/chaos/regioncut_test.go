//go:build chaos

package chaos

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/manager"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// agentNetns is a network namespace of the test's own, joined to the
// suite's by a veth pair: the host side has hostAddr (the manager's probe
// API) and targetAddr (the monitored server), the namespace side agentAddr.
// A process started in it reaches both only over the veth, so nftables
// rules in the namespace cut it off the way a partition does (packets
// dropped, connections time out).
type agentNetns struct {
	holder *exec.Cmd
	pid    string
}

const (
	hostAddr   = "10.213.0.1"
	targetAddr = "10.213.0.2"
	agentAddr  = "10.213.0.10"
)

func newAgentNetns(t *testing.T) *agentNetns {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	// The holder keeps the namespace alive; it and everything in the
	// namespace die with the test.
	holder := exec.Command("sleep", "infinity")
	holder.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET, Setpgid: true}
	must(t, holder.Start())
	n := &agentNetns{holder: holder, pid: fmt.Sprint(holder.Process.Pid)}
	t.Cleanup(func() {
		_ = holder.Process.Kill()
		_ = holder.Wait()
		_ = exec.Command("ip", "link", "del", "chaos-h").Run()
	})
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	run("ip", "link", "add", "chaos-h", "type", "veth", "peer", "name", "chaos-a")
	run("ip", "link", "set", "chaos-a", "netns", n.pid)
	run("ip", "addr", "add", hostAddr+"/24", "dev", "chaos-h")
	run("ip", "addr", "add", targetAddr+"/32", "dev", "chaos-h")
	run("ip", "link", "set", "chaos-h", "up")
	for _, args := range [][]string{
		{"ip", "link", "set", "lo", "up"},
		{"ip", "addr", "add", agentAddr + "/24", "dev", "chaos-a"},
		{"ip", "link", "set", "chaos-a", "up"},
		{"nft", "add", "table", "inet", "chaos"},
		{"nft", "add chain inet chaos out { type filter hook output priority 0 ; }"},
	} {
		run(append([]string{"nsenter", "-t", n.pid, "-n", "--"}, args...)...)
	}
	return n
}

// cut drops every packet from the namespace to the addresses (none: heal).
func (n *agentNetns) cut(t *testing.T, addrs ...string) {
	t.Helper()
	cmds := [][]string{{"nft", "flush", "chain", "inet", "chaos", "out"}}
	for _, a := range addrs {
		cmds = append(cmds, []string{"nft", "add", "rule", "inet", "chaos", "out", "ip", "daddr", a, "drop"})
	}
	for _, c := range cmds {
		if out, err := exec.Command("nsenter", append([]string{"-t", n.pid, "-n", "--"}, c...)...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v: %s", c, err, out)
		}
	}
}

// TestRegionCutOff runs three regions' agents as real `uptime-operator
// probe` processes against an in-process manager: eu-1 and us-1 in the
// suite's network namespace, ap-1 in a namespace of its own behind a veth
// pair. Three monitors of the three regions differ in spec.confirmation:
// the default (2 regions), 3 regions, and 1 region (with the default
// majority). Measured:
//  1. ap-1 cut off from everything (manager and target) while the target
//     really fails: each monitor's incident opens from eu-1 and us-1 alone,
//     the 3-region one once ap-1 is stale and abstains (the quorum rule
//     lowers the count needed for regions that cannot vote);
//  2. ap-1 reconnected, delivering the failures it buffered while cut off,
//     and then ap-1 cut off from the target only, voting down for a minute
//     while the others pass: no incident opens.
func TestRegionCutOff(t *testing.T) {
	t.Parallel()
	nsNet := newAgentNetns(t)
	bin := operatorBinary(t)
	const ns = "uptime-operator-system"
	env := startEnv(t, manager.Options{Store: filepath.Join(t.TempDir(), "uptime.db"), APIListen: hostAddr + ":0",
		AllowPrivateTargets: true, Namespace: ns})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	apiAddr, err := env.Manager.APIAddr(ctx)
	must(t, err)
	must(t, env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	target := newSwitchTarget(t, net.JoinHostPort(targetAddr, "0"))

	regions := []string{"eu-1", "us-1", "ap-1"}
	const cutRegion = "ap-1"
	for _, code := range regions {
		token := remoteRegion(t, ctx, env.Client, ns, code)
		args := []string{bin, "probe", "--region", code, "--server", "http://" + apiAddr, "--token-file", token,
			"--allow-private", "--buffer-dir", filepath.Join(t.TempDir(), "buffer-"+code), "--listen", ""}
		if code == cutRegion {
			args = append([]string{"nsenter", "-t", nsNet.pid, "-n", "--"}, args...)
		}
		startProc(t, "agent-"+code, nil, exec.Command(args[0], args[1:]...))
	}
	const team = "team"
	must(t, env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: team}}))
	confirm := map[string]*monv1.ConfirmationSpec{
		"default-2": nil,
		"all-3":     {Regions: 3},
		"one-1":     {Regions: 1},
	}
	names := []string{"default-2", "all-3", "one-1"}
	ids := map[string]string{}
	for _, name := range names {
		m := &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: team},
			Spec: monv1.MonitorSpec{URL: target.URL, IntervalSeconds: 15, Regions: regions, Confirmation: confirm[name],
				HTTP: &monv1.HTTPConfig{TimeoutMs: 2000}}}
		must(t, env.Client.Create(ctx, m))
		ids[name] = string(m.UID)
	}
	st := env.Manager.Store
	latest := func(name string) map[string]store.CheckStatus {
		cs, err := st.LatestChecks(ctx, ids[name])
		must(t, err)
		out := map[string]store.CheckStatus{}
		for _, c := range cs {
			out[c.Region] = c.Status
		}
		return out
	}
	waitFor(t, "every region's first result", 2*time.Minute, func() bool {
		for _, name := range names {
			l := latest(name)
			for _, r := range regions {
				if l[r] != store.StatusUp {
					return false
				}
			}
		}
		return true
	})
	incidents := func(since time.Time) []store.Incident {
		list, err := st.ListIncidents(ctx, store.IncidentQuery{Namespace: team, From: &since, PageSize: 100})
		must(t, err)
		return list.Items
	}
	opened := func(since time.Time, name string) *store.Incident {
		for _, inc := range incidents(since) {
			if inc.MonitorID == ids[name] {
				return &inc
			}
		}
		return nil
	}

	// 1. The partition and the outage together.
	nsNet.cut(t, hostAddr, targetAddr)
	target.set(true)
	outage := time.Now()
	for _, name := range names {
		var inc *store.Incident
		waitFor(t, name+"'s incident", 3*time.Minute, func() bool { inc = opened(outage, name); return inc != nil })
		regs := append([]string(nil), inc.ConfirmingRegions...)
		sort.Strings(regs)
		ok := strings.Join(regs, ",") == "eu-1,us-1"
		record(t, fmt.Sprintf("outage with %s cut off: incident of monitor %s (confirmation %s)", cutRegion, name, confirmText(confirm[name])),
			fmt.Sprintf("opened after %s, confirmed by %s", inc.StartedAt.Sub(outage).Round(time.Second), strings.Join(regs, ", ")),
			"opens, confirmed by eu-1, us-1", ok)
	}
	target.set(false)
	waitFor(t, "the incidents to resolve", 2*time.Minute, func() bool {
		for _, inc := range incidents(outage) {
			if inc.ResolvedAt == nil {
				return false
			}
		}
		return true
	})

	// 2. ap-1 back: it delivers what it buffered, then it alone fails.
	nsNet.cut(t)
	healed := time.Now()
	var buffered int
	waitFor(t, "ap-1's buffered results", 2*time.Minute, func() bool {
		cs, _, err := st.ListChecks(ctx, store.ChecksQuery{MonitorID: ids["default-2"], Region: cutRegion, From: &outage, To: &healed, Limit: 1000})
		must(t, err)
		buffered = len(cs)
		return buffered > 0
	})
	record(t, fmt.Sprintf("results %s buffered while cut off, delivered after reconnecting", cutRegion), fmt.Sprint(buffered), "> 0", buffered > 0)
	time.Sleep(20 * time.Second)
	nsNet.cut(t, targetAddr)
	alone := time.Now()
	time.Sleep(75 * time.Second)
	end := time.Now()
	var downVotes int
	for _, name := range names {
		cs, _, err := st.ListChecks(ctx, store.ChecksQuery{MonitorID: ids[name], Region: cutRegion, From: &alone, To: &end, Status: store.StatusDown, Limit: 1000})
		must(t, err)
		downVotes += len(cs)
	}
	record(t, fmt.Sprintf("down results stored from %s alone (cut off from the target for %s)", cutRegion, end.Sub(alone).Round(time.Second)),
		fmt.Sprint(downVotes), "> 0", downVotes > 0)
	recordCount(t, fmt.Sprintf("incidents opened from %s alone (its buffered failures, then its live ones; all 3 monitors)", cutRegion), len(incidents(healed)), 0)
	nsNet.cut(t)
}

func confirmText(c *monv1.ConfirmationSpec) string {
	if c == nil {
		return "default, 2 regions"
	}
	return fmt.Sprintf("%d region(s), majority", c.Regions)
}
