// Command bench-scale measures uptime-operator with many HTTP Monitors on
// this machine: a real kube-apiserver and etcd (the envtest binaries), the
// manager and one probe agent as processes of their own (the binary built
// from the tree), the Monitors created as real CRs through the admission
// webhooks, and local HTTP targets on 127.0.0.1 served by this program.
// It runs once per store backend (SQLite, then PostgreSQL) and prints:
//
//   - how long creating the Monitors took (and the CPU kube-apiserver, etcd
//     and the manager spent meanwhile), when all of them were scheduled on
//     the agent (its uptime_probe_scheduled_monitors gauge) and when their
//     statuses were all written (observedGeneration current, Ready);
//   - the time from a cold start (manager and agent restarted with every
//     Monitor in place, or started against Monitors kept with -data) until
//     all are scheduled again, beside a bare informer's sync of them;
//   - steady CPU (from /proc/<pid>/stat) and RSS of the manager and the
//     agent over a window that starts one interval after scheduling;
//   - ingest lag p99 (the manager's uptime_operator_ingest_lag_seconds) and
//     the agent's schedule lag p99, as histogram bucket bounds;
//   - kube-apiserver writes per second to Monitors during that window, by
//     verb and subresource (apiserver_request_total deltas);
//   - REST GET /monitors (all of them) latency and GET /monitors/:id
//     throughput while the checks go on;
//   - detection latency: some targets turn bad at one instant, and the time
//     until each one's incident is open (polled through GET /incidents).
//
// Run it with `make bench-scale` (BENCH_SCALE_FLAGS="-n 2000" for a short
// run); `go run ./hack/bench-scale -h` lists the flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

type options struct {
	n           int
	interval    int
	backends    string
	steady      time.Duration
	bad         int
	creators    int
	restWindow  time.Duration
	restClients int
	coldStart   bool
	keep        bool
	reconcileTO time.Duration
	data        string
	createOnly  bool
	viaWebhooks int
	bin         string
	waitReady   bool
}

func main() {
	var o options
	flag.IntVar(&o.n, "n", 100000, "HTTP Monitors to create")
	flag.IntVar(&o.interval, "interval", 60, "check interval of every Monitor, seconds")
	flag.StringVar(&o.backends, "backends", "sqlite,postgres", "store backends to run, in order (sqlite, postgres; postgres needs UPTIME_TEST_POSTGRES_DSN)")
	flag.DurationVar(&o.steady, "steady", 2*time.Minute, "steady-state window for CPU, RSS, ingest lag and apiserver writes")
	flag.IntVar(&o.bad, "bad", 100, "targets turned bad to measure detection latency")
	flag.IntVar(&o.creators, "creators", 64, "concurrent Monitor creates")
	flag.DurationVar(&o.restWindow, "rest-window", 20*time.Second, "time spent on each REST measurement")
	flag.IntVar(&o.restClients, "rest-clients", 8, "concurrent clients of the GET /monitors/:id measurement")
	flag.BoolVar(&o.coldStart, "cold-start", true, "restart the manager and the agent and time until every Monitor is scheduled again")
	flag.BoolVar(&o.keep, "keep", false, "keep the state directory (logs, SQLite file) after the run")
	flag.DurationVar(&o.reconcileTO, "timeout", 20*time.Minute, "give up waiting for reconciliation or scheduling after this long")
	flag.StringVar(&o.data, "data", "", "keep etcd's data (and each backend's SQLite file) in this directory across runs: Monitors an earlier run created are not created again, and the manager's start is then timed as a cold start against a bare informer's sync")
	flag.IntVar(&o.viaWebhooks, "via-webhooks", 0, "create only this many Monitors through kube-apiserver and the webhooks (timed) and write the rest straight into etcd as copies of the first (0: all through kube-apiserver); use it with -create-only and -data: a manager running while they are written can miss some (one run's assignment list lacked 937 of 29,000)")
	flag.StringVar(&o.bin, "bin", "", "run this uptime-operator binary instead of building the tree (to measure an older build beside the new one in the same conditions)")
	flag.BoolVar(&o.waitReady, "wait-ready", false, "after scheduling, wait until every Monitor's status is Ready (up to -timeout) before the steady window, so the time to all Ready and the status-write rate are measured without the later phases' load")
	flag.BoolVar(&o.createOnly, "create-only", false, "stop after creating the Monitors (with -data, to create 100,000 once and measure later runs against them)")
	flag.Parse()
	// envtest and the clients log through controller-runtime; the harness
	// prints its own progress.
	ctrllog.SetLogger(logr.Discard())
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	if err := run(ctx, o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bench-scale:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options, out io.Writer) error {
	if o.n < 1 || o.bad > o.n {
		return errors.New("-n must be at least 1 and -bad at most -n")
	}
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "bench-scale-")
	if err != nil {
		return err
	}
	if !o.keep {
		defer os.RemoveAll(work)
	}
	bin := o.bin
	if bin == "" {
		bin = filepath.Join(work, "uptime-operator")
		say("building %s", bin)
		if err := runCmd(root, "go", "build", "-o", bin, "."); err != nil {
			return fmt.Errorf("build uptime-operator: %w", err)
		}
	}
	for _, backend := range strings.Split(o.backends, ",") {
		backend = strings.TrimSpace(backend)
		dir := filepath.Join(work, backend)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		r, err := runBackend(ctx, o, bin, dir, backend)
		if r != nil && err != nil {
			// What was measured before the failure.
			r.loadEnd = loadAvg()
			r.print(out)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", backend, err)
		}
		r.print(out)
		if o.keep {
			fmt.Fprintf(out, "state, logs and store kept in %s\n", dir)
		}
	}
	return nil
}

func say(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "%s bench-scale: "+format+"\n", append([]any{time.Now().Format("15:04:05")}, a...)...)
}

func machine() string {
	mem := "?"
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int64
		if _, err := fmt.Sscanf(strings.SplitN(string(b), "\n", 2)[0], "MemTotal: %d kB", &kb); err == nil {
			mem = fmt.Sprintf("%.0f GiB", float64(kb)/(1<<20))
		}
	}
	model := ""
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "model name") {
				model = strings.TrimSpace(strings.SplitN(l, ":", 2)[1])
				break
			}
		}
	}
	return fmt.Sprintf("%d CPUs (%s), %s, %s", runtime.NumCPU(), model, mem, runtime.Version())
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}
