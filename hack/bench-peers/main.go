// Command bench-peers measures the uptime-operator probe agent side by side
// with two open-source checkers, blackbox_exporter and Gatus, on this
// machine: one shared HTTP target on 127.0.0.1, each tool at saturation for
// a fixed window, repetitions interleaved (while one tool is measured the
// others are stopped with SIGSTOP), and CPU taken from each tool's own
// /proc/<pid>/stat. It prints checks/s and checks per CPU-second with
// min/median/max and the agent's ratios to each peer.
//
// The agent is the real binary (`uptime-operator probe`), built from the
// tree, talking to a stand-in manager that serves the probe API with the
// real handler and counts the pushed results. The peers are built from
// source snapshots (PEERS_DIR, default ../shared/peers) into a cache
// outside the repository (~/.cache/uptime-operator/peers).
//
// Run it with `make bench-peers`.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

func main() {
	if err := run0(); err != nil {
		fmt.Fprintln(os.Stderr, "bench-peers:", err)
		os.Exit(1)
	}
}

type options struct {
	peersDir, cacheDir string
	window, settle     time.Duration
	reps               int
	monitors, slots    int
	gatusEndpoints     int
	blackboxClients    int
	only               string
}

func run0() error {
	home, _ := os.UserHomeDir()
	var o options
	flag.StringVar(&o.peersDir, "peers-dir", envOr("PEERS_DIR", "../shared/peers"), "folder with the peers' source tarballs (env PEERS_DIR)")
	flag.StringVar(&o.cacheDir, "cache-dir", envOr("PEERS_CACHE", filepath.Join(home, ".cache", "uptime-operator", "peers")), "where peer builds are cached (env PEERS_CACHE)")
	flag.DurationVar(&o.window, "window", 10*time.Second, "measured window per tool and repetition")
	flag.DurationVar(&o.settle, "settle", 3*time.Second, "time a tool runs after resuming before its window starts")
	flag.IntVar(&o.reps, "reps", 3, "interleaved repetitions")
	flag.IntVar(&o.monitors, "monitors", 20000, "http monitors assigned to the agent, each at a 1 s interval (more than it can run)")
	flag.IntVar(&o.slots, "concurrency", 64, "simultaneous checks of every tool: agent slots, Gatus concurrency, blackbox_exporter clients")
	flag.IntVar(&o.gatusEndpoints, "gatus-endpoints", 64, "Gatus endpoints (started 222 ms apart)")
	flag.StringVar(&o.only, "only", "", "comma-separated tools to run: agent, agent-reuse, blackbox, gatus, gatus-keepalive (default all)")
	flag.Parse()
	if o.reps < 1 || o.window <= 0 {
		return errors.New("reps and window must be positive")
	}
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	workDir, err := os.MkdirTemp("", "bench-peers-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(workDir)
	logw := os.Stderr

	want := func(name string) bool {
		return o.only == "" || slices.Contains(strings.Split(o.only, ","), name)
	}
	agentBin, err := buildAgent(root, workDir, logw)
	if err != nil {
		return err
	}
	bins := map[string]string{}
	for _, p := range peers {
		if (p.name == "gatus" && !want("gatus") && !want("gatus-keepalive")) || (p.name == "blackbox_exporter" && !want("blackbox")) {
			continue
		}
		bin, err := buildPeer(p, o.peersDir, o.cacheDir, logw)
		if err != nil {
			return err
		}
		bins[p.name] = bin
	}

	target, stopTarget, err := startTarget()
	if err != nil {
		return err
	}
	defer stopTarget()

	var cs []*contestant
	var stops []func()
	defer func() {
		for _, s := range stops {
			s()
		}
	}()
	add := func(c *contestant, stop func(), err error) error {
		if err != nil {
			return err
		}
		cs, stops = append(cs, c), append(stops, stop)
		return nil
	}
	if want("agent") {
		if err := add(startAgent(agentBin, target, workDir, agentOptions{monitors: o.monitors, concurrency: o.slots})); err != nil {
			return err
		}
	}
	if want("agent-reuse") {
		if err := add(startAgent(agentBin, target, workDir, agentOptions{monitors: o.monitors, concurrency: o.slots, reuse: true})); err != nil {
			return err
		}
	}
	if want("blackbox") {
		if err := add(startBlackbox(bins["blackbox_exporter"], target, workDir, o.slots)); err != nil {
			return err
		}
	}
	if want("gatus") {
		if err := add(startGatus(bins["gatus"], target, workDir, gatusOptions{
			label: "new connection", what: "[STATUS] == 200: body not read, new connection per check",
			conditions: []string{"[STATUS] == 200"}, endpoints: o.gatusEndpoints, concurrency: o.slots,
		})); err != nil {
			return err
		}
	}
	if want("gatus-keepalive") {
		if err := add(startGatus(bins["gatus"], target, workDir, gatusOptions{
			label: "keep-alive", what: "[STATUS] == 200 and [BODY] == pat(*ok*): body read, connection reused",
			conditions: []string{"[STATUS] == 200", "[BODY] == pat(*ok*)"}, endpoints: o.gatusEndpoints, concurrency: o.slots,
		})); err != nil {
			return err
		}
	}
	if len(cs) == 0 {
		return errors.New("no tool selected")
	}

	// Warm up all tools at once (Gatus needs endpoints*222 ms), then stop
	// each until its turn.
	warmUntil := time.Now().Add(time.Duration(o.gatusEndpoints)*222*time.Millisecond + 2*time.Minute)
	for _, c := range cs {
		for !c.ready() {
			if time.Now().After(warmUntil) {
				return fmt.Errorf("%s did not warm up; see its log in %s", c.name, workDir)
			}
			time.Sleep(250 * time.Millisecond)
		}
		fmt.Fprintf(logw, "%s: warmed up\n", c.name)
	}
	for _, c := range cs {
		c.proc.pause()
	}

	fmt.Printf("bench-peers: %s, %d CPUs, %s; window %s, settle %s, %d interleaved repetitions, %d simultaneous checks per tool\n",
		time.Now().UTC().Format(time.RFC3339), runtime.NumCPU(), runtime.Version(), o.window, o.settle, o.reps, o.slots)
	fmt.Printf("target %s (%d bytes); load average at start: %s\n", target, len(targetBody), loadAvg())
	samples := make([][]sample, len(cs))
	for rep := range o.reps {
		for i, c := range cs {
			s, err := measure(c, o.window, o.settle)
			if err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
			samples[i] = append(samples[i], s)
			fmt.Fprintf(logw, "rep %d %-28s %8.0f checks/s %8.0f per CPU-s (%.2f CPUs, %d failed)\n",
				rep+1, c.name, s.rate, s.perCPU, s.cpus, s.failed)
		}
	}
	fmt.Printf("load average at end: %s\n\n", loadAvg())
	report(os.Stdout, cs, samples)
	return nil
}

// sample is one measured window of one tool.
type sample struct {
	rate, perCPU, cpus float64
	failed             int64
}

// measure resumes c, lets it settle, counts its checks and CPU over window
// and stops it again.
func measure(c *contestant, window, settle time.Duration) (sample, error) {
	c.proc.resume()
	defer c.proc.pause()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	if c.drive != nil {
		go func() { c.drive(ctx); close(done) }()
	} else {
		close(done)
	}
	defer func() { cancel(); <-done }()
	time.Sleep(settle)
	n0, f0, err := c.checks()
	if err != nil {
		return sample{}, err
	}
	cpu0, err := c.proc.cpu()
	if err != nil {
		return sample{}, err
	}
	t0 := time.Now()
	time.Sleep(window)
	n1, f1, err := c.checks()
	if err != nil {
		return sample{}, err
	}
	cpu1, err := c.proc.cpu()
	if err != nil {
		return sample{}, err
	}
	elapsed := time.Since(t0).Seconds()
	n, cpu := float64(n1-n0), (cpu1 - cpu0).Seconds()
	if n <= 0 || cpu <= 0 {
		return sample{}, fmt.Errorf("no checks or no CPU in the window (%v checks, %v CPU-s)", n, cpu)
	}
	return sample{rate: n / elapsed, perCPU: n / cpu, cpus: cpu / elapsed, failed: f1 - f0}, nil
}

type stat struct{ min, median, max float64 }

func stats(xs []float64) stat {
	s := slices.Clone(xs)
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return stat{s[0], m, s[len(s)-1]}
}

func (s stat) String() string { return fmt.Sprintf("%.0f / %.0f / %.0f", s.min, s.median, s.max) }

func pick(ss []sample, f func(sample) float64) []float64 {
	out := make([]float64, len(ss))
	for i, s := range ss {
		out[i] = f(s)
	}
	return out
}

// report prints the table and the agent's ratios (median over median).
func report(w io.Writer, cs []*contestant, samples [][]sample) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "tool\tchecks/s min / median / max\tper CPU-second min / median / max\tCPUs used (median)\tfailed\tone check")
	rates, perCPU := make([]stat, len(cs)), make([]stat, len(cs))
	for i, c := range cs {
		rates[i] = stats(pick(samples[i], func(s sample) float64 { return s.rate }))
		perCPU[i] = stats(pick(samples[i], func(s sample) float64 { return s.perCPU }))
		var failed int64
		for _, s := range samples[i] {
			failed += s.failed
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.2f\t%d\t%s\n", c.name, rates[i], perCPU[i],
			stats(pick(samples[i], func(s sample) float64 { return s.cpus })).median, failed, c.what)
	}
	tw.Flush()
	isAgent := func(c *contestant) bool { return strings.HasPrefix(c.name, "uptime-operator probe") }
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "agent	against	checks/s ratio	per CPU-second ratio	CPU per check (agent / peer)")
	for a := range cs {
		if !isAgent(cs[a]) {
			continue
		}
		for i := range cs {
			if isAgent(cs[i]) {
				continue
			}
			fmt.Fprintf(tw, "%s	%s	%.2f×	%.2f×	%.0f µs / %.0f µs\n", cs[a].name, cs[i].name,
				rates[a].median/rates[i].median, perCPU[a].median/perCPU[i].median,
				1e6/perCPU[a].median, 1e6/perCPU[i].median)
		}
	}
	tw.Flush()
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:3], " ")
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
