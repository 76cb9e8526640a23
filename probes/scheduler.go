package probes

import (
	"container/heap"
	"context"
	"hash/fnv"
	"sync"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

// JobFunc runs one scheduled check. planned is the slot the run belongs to.
type JobFunc func(ctx context.Context, a *probeapi.Assignment, planned time.Time)

// Scheduler runs every assignment at its interval, at a fixed phase
// hash(id) mod interval of the wall clock, so load is spread across the
// interval and a restarted agent keeps the same slots. A run that is still
// going when its next slot comes skips that slot, so runs of one monitor
// never overlap. At most Concurrency runs go at once; further due runs wait
// (and their lag grows).
//
// One goroutine and one timer serve all monitors through a min-heap of next
// run times, so idle monitors cost only their heap entry.
type Scheduler struct {
	// Run is called for every due slot, on one of Concurrency workers.
	Run JobFunc
	// Concurrency bounds simultaneous runs (default 64).
	Concurrency int
	// Clock defaults to RealClock.
	Clock Clock
	// IntervalUnit is the length of one interval "second" (default
	// time.Second); tests and benchmarks shorten it to simulate fast.
	IntervalUnit time.Duration
	// ObserveLag, when set, receives actual start minus planned start of
	// every run.
	ObserveLag func(time.Duration)
	// OnSkip, when set, is called when a slot is skipped because the
	// previous run of the monitor is still going.
	OnSkip func(a *probeapi.Assignment)

	mu       sync.Mutex
	entries  map[string]*entry
	queue    entryHeap
	wake     chan struct{}
	inFlight int
	wg       sync.WaitGroup
	once     sync.Once
}

// entry is one monitor in the schedule.
type entry struct {
	a        *probeapi.Assignment
	next     int64 // unix nanoseconds of the next slot
	interval int64 // nanoseconds
	phase    int64 // nanoseconds
	index    int   // position in queue, -1 when removed
	running  bool
}

type entryHeap []*entry

func (h entryHeap) Len() int           { return len(h) }
func (h entryHeap) Less(i, j int) bool { return h[i].next < h[j].next }
func (h entryHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *entryHeap) Push(x any) {
	e := x.(*entry)
	e.index = len(*h)
	*h = append(*h, e)
}
func (h *entryHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	e.index = -1
	return e
}

func (s *Scheduler) init() {
	s.once.Do(func() {
		if s.entries == nil {
			s.entries = map[string]*entry{}
		}
		s.wake = make(chan struct{}, 1)
		if s.Clock == nil {
			s.Clock = RealClock{}
		}
		if s.IntervalUnit <= 0 {
			s.IntervalUnit = time.Second
		}
		if s.Concurrency <= 0 {
			s.Concurrency = 64
		}
	})
}

// phaseOf returns hash(id) mod interval.
func phaseOf(id string, interval int64) int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(id))
	return int64(h.Sum64() % uint64(interval))
}

// nextSlot returns the first slot after now for a phase and interval.
func nextSlot(now, interval, phase int64) int64 {
	k := (now - phase) / interval
	t := k*interval + phase
	for t <= now {
		t += interval
	}
	return t
}

// Update replaces the scheduled set. Monitors that stay keep their slot
// (and a running check keeps running); changed intervals get a new slot;
// removed monitors are not run again.
func (s *Scheduler) Update(as []probeapi.Assignment) {
	s.init()
	now := s.Clock.Now().UnixNano()
	s.mu.Lock()
	keep := make(map[string]bool, len(as))
	for i := range as {
		a := as[i] // copy: the scheduler owns its assignments
		interval := int64(max(a.IntervalSeconds, 1)) * int64(s.IntervalUnit)
		keep[a.ID] = true
		if e, ok := s.entries[a.ID]; ok {
			e.a = &a
			if e.interval != interval {
				e.interval, e.phase = interval, phaseOf(a.ID, interval)
				e.next = nextSlot(now, e.interval, e.phase)
				heap.Fix(&s.queue, e.index)
			}
			continue
		}
		e := &entry{a: &a, interval: interval, phase: phaseOf(a.ID, interval)}
		e.next = nextSlot(now, e.interval, e.phase)
		s.entries[a.ID] = e
		heap.Push(&s.queue, e)
	}
	for id, e := range s.entries {
		if !keep[id] {
			heap.Remove(&s.queue, e.index)
			delete(s.entries, id)
		}
	}
	s.mu.Unlock()
	s.poke()
}

// Len returns the number of scheduled monitors.
func (s *Scheduler) Len() int {
	s.init()
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.entries)
}

// InFlight returns the number of runs going on.
func (s *Scheduler) InFlight() int {
	s.init()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inFlight
}

func (s *Scheduler) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Start runs the schedule until ctx ends, then waits for running checks.
// Concurrency long-lived workers run the due slots: a goroutine per run
// would grow a fresh stack to the depth of an HTTP check every time.
func (s *Scheduler) Start(ctx context.Context) {
	s.init()
	work := make(chan dueJob)
	for range s.Concurrency {
		s.wg.Go(func() {
			// Each worker's runs derive their contexts (their timeouts)
			// from one of the worker's own: derived from ctx itself,
			// every run would enter and leave ctx's one set of children,
			// under a lock all workers share.
			wctx, cancel := context.WithCancel(ctx)
			defer cancel()
			for job := range work {
				if s.ObserveLag != nil {
					s.ObserveLag(s.Clock.Now().Sub(job.planned))
				}
				s.Run(wctx, job.a, job.planned)
				s.finish(job.e)
			}
		})
	}
	timer := s.Clock.NewTimer(time.Hour)
	defer timer.Stop()
	defer s.wg.Wait()
	defer close(work)
	for {
		s.mu.Lock()
		wait := time.Hour
		if len(s.queue) > 0 {
			wait = time.Duration(s.queue[0].next - s.Clock.Now().UnixNano())
		}
		s.mu.Unlock()
		if wait > 0 {
			timer.Reset(wait)
			select {
			case <-ctx.Done():
				return
			case <-s.wake:
				timer.Stop()
				continue
			case <-timer.C():
			}
		}
		jobs := s.due()
		for i, job := range jobs {
			select {
			case work <- job:
			case <-ctx.Done():
				for _, j := range jobs[i:] {
					s.finish(j.e)
				}
				return
			}
		}
	}
}

type dueJob struct {
	e       *entry
	a       *probeapi.Assignment
	planned time.Time
}

// due pops every entry whose slot has come, marks it running and moves its
// slot on. Slots missed entirely (the agent was stalled) are skipped.
func (s *Scheduler) due() []dueJob {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.Clock.Now().UnixNano()
	var jobs []dueJob
	for len(s.queue) > 0 && s.queue[0].next <= now {
		e := s.queue[0]
		planned := e.next
		e.next = nextSlot(max(now, planned), e.interval, e.phase)
		if now-planned >= e.interval {
			planned = e.next - e.interval // run the latest slot, not a stale one
		}
		heap.Fix(&s.queue, 0)
		if e.running {
			if s.OnSkip != nil {
				s.OnSkip(e.a)
			}
			continue
		}
		e.running = true
		s.inFlight++
		jobs = append(jobs, dueJob{e: e, a: e.a, planned: time.Unix(0, planned)})
	}
	return jobs
}

func (s *Scheduler) finish(e *entry) {
	s.mu.Lock()
	e.running = false
	s.inFlight--
	s.mu.Unlock()
}
