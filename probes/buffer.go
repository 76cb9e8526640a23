package probes

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

// Buffer holds results until the manager accepts them. It keeps up to
// MemoryLimit results in memory; beyond that it spills them to JSON-lines
// segment files in Dir (oldest drained first, so a restarted agent still
// delivers them) or, without Dir, drops the oldest. Segments beyond
// MaxSegments are deleted oldest first. Redelivery is safe because the
// manager ingests each result id once.
//
// Results that can change a monitor's state go first (PeekUrgent): a
// failing result, the first passing one after a failure, and ad-hoc
// results someone waits for (AddUrgent). When the manager falls behind, a backlog of passing results
// (at 100,000 monitors, minutes of them) would otherwise hold back the one
// result that opens an incident; the order does not matter to the manager,
// which judges from each region's newest check by time.
type Buffer struct {
	// Dir enables on-disk segments; empty keeps results in memory only.
	Dir string
	// MemoryLimit bounds results held in memory (default 10000).
	MemoryLimit int
	// MaxSegments bounds segment files on disk (default 1000).
	MaxSegments int

	mu sync.Mutex
	// urgent holds the results that go first, up to MemoryLimit (older
	// ones join mem); failing records the monitors whose latest result
	// failed, to tell a recovery.
	urgent   []probeapi.Result
	failing  map[string]bool
	mem      []probeapi.Result
	segments []segment // oldest first
	seq      int
	dropped  int64
	loaded   bool
}

type segment struct {
	path  string
	count int
	// sent is how many of its results this run delivered (a segment too
	// large for one batch goes in several; after a restart it is sent
	// again from the start, which the manager de-duplicates).
	sent int
}

func (b *Buffer) limits() (int, int) {
	mem, segs := b.MemoryLimit, b.MaxSegments
	if mem <= 0 {
		mem = 10000
	}
	if segs <= 0 {
		segs = 1000
	}
	return mem, segs
}

// load finds segments left by an earlier run.
func (b *Buffer) load() {
	if b.loaded || b.Dir == "" {
		return
	}
	b.loaded = true
	paths, _ := filepath.Glob(filepath.Join(b.Dir, "results-*.jsonl"))
	sort.Strings(paths)
	for _, p := range paths {
		if n, err := countLines(p); err == nil {
			b.segments = append(b.segments, segment{path: p, count: n})
		}
	}
}

// Add queues a result; one that fails, or passes after a failure of its
// monitor, goes first, and Add reports that it does.
func (b *Buffer) Add(r probeapi.Result) (urgent bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	failed := r.Status != probeapi.StatusUp && r.Status != probeapi.StatusDegraded
	urgent = failed || b.failing[r.MonitorID]
	if failed {
		if b.failing == nil {
			b.failing = map[string]bool{}
		}
		b.failing[r.MonitorID] = true
	} else {
		delete(b.failing, r.MonitorID)
	}
	b.add(r, urgent)
	return urgent
}

// AddUrgent queues a result that goes first (an ad-hoc check's).
func (b *Buffer) AddUrgent(r probeapi.Result) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.add(r, true)
}

func (b *Buffer) add(r probeapi.Result, urgent bool) {
	b.load()
	memLimit, _ := b.limits()
	if urgent {
		b.urgent = append(b.urgent, r)
		if len(b.urgent) <= memLimit {
			return
		}
		r, b.urgent = b.urgent[0], b.urgent[1:]
	}
	b.mem = append(b.mem, r)
	if len(b.mem) <= memLimit {
		return
	}
	if b.Dir != "" {
		if err := b.spillLocked(); err == nil {
			return
		}
	}
	n := len(b.mem) - memLimit
	b.dropped += int64(n)
	b.mem = append(b.mem[:0], b.mem[n:]...)
}

// Spill writes the in-memory results to a segment (at shutdown).
func (b *Buffer) Spill() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.mem = append(b.urgent, b.mem...)
	b.urgent = nil
	if b.Dir == "" || len(b.mem) == 0 {
		return nil
	}
	return b.spillLocked()
}

func (b *Buffer) spillLocked() error {
	if err := os.MkdirAll(b.Dir, 0o750); err != nil {
		return fmt.Errorf("create buffer dir: %w", err)
	}
	b.seq++
	path := filepath.Join(b.Dir, fmt.Sprintf("results-%020d-%06d.jsonl", time.Now().UnixNano(), b.seq))
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("create buffer segment: %w", err)
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for i := range b.mem {
		if err := enc.Encode(&b.mem[i]); err != nil {
			f.Close()
			os.Remove(path)
			return fmt.Errorf("write buffer segment: %w", err)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("write buffer segment: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close buffer segment: %w", err)
	}
	b.segments = append(b.segments, segment{path: path, count: len(b.mem)})
	b.mem = b.mem[:0]
	_, maxSegs := b.limits()
	for len(b.segments) > maxSegs {
		b.dropped += int64(b.segments[0].count)
		os.Remove(b.segments[0].path)
		b.segments = b.segments[1:]
	}
	return nil
}

// Len returns the number of buffered results, in memory and on disk.
func (b *Buffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.load()
	n := len(b.urgent) + len(b.mem)
	for _, s := range b.segments {
		n += s.count
	}
	return n
}

// Dropped returns how many results were discarded because the buffer was full.
func (b *Buffer) Dropped() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.dropped
}

// PeekUrgent returns up to n of the results that go first and a func that
// removes them once delivered. The agent delivers them on a lane of their
// own, so that they need not wait for a large backlog batch in flight.
func (b *Buffer) PeekUrgent(n int) ([]probeapi.Result, func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return peekFront(&b.mu, &b.urgent, n)
}

// Peek returns up to n of the oldest other results and a func that removes
// them once delivered. Segments on disk go first.
func (b *Buffer) Peek(n int) ([]probeapi.Result, func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.load()
	for len(b.segments) > 0 {
		seg := b.segments[0]
		rs, err := readSegment(seg.path)
		if err != nil || len(rs) == 0 {
			os.Remove(seg.path)
			b.segments = b.segments[1:]
			continue
		}
		// A segment (at most MemoryLimit results) goes in as few batches
		// as BatchBytes allows; the manager de-duplicates a partial
		// redelivery.
		rest := rs[min(seg.sent, len(rs)):]
		if len(rest) == 0 {
			os.Remove(seg.path)
			b.segments = b.segments[1:]
			continue
		}
		k := fitBytes(rest, len(rest))
		return rest[:k], func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			if len(b.segments) == 0 || b.segments[0].path != seg.path || b.segments[0].sent != seg.sent {
				return
			}
			if seg.sent+k >= len(rs) {
				os.Remove(seg.path)
				b.segments = b.segments[1:]
				return
			}
			b.segments[0].sent += k
		}
	}
	return peekFront(&b.mu, &b.mem, n)
}

// peekFront returns up to n results from the front of *q (mu held), no
// more than fit in BatchBytes, and a func that removes them once delivered.
func peekFront(mu *sync.Mutex, q *[]probeapi.Result, n int) ([]probeapi.Result, func()) {
	k := fitBytes(*q, min(n, len(*q)))
	out := append([]probeapi.Result(nil), (*q)[:k]...)
	return out, func() {
		mu.Lock()
		defer mu.Unlock()
		// Only the delivered prefix is removed; Add may have appended
		// (or moved or dropped from the front) meanwhile.
		if len(*q) >= k && len(out) > 0 && (*q)[0].ID == out[0].ID {
			*q = append((*q)[:0], (*q)[k:]...)
		}
	}
}

// BatchBytes bounds the encoded size of the results one push carries, well
// under what the manager accepts (probeapi.MaxBatchBytes): a batch that
// large would be refused every time and hold its lane back for good.
const BatchBytes = probeapi.MaxBatchBytes / 2

// fitBytes is how many of the first n results of rs fit in BatchBytes by
// their estimated encoded size; at least one (a single result is bounded
// far below: its screenshot by probeapi.MaxScreenshotBytes).
func fitBytes(rs []probeapi.Result, n int) int {
	total := 0
	for i := range n {
		total += encodedSize(&rs[i])
		if total > BatchBytes && i > 0 {
			return i
		}
	}
	return n
}

// encodedSize over-estimates r's JSON size: the fixed fields, the strings
// that may be long (escaped at worst twice), Details and the screenshot's
// base64.
func encodedSize(r *probeapi.Result) int {
	return 1024 + 2*len(r.ErrorMessage) + len(r.Details) + (len(r.Screenshot)+2)/3*4
}

func readSegment(path string) ([]probeapi.Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []probeapi.Result
	dec := json.NewDecoder(f)
	for {
		var r probeapi.Result
		if err := dec.Decode(&r); err != nil {
			if strings.Contains(err.Error(), "EOF") {
				return out, nil
			}
			return out, err
		}
		out = append(out, r)
	}
}

func countLines(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n := 0
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 64<<10), 4<<20)
	for s.Scan() {
		n++
	}
	return n, s.Err()
}
