//go:build chaos

// Package chaos is the fault suite behind `make chaos`: Go tests that break
// something real (a full disk under the SQLite file, malformed traffic at
// every documented REST operation, …) and measure what the product does.
// Each test adds rows to one table of figures that TestMain prints at the
// end: the scenario, the measured figure and the figure expected.
//
// Every test runs in parallel with the others (`make chaos` passes
// -test.parallel 6), so the suite takes about as long as its longest test,
// the 5-minute webhook receiver outage.
//
// The suite is excluded from `go test ./...` by the chaos build tag. It runs
// inside network and mount namespaces of its own (`make chaos` starts the
// test binary under `unshare --net --mount`), so its traffic cannot leave
// the machine and its mounts vanish with it; the tests refuse to run
// anywhere an interface other than loopback is up unless -chaos.host-net
// says so.
package chaos

import (
	"flag"
	"fmt"
	"net"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
)

var hostNet = flag.Bool("chaos.host-net", false, "run even when interfaces other than loopback are up (the suite's traffic still targets loopback only)")

// figure is one row of the table.
type figure struct {
	scenario string
	measured string
	expected string
	ok       bool
}

var (
	figuresMu sync.Mutex
	figures   []figure
	order     = map[string]int{}
)

// record adds a row; ok says whether the measured figure meets the expected
// one (the test fails on its own too; the column makes the table readable).
func record(t *testing.T, scenario, measured, expected string, ok bool) {
	t.Helper()
	figuresMu.Lock()
	defer figuresMu.Unlock()
	if _, seen := order[t.Name()]; !seen {
		order[t.Name()] = len(order)
	}
	figures = append(figures, figure{scenario: t.Name() + ": " + scenario, measured: measured, expected: expected, ok: ok})
	if !ok {
		t.Errorf("%s: measured %s, expected %s", scenario, measured, expected)
	}
}

// recordCount records a count against an expected exact value.
func recordCount(t *testing.T, scenario string, got, want int) {
	t.Helper()
	record(t, scenario, fmt.Sprint(got), fmt.Sprint(want), got == want)
}

func TestMain(m *testing.M) {
	flag.Parse()
	if !*hostNet {
		if ifs := nonLoopbackUp(); len(ifs) > 0 {
			fmt.Fprintf(os.Stderr, "chaos: interfaces other than loopback are up (%s); run the suite with `make chaos` (its own network namespace) or pass -chaos.host-net\n", strings.Join(ifs, ", "))
			os.Exit(2)
		}
	}
	code := m.Run()
	printTable()
	os.Exit(code)
}

func nonLoopbackUp() []string {
	ifs, err := net.Interfaces()
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	for _, i := range ifs {
		if i.Flags&net.FlagUp != 0 && i.Flags&net.FlagLoopback == 0 {
			out = append(out, i.Name)
		}
	}
	return out
}

func printTable() {
	figuresMu.Lock()
	defer figuresMu.Unlock()
	if len(figures) == 0 {
		return
	}
	sort.SliceStable(figures, func(i, j int) bool {
		ti, tj := strings.SplitN(figures[i].scenario, ":", 2)[0], strings.SplitN(figures[j].scenario, ":", 2)[0]
		return order[ti] < order[tj]
	})
	w := [3]int{len("scenario"), len("measured"), len("expected")}
	for _, f := range figures {
		w[0], w[1], w[2] = max(w[0], len(f.scenario)), max(w[1], len(f.measured)), max(w[2], len(f.expected))
	}
	fmt.Println()
	fmt.Println("chaos figures")
	fmt.Printf("| %-*s | %-*s | %-*s | ok |\n", w[0], "scenario", w[1], "measured", w[2], "expected")
	fmt.Printf("|%s|%s|%s|----|\n", strings.Repeat("-", w[0]+2), strings.Repeat("-", w[1]+2), strings.Repeat("-", w[2]+2))
	for _, f := range figures {
		ok := "yes"
		if !f.ok {
			ok = "NO"
		}
		fmt.Printf("| %-*s | %-*s | %-*s | %-3s|\n", w[0], f.scenario, w[1], f.measured, w[2], f.expected, ok)
	}
}
