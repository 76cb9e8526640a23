package probes

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

// TestBufferStateChangesGoFirst: behind a backlog of passing results on
// disk and in memory, a failing result, the recovery after it and an ad-hoc
// result go to the urgent lane; every result is still delivered once, and
// a spill at shutdown keeps the urgent ones.
func TestBufferStateChangesGoFirst(t *testing.T) {
	b := &Buffer{Dir: t.TempDir(), MemoryLimit: 10}
	res := func(i int, monitor string, s probeapi.Status) probeapi.Result {
		return probeapi.Result{ID: fmt.Sprint("r", i), MonitorID: monitor, Status: s}
	}
	// 25 passing results of m0…m4: two segments of 11 on disk (r0–r21)
	// and three in memory.
	for i := range 25 {
		if b.Add(res(i, fmt.Sprint("m", i%5), probeapi.StatusUp)) {
			t.Fatalf("passing result %d counted as urgent", i)
		}
	}
	if !b.Add(res(100, "m1", probeapi.StatusDown)) {
		t.Fatal("a failing result is not urgent")
	}
	if b.Add(res(101, "m2", probeapi.StatusDegraded)) {
		t.Fatal("a degraded result of a monitor that never failed is urgent")
	}
	if !b.Add(res(102, "m1", probeapi.StatusUp)) {
		t.Fatal("the recovery after a failure is not urgent")
	}
	if b.Add(res(103, "m1", probeapi.StatusUp)) {
		t.Fatal("a passing result after the recovery is urgent")
	}
	b.AddUrgent(res(104, "m3", probeapi.StatusUp))
	if n := b.Len(); n != 30 {
		t.Fatalf("Len %d, want 30", n)
	}

	// The urgent lane has the state changes in order; the backlog lane
	// does not have them.
	batch, ack := b.PeekUrgent(2)
	if len(batch) != 2 || batch[0].ID != "r100" || batch[1].ID != "r102" {
		t.Fatalf("first urgent batch %v, want r100 and r102", ids(batch))
	}
	ack()
	if batch, _ := b.Peek(1); len(batch) == 0 || batch[0].ID != "r0" || slices.ContainsFunc(batch, func(r probeapi.Result) bool { return r.ID == "r100" }) {
		t.Fatalf("the backlog lane starts with %v, want r0", ids(batch))
	}
	// The backlog lane delivers the oldest first, and a spill (shutdown)
	// in between loses nothing: the urgent result left joins the backlog.
	if err := b.Spill(); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{"r100": 1, "r102": 1}
	var order []string
	for {
		batch, ack := b.Peek(4)
		if len(batch) == 0 {
			break
		}
		for _, r := range batch {
			seen[r.ID]++
			order = append(order, r.ID)
		}
		ack()
	}
	if len(seen) != 30 {
		t.Fatalf("delivered %d distinct results, want 30", len(seen))
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("%s delivered %d times", id, n)
		}
	}
	if order[0] != "r0" {
		t.Errorf("the backlog should come oldest first; got %v", order[:5])
	}
	// r104 (ad-hoc) was spilled with the memory results: it comes before
	// them, after the older segments.
	pos := map[string]int{}
	for i, id := range order {
		pos[id] = i
	}
	if pos["r104"] > pos["r22"] {
		t.Errorf("the spilled urgent result came after the memory results it was spilled with: %v", order)
	}
}

func ids(rs []probeapi.Result) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

// TestBufferBatchesFitTheManagersLimit: failed browser checks with
// screenshots and results with large details, in memory and in segments on
// disk, go in batches the manager accepts (probeapi.MaxBatchBytes as
// encoded), each result once and in order; a segment half delivered when
// the agent stops is delivered again whole by the next run.
func TestBufferBatchesFitTheManagersLimit(t *testing.T) {
	dir := t.TempDir()
	b := &Buffer{Dir: dir, MemoryLimit: 60}
	shot := make([]byte, probeapi.MaxScreenshotBytes)
	for i := range shot {
		shot[i] = byte(i * 7)
	}
	details := []byte(`"` + strings.Repeat("x", 160<<10) + `"`)
	var want []string
	for i := range 50 { // urgent: failed checks with a screenshot each
		r := probeapi.Result{ID: fmt.Sprint("f", i), MonitorID: fmt.Sprint("b", i), Status: probeapi.StatusDown, Screenshot: shot}
		b.Add(r)
		want = append(want, r.ID)
	}
	for i := range 150 { // passing results with large details: two segments of 61 on disk
		r := probeapi.Result{ID: fmt.Sprint("p", i), MonitorID: "m", Status: probeapi.StatusUp, Details: details}
		b.Add(r)
		want = append(want, r.ID)
	}
	var got []string
	deliver := func(peek func(int) ([]probeapi.Result, func())) int {
		batch, ack := peek(200)
		if len(batch) == 0 {
			return 0
		}
		body, err := json.Marshal(probeapi.ResultBatch{Region: "r", AgentID: "a", Results: batch})
		if err != nil {
			t.Fatal(err)
		}
		if len(body) > probeapi.MaxBatchBytes {
			t.Fatalf("a batch of %d results is %d bytes, over the manager's %d", len(batch), len(body), probeapi.MaxBatchBytes)
		}
		got = append(got, ids(batch)...)
		ack()
		return len(batch)
	}
	for deliver(b.PeekUrgent) > 0 {
	}
	// Half of the first segment, then a restart: the next run sends the
	// segment again from its start.
	first, _ := b.Peek(200)
	if len(first) == 0 || len(first) >= 60 {
		t.Fatalf("the first segment went in one batch of %d", len(first))
	}
	deliver(b.Peek)
	if err := b.Spill(); err != nil {
		t.Fatal(err)
	}
	b = &Buffer{Dir: dir, MemoryLimit: 60}
	for deliver(b.Peek) > 0 {
	}
	// Redelivered ids are the manager's to drop; each id is here, in order.
	if !slices.Equal(slices.Compact(dedupe(got)), want) {
		t.Fatalf("delivered %d results, want each of %d once in order", len(dedupe(got)), len(want))
	}
	if b.Len() != 0 {
		t.Fatalf("%d results left", b.Len())
	}
}

// dedupe drops ids already seen, keeping first occurrences in order.
func dedupe(ids []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}
