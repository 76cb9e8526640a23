package probes

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

// BenchmarkBrowserCheck runs whole browser checks one after the other (a
// browser context of the shared local Chromium each, a page that renders
// with a script, a wait for its selector and text, one evaluate step) and
// reports what one costs: CPU-seconds of this process and of the browser
// (getrusage of self and children, the browser having exited), the peak
// memory, the largest sum of the proportional set sizes of the browser's
// processes seen while the checks ran (sampled every 20 ms from /proc),
// and apart the CPU-seconds of the first check, which starts the browser.
// docs/performance.md turns them into a region's capacity.
func BenchmarkBrowserCheck(b *testing.B) {
	site := renderingSite(b, "pw")
	env := browserEnv(b)
	a := &probeapi.Assignment{ID: "bench", Type: string(monv1.MonitorBrowser), URL: site.URL + "/app", TimeoutMs: 60000,
		Config: monv1.MonitorSpec{Browser: &monv1.BrowserConfig{WaitForSelector: "h1.ready", WaitForText: "All systems go",
			Steps: []monv1.BrowserStep{{Action: monv1.BrowserEvaluate, Expression: "document.title !== undefined"}}}}}
	stop := make(chan struct{})
	var (
		mu   sync.Mutex
		peak int64
		wg   sync.WaitGroup
	)
	wg.Go(func() {
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			if kb, _ := descendants(os.Getpid()); kb > 0 {
				mu.Lock()
				peak = max(peak, kb)
				mu.Unlock()
			}
		}
	})
	cpu := func() time.Duration {
		var self, children syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
		_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
		tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
		_, live := descendants(os.Getpid())
		return tv(self.Utime) + tv(self.Stime) + tv(children.Utime) + tv(children.Stime) + live
	}
	// The first check starts the shared browser: its cost is reported
	// apart, once per agent (and after each idle stop).
	before := cpu()
	if r := Run(context.Background(), a, env); r.Status != probeapi.StatusUp {
		b.Fatalf("first check: status %s: %s", r.Status, r.ErrorMessage)
	}
	first := cpu() - before
	b.ResetTimer()
	before = cpu()
	for range b.N {
		if r := Run(context.Background(), a, env); r.Status != probeapi.StatusUp {
			b.Fatalf("status %s: %s", r.Status, r.ErrorMessage)
		}
	}
	used := cpu() - before
	b.StopTimer()
	env.Browsers.stopShared()
	close(stop)
	wg.Wait()
	b.ReportMetric(used.Seconds()/float64(b.N), "cpu-s/check")
	b.ReportMetric(float64(peak)/1024, "peak-MiB")
	b.ReportMetric(first.Seconds(), "first-cpu-s")
}

// descendants sums, over the live processes below pid, the proportional
// set size (Pss of /proc/<pid>/smaps_rollup) and the CPU time (user and
// system, their own and that of the children they reaped: a browser reaps
// the renderer of each check when its browser context closes).
func descendants(pid int) (pssKiB int64, cpu time.Duration) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, 0
	}
	parent := map[int]int{}
	ticks := map[int]int64{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// The fields after the command name (which may hold spaces) are
		// state, ppid, ...
		s := string(raw)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) > 15 {
			parent[p], _ = strconv.Atoi(fields[1])
			// utime, stime, cutime, cstime: fields 14-17 of stat.
			for _, f := range fields[11:15] {
				n, _ := strconv.ParseInt(f, 10, 64)
				ticks[p] += n
			}
		}
	}
	for p := range parent {
		q := p
		for q > 1 && q != pid {
			q = parent[q]
		}
		if q != pid || p == pid {
			continue
		}
		// USER_HZ is 100 on Linux.
		cpu += time.Duration(ticks[p]) * 10 * time.Millisecond
		f, err := os.Open(fmt.Sprintf("/proc/%d/smaps_rollup", p))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "Pss:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				pssKiB += kb
				break
			}
		}
		_ = f.Close()
	}
	return pssKiB, cpu
}
