package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/google/uuid"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"

	"github.com/uptime-operator/uptime-operator/hack/internal/benchproc"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

// targetBody is what the shared target answers; every tool checks for its
// "ok" (the agent with a keyword, Gatus with a body pattern where the body
// is read at all, blackbox_exporter only by status).
const targetBody = `{"status":"ok"}`

// startTarget serves the one shared target on 127.0.0.1. Keep-alive stays
// on so that a tool that can reuse connections does.
func startTarget() (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, targetBody)
		}),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       30 * time.Second,
	}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String() + "/", func() { _ = srv.Close() }, nil
}

// contestant is one tool under measurement.
type contestant struct {
	// name and what label its table row.
	name, what string
	proc       *proc
	// checks returns the checks completed so far, and how many of them
	// failed.
	checks func() (total, failed int64, err error)
	// drive, when set, loads the tool until ctx ends (tools that do not
	// schedule checks themselves).
	drive func(ctx context.Context)
	// ready reports that the tool has warmed up.
	ready func() bool
}

// proc is a started tool process.
type proc struct {
	cmd *exec.Cmd
	log *os.File
}

func startProc(bin string, args, env []string, logPath string) (*proc, error) {
	cmd, logf, err := benchproc.Start(bin, args, env, logPath)
	if err != nil {
		return nil, err
	}
	return &proc{cmd: cmd, log: logf}, nil
}

// pause and resume stop and continue the process, so tools that schedule
// their own checks do no work while another tool is measured.
func (p *proc) pause()  { _ = p.cmd.Process.Signal(syscall.SIGSTOP) }
func (p *proc) resume() { _ = p.cmd.Process.Signal(syscall.SIGCONT) }

func (p *proc) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGCONT)
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
	p.log.Close()
}

// userHZ is the unit of utime and stime in /proc/<pid>/stat (USER_HZ, 100
// on Linux whatever the kernel's tick rate).
const userHZ = 100

// cpu returns the process's own user plus system CPU time.
func (p *proc) cpu() (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces; fields after it follow
	// the last ')'.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("short /proc stat line")
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / userHZ, nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// standIn is a minimal manager: it serves one assignment list through the
// real probe API handler and counts the results pushed to it.
type standIn struct {
	list          probeapi.AssignmentList
	total, failed atomic.Int64
}

// Authenticate speaks for region bench whatever the token (the agent sends none).
func (s *standIn) Authenticate(context.Context, string) (string, error) { return "bench", nil }

// Recognize speaks for region bench too.
func (s *standIn) Recognize(context.Context, string) (string, error) { return "bench", nil }

func (s *standIn) Assignments(ctx context.Context, _, known string) (*probeapi.AssignmentList, error) {
	if known == s.list.Revision {
		<-ctx.Done()
		return nil, probeapi.ErrNotModified
	}
	return &s.list, nil
}

func (s *standIn) IngestResults(_ context.Context, _ string, b *probeapi.ResultBatch) (probeapi.ResultsResponse, error) {
	var failed int64
	for i := range b.Results {
		if b.Results[i].Status != probeapi.StatusUp {
			failed++
		}
	}
	s.failed.Add(failed)
	s.total.Add(int64(len(b.Results)))
	return probeapi.ResultsResponse{Accepted: len(b.Results)}, nil
}

// agentOptions shape the agent's assignment.
type agentOptions struct {
	monitors    int
	concurrency int
	// reuse turns http.reuseConnection on: each monitor's checks share a
	// kept-alive connection (compare with Gatus keep-alive).
	reuse bool
}

// startAgent runs `uptime-operator probe` against a stand-in manager that
// assigns opts.monitors http monitors of the target at a one-second
// interval: more than the agent can run, so it works at saturation.
func startAgent(bin, target, workDir string, opts agentOptions) (*contestant, func(), error) {
	s := &standIn{list: probeapi.AssignmentList{Region: "bench", Revision: "1"}}
	for i := range opts.monitors {
		s.list.Assignments = append(s.list.Assignments, probeapi.Assignment{
			ID: uuid.NewString(), Namespace: "bench", Name: fmt.Sprintf("target-%d", i), Type: probeapi.TypeHTTP,
			URL: target, IntervalSeconds: 1, TimeoutMs: 5000, Regions: []string{"bench"},
			Config: monv1.MonitorSpec{HTTP: &monv1.HTTPConfig{Keyword: "ok", ReuseConnection: opts.reuse}},
		})
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	srv := &http.Server{Handler: probeapi.NewHandler(s), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	p, err := startProc(bin, []string{"probe", "--region=bench", "--server=http://" + ln.Addr().String(),
		"--allow-private", "--listen=", fmt.Sprintf("--concurrency=%d", opts.concurrency)}, nil,
		filepath.Join(workDir, "agent.log"))
	if err != nil {
		_ = srv.Close()
		return nil, nil, err
	}
	name, what := "uptime-operator probe", "new connection"
	if opts.reuse {
		name, what = "uptime-operator probe reuse", "connection reused (http.reuseConnection)"
	}
	c := &contestant{
		name: name,
		what: fmt.Sprintf("%s, body read, keyword, result pushed (%d slots)", what, opts.concurrency),
		proc: p,
		checks: func() (int64, int64, error) {
			return s.total.Load(), s.failed.Load(), nil
		},
		ready: func() bool { return s.total.Load() > 0 },
	}
	return c, func() { p.stop(); _ = srv.Close() }, nil
}

// startBlackbox runs blackbox_exporter with its http_2xx module; workers
// of the harness drive it through GET /probe, as Prometheus would.
func startBlackbox(bin, target, workDir string, workers int) (*contestant, func(), error) {
	port, err := freePort()
	if err != nil {
		return nil, nil, err
	}
	cfg := filepath.Join(workDir, "blackbox.yml")
	if err := os.WriteFile(cfg, []byte("modules:\n  http_2xx:\n    prober: http\n    timeout: 5s\n"), 0o644); err != nil {
		return nil, nil, err
	}
	p, err := startProc(bin, []string{"--config.file=" + cfg, fmt.Sprintf("--web.listen-address=127.0.0.1:%d", port),
		"--log.level=warn", "--log.prober=warn"}, nil, filepath.Join(workDir, "blackbox.log"))
	if err != nil {
		return nil, nil, err
	}
	probeURL := fmt.Sprintf("http://127.0.0.1:%d/probe?module=http_2xx&target=%s", port, url.QueryEscape(target))
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers}, Timeout: 10 * time.Second}
	var total, failed atomic.Int64
	probe := func(ctx context.Context) bool {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, probeURL, nil)
		resp, err := client.Do(req)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode == http.StatusOK && bytes.Contains(b, []byte("\nprobe_success 1\n"))
	}
	c := &contestant{
		name:   "blackbox_exporter",
		what:   fmt.Sprintf("http_2xx through /probe: new connection, metrics rendered (%d clients)", workers),
		proc:   p,
		checks: func() (int64, int64, error) { return total.Load(), failed.Load(), nil },
		drive: func(ctx context.Context) {
			var wg sync.WaitGroup
			for range workers {
				wg.Go(func() {
					for ctx.Err() == nil {
						ok := probe(ctx)
						if ctx.Err() != nil {
							return
						}
						total.Add(1)
						if !ok {
							failed.Add(1)
						}
					}
				})
			}
			wg.Wait()
		},
		ready: func() bool { return probe(context.Background()) },
	}
	return c, func() { p.stop() }, nil
}

// gatusOptions select a Gatus setup.
type gatusOptions struct {
	label       string
	what        string
	conditions  []string
	endpoints   int
	concurrency int
}

// startGatus runs Gatus with in-memory storage, metrics on and
// opts.endpoints endpoints of the target at a 1 ms interval (each endpoint
// checks back to back), opts.concurrency at once. Gatus starts its
// endpoints 222 ms apart, so ready waits until every one has a result.
func startGatus(bin, target, workDir string, opts gatusOptions) (*contestant, func(), error) {
	port, err := freePort()
	if err != nil {
		return nil, nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "metrics: true\nconcurrency: %d\nstorage:\n  type: memory\nweb:\n  address: 127.0.0.1\n  port: %d\nendpoints:\n", opts.concurrency, port)
	for i := range opts.endpoints {
		fmt.Fprintf(&b, "  - name: target-%d\n    url: %q\n    interval: 1ms\n    conditions:\n", i, target)
		for _, c := range opts.conditions {
			fmt.Fprintf(&b, "      - %q\n", c)
		}
	}
	cfg := filepath.Join(workDir, "gatus-"+opts.label+".yaml")
	if err := os.WriteFile(cfg, []byte(b.String()), 0o644); err != nil {
		return nil, nil, err
	}
	p, err := startProc(bin, nil, []string{"GATUS_CONFIG_PATH=" + cfg, "GATUS_LOG_LEVEL=WARN"},
		filepath.Join(workDir, "gatus-"+opts.label+".log"))
	if err != nil {
		return nil, nil, err
	}
	metricsURL := fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
	scrape := func() (total, failed int64, endpoints int, err error) {
		resp, err := http.Get(metricsURL)
		if err != nil {
			return 0, 0, 0, err
		}
		defer resp.Body.Close()
		seen := map[string]bool{}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if !strings.HasPrefix(line, "gatus_results_total{") {
				continue
			}
			labels, value, _ := strings.Cut(line, "} ")
			n, _ := strconv.ParseFloat(value, 64)
			total += int64(n)
			if !strings.Contains(labels, `success="true"`) {
				failed += int64(n)
			}
			if i := strings.Index(labels, `name="`); i >= 0 {
				seen[labels[i:i+strings.IndexByte(labels[i+6:], '"')+6]] = true
			}
		}
		return total, failed, len(seen), sc.Err()
	}
	c := &contestant{
		name: "gatus (" + opts.label + ")",
		what: opts.what,
		proc: p,
		checks: func() (int64, int64, error) {
			t, f, _, err := scrape()
			return t, f, err
		},
		ready: func() bool {
			_, _, n, err := scrape()
			return err == nil && n >= opts.endpoints
		},
	}
	return c, func() { p.stop() }, nil
}
