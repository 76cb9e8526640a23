package monitors

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"hash/maphash"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/plans"
	"github.com/uptime-operator/uptime-operator/internal/writethrough"
)

// listMonitors answers GET /monitors (?tag filters): every monitor of the
// workspace, newest first. Each item is the encoded monitor object, reused
// from listCache while nothing it is built from changed, and the array is
// streamed: a workspace of 10,000 monitors is 8 MB of JSON that would
// otherwise be built and encoded again for every request. When no item
// changed since the last answer of the same workspace and tag (the
// fingerprint of every item's key is the same), that answer's items are
// written again in their order without sorting or looking them up. An
// answer kept by the informer's version (sortedAnswer) is laid out in
// segments of half a megabyte written in one call each, as a bare handler
// writes a body it has: passed through a 64 KiB buffer, the same answer was
// copied once more per request and went out in 128 chunks.
func (h *Handlers) listMonitors(w http.ResponseWriter, r *http.Request) {
	ctx, c := r.Context(), core.CallerFrom(r.Context())
	tag := strings.ToLower(strings.TrimSpace(r.URL.Query().Get("tag")))
	x := h.refs(c.Namespace)
	if err := x.load(ctx); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	defaults := strings.Join(plans.DefaultRegions(x.plan, x.regions), ",")
	// With the informer's version of the workspace's monitors (read before
	// listing them) and no write of this replica laid over them, an
	// answer of the same version and references is reused without even
	// reading the monitors. The informer's version moves when its event
	// handler runs, which may be after the overlay dropped a write the
	// informer's store already holds: the count of this replica's writes
	// (read before Quiet, so that every write it counts is in the store)
	// keeps an answer of before the write from being served meanwhile.
	version := versionKey{namespace: c.Namespace, tag: tag, defaultRegions: defaults, refs: x.fingerprint(),
		writes: h.d.Overlay.Version(c.Namespace)}
	versioned := false
	if v, ok := h.monitors.(monitorVersioner); ok && h.d.Overlay.Quiet(c.Namespace) {
		version.version, versioned = v.MonitorsVersion(c.Namespace)
	}
	if versioned {
		if a := h.items.latestAnswer(version.slot()); a != nil {
			if a.key == version {
				writeSegments(w, a.segs)
				return
			}
			if next := h.advance(ctx, a, version, x, defaults, tag); next != nil {
				h.items.storeLatest(next)
				writeSegments(w, next.segs)
				return
			}
		}
	}
	var raws [][]byte
	ms, err := h.sharedMonitors(ctx, c.Namespace, false)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	if tag != "" {
		ms = slices.DeleteFunc(ms, func(m *monv1.Monitor) bool { return !slices.Contains(m.Spec.Tags, tag) })
	}
	// Without a version (or with this replica's writes laid over the
	// monitors), an answer built from the same items is reused. With a
	// version that changed, some item did too: the fingerprint is not
	// worth its time.
	var answer answerKey
	cacheable := !versioned
	if cacheable {
		answer = answerKey{namespace: c.Namespace, tag: tag, defaultRegions: defaults, n: len(ms)}
		answer.fingerprint, cacheable = h.fingerprint(ctx, ms, x)
	}
	if cacheable {
		raws = h.items.answer(answer)
	}
	written := false
	if raws == nil {
		sortNewestFirst(ms)
		if raws, err = h.streamList(ctx, w, ms, x, defaults); err != nil {
			core.WriteErr(w, r, err)
			return
		}
		written = true
		if cacheable {
			h.items.storeAnswer(answer, raws)
		}
	}
	if versioned && storable(ms) {
		h.items.storeLatest(laidOut(version, ms, slices.Clone(raws)))
	}
	if !written {
		writeList(w, raws)
	}
}

// listChunk is how many list items are built before they are written.
const listChunk = 512

// streamList writes the list of ms (sorted) as its items are built, and
// returns them. Chunks of listChunk items are built side by side, one
// worker per CPU, and written in order as each is done: the first bytes
// of 100,000 monitors' first answer (every item encoded) leave after one
// chunk instead of after the last item. An error before anything was
// written is returned; after that, the response is cut off.
func (h *Handlers) streamList(ctx context.Context, w http.ResponseWriter, ms []*monv1.Monitor, x *monitorRefs, defaults string) ([][]byte, error) {
	raws := make([][]byte, len(ms))
	chunks := (len(ms) + listChunk - 1) / listChunk
	done := make([]chan error, chunks)
	for c := range done {
		done[c] = make(chan error, 1)
	}
	go func() {
		workers := make(chan struct{}, runtime.GOMAXPROCS(0))
		for c := range chunks {
			workers <- struct{}{}
			go func() {
				defer func() { <-workers }()
				lo, hi := c*listChunk, min((c+1)*listChunk, len(ms))
				part, err := h.listItems(ctx, ms[lo:hi], x, defaults)
				copy(raws[lo:hi], part)
				done[c] <- err
			}()
		}
	}()
	var lw *listWriter
	for c := range chunks {
		if err := <-done[c]; err != nil {
			if lw == nil {
				return nil, err
			}
			panic(http.ErrAbortHandler)
		}
		if lw == nil {
			lw = startList(w)
		}
		lw.items(raws[c*listChunk : min((c+1)*listChunk, len(ms))])
	}
	if lw == nil {
		lw = startList(w)
	}
	lw.end()
	return raws, nil
}

// maxAdvance is the most changed monitors placed into an answer; past it
// the list is built again.
const maxAdvance = 256

// advance brings answer a up to the informer's version k.version: each
// monitor that changed since (monitorJournal) leaves its place and, as the
// informer has it now, is placed again by binary search with its item
// (from the cache, or encoded). The other items keep their place and
// bytes, which depend on nothing else that k does not name, and the
// segments of a that no change touched are kept as they are (a status
// write copies half a megabyte, not the answer). nil when it
// cannot: a is of other references, default regions or a later version,
// the changes are not all known, or there are too many.
func (h *Handlers) advance(ctx context.Context, a *sortedAnswer, k versionKey, x *monitorRefs, defaults, tag string) *sortedAnswer {
	j, ok := h.monitors.(monitorJournal)
	same := a.key
	same.version = k.version
	if !ok || same != k || a.key.version > k.version {
		return nil
	}
	changes, ok := j.MonitorChanges(k.namespace, a.key.version, k.version)
	if !ok || len(changes) > maxAdvance {
		return nil
	}
	names := make(map[string]struct{}, len(changes))
	var gone []int // indexes in a of the items that leave
	for _, c := range changes {
		names[c.name] = struct{}{}
		at := &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Namespace: k.namespace, Name: c.name, CreationTimestamp: c.created}}
		if i, found := slices.BinarySearchFunc(a.ms, at, core.NewestFirst); found {
			gone = append(gone, i)
		}
	}
	var placed []*monv1.Monitor
	for name := range names {
		m, err := j.MonitorByKey(k.namespace + "/" + name)
		if err != nil {
			return nil
		}
		if m == nil || m.DeletionTimestamp != nil || (tag != "" && !slices.Contains(m.Spec.Tags, tag)) {
			continue
		}
		if m.UID == "" || m.ResourceVersion == "" {
			return nil
		}
		placed = append(placed, m)
	}
	slices.SortFunc(placed, core.NewestFirst)
	items, err := h.listItems(ctx, placed, x, defaults)
	if err != nil {
		return nil
	}
	// Each placed monitor goes in before the item of a it sorts before (in
	// place of one it is equal to); placed is sorted, so are the places.
	ins := make([]int, len(placed))
	for n, m := range placed {
		i, found := slices.BinarySearchFunc(a.ms, m, core.NewestFirst)
		if found {
			gone = append(gone, i)
		}
		ins[n] = i
	}
	slices.Sort(gone)
	gone = slices.Compact(gone)
	// The segments of a that nothing leaves or goes into keep their items
	// and bytes; the items of the others, and the placed ones, are laid
	// out again.
	b := newSegmentBuilder(len(a.ms) - len(gone) + len(placed))
	g, p, first := 0, 0, 0
	for _, seg := range a.segs {
		end := first + seg.n
		for ; p < len(ins) && ins[p] <= first; p++ {
			b.add(placed[p], items[p])
		}
		untouched := (g == len(gone) || gone[g] >= end) && (p == len(ins) || ins[p] >= end)
		if untouched && !b.shortRun() {
			b.keep(a.ms[first:end], a.raws[first:end], seg)
			first = end
			continue
		}
		for i := first; i < end; i++ {
			for ; p < len(ins) && ins[p] == i; p++ {
				b.add(placed[p], items[p])
			}
			if g < len(gone) && gone[g] == i {
				g++
				continue
			}
			b.add(a.ms[i], a.raws[i])
		}
		first = end
	}
	for ; p < len(ins); p++ {
		b.add(placed[p], items[p])
	}
	return b.answer(k)
}

// storable reports whether every monitor has a uid and a resourceVersion
// (was stored by an API server), so that an answer built from them may be
// kept.
func storable(ms []*monv1.Monitor) bool {
	for _, m := range ms {
		if m.UID == "" || m.ResourceVersion == "" {
			return false
		}
	}
	return true
}

// sortNewestFirst sorts ms as core.NewestFirst does, comparing creation times
// in whole seconds as integers first (10,000 time.Time comparisons took several
// milliseconds).
func sortNewestFirst(ms []*monv1.Monitor) {
	type keyed struct {
		at int64
		m  *monv1.Monitor
	}
	ks := make([]keyed, len(ms))
	for i, m := range ms {
		ks[i] = keyed{at: m.CreationTimestamp.Unix(), m: m}
	}
	slices.SortFunc(ks, func(a, b keyed) int {
		if c := cmp.Compare(b.at, a.at); c != 0 {
			return c
		}
		return core.NewestFirst(a.m, b.m)
	})
	for i := range ks {
		ms[i] = ks[i].m
	}
}

// writeSegments writes the list answer of segs, a segment in one call
// each: net/http sends each as one chunk, straight from its bytes.
func writeSegments(w http.ResponseWriter, segs []listSegment) {
	w.Header().Set("Content-Type", listContentType)
	w.WriteHeader(http.StatusOK)
	if len(segs) == 0 {
		_, _ = w.Write([]byte("[]\n"))
		return
	}
	_, _ = w.Write([]byte{'['})
	for i, seg := range segs {
		b := seg.b
		if i == 0 {
			b = b[1:]
		}
		_, _ = w.Write(b)
	}
	_, _ = w.Write([]byte("]\n"))
}

// listContentType is the Content-Type of list answers.
const listContentType = "application/json; charset=utf-8"

// writeList writes the JSON array of the encoded items raws.
func writeList(w http.ResponseWriter, raws [][]byte) {
	lw := startList(w)
	lw.items(raws)
	lw.end()
}

// listWriter writes a JSON array of encoded items as they come.
type listWriter struct {
	bw *bufio.Writer
	n  int
}

// startList sends the status line and the array's opening bracket.
func startList(w http.ResponseWriter) *listWriter {
	w.Header().Set("Content-Type", listContentType)
	w.WriteHeader(http.StatusOK)
	lw := &listWriter{bw: bufio.NewWriterSize(w, 64<<10)}
	_ = lw.bw.WriteByte('[')
	return lw
}

// items writes the next items, and what is buffered.
func (lw *listWriter) items(raws [][]byte) {
	for _, raw := range raws {
		if lw.n > 0 {
			_ = lw.bw.WriteByte(',')
		}
		lw.n++
		_, _ = lw.bw.Write(raw)
	}
	_ = lw.bw.Flush()
}

// end closes the array.
func (lw *listWriter) end() {
	_, _ = lw.bw.WriteString("]\n")
	_ = lw.bw.Flush()
}

// listItems returns the encoded list item of each of ms, from the cache
// where its key has not changed.
func (h *Handlers) listItems(ctx context.Context, ms []*monv1.Monitor, x *monitorRefs, defaults string) ([][]byte, error) {
	// Monitors without references (most) are matched against the cache in
	// one pass under its lock; the others, and those whose item changed,
	// get their full key.
	raws := h.items.lookupPlain(ms, defaults)
	var rest []int
	for k := range ms {
		if raws[k] == nil {
			rest = append(rest, k)
		}
	}
	keys := make([]listKey, len(rest))
	for i, k := range rest {
		keys[i] = h.listKeyOf(ctx, ms[k], x, defaults)
	}
	found := h.items.lookup(keys)
	var fresh []int
	for i, k := range rest {
		raw := found[i]
		if raw == nil {
			var err error
			if raw, err = h.encodeMonitor(ctx, ms[k], x); err != nil {
				return nil, err
			}
			found[i] = raw
			fresh = append(fresh, i)
		}
		raws[k] = raw
	}
	h.items.store(keys, found, fresh)
	return raws, nil
}

// fingerprintSeed seeds the hashes of list keys for this process.
var fingerprintSeed = maphash.MakeSeed()

// fingerprint sums a hash of each monitor's list key (uid,
// resourceVersion, group and escalation policy uids): the same set of
// items gives the same sum in whatever order the cache returns them, and
// any changed, added or removed item changes it (but for a 64-bit
// collision). Objects without a uid or resourceVersion (never stored by an
// API server) make the answer uncacheable.
func (h *Handlers) fingerprint(ctx context.Context, ms []*monv1.Monitor, x *monitorRefs) (uint64, bool) {
	var mh maphash.Hash
	mh.SetSeed(fingerprintSeed)
	var sum uint64
	for _, m := range ms {
		if m.UID == "" || m.ResourceVersion == "" {
			return 0, false
		}
		mh.Reset()
		_, _ = mh.WriteString(string(m.UID))
		_ = mh.WriteByte(0)
		_, _ = mh.WriteString(m.ResourceVersion)
		if m.Spec.GroupRef != nil || m.Spec.EscalationPolicyRef != nil {
			_ = mh.WriteByte(0)
			_, _ = mh.WriteString(refKey(ctx, x, x.groups, &monv1.MonitorGroup{}, m.Spec.GroupRef))
			_ = mh.WriteByte(0)
			_, _ = mh.WriteString(refKey(ctx, x, x.policies, &monv1.EscalationPolicy{}, m.Spec.EscalationPolicyRef))
		}
		sum += mh.Sum64()
	}
	return sum, true
}

// MonitorLister lists a namespace's Monitors without copying them. The
// objects are shared with the informer and must not be modified.
type MonitorLister interface {
	ListMonitors(ctx context.Context, namespace string) ([]*monv1.Monitor, error)
	// EachMonitor calls fn with every Monitor of every namespace, shared
	// with the informer: fn must not modify or keep it. A pass over
	// 100,000 copies no Monitor (a List would copy each one).
	EachMonitor(fn func(*monv1.Monitor))
}

// sharedMonitors returns the Monitors of ns not being deleted, read-only,
// newest first when sorted is set. Through Options.Monitors nothing is
// copied; the fallback List copies each object into the list once.
func (h *Handlers) sharedMonitors(ctx context.Context, ns string, sorted bool) ([]*monv1.Monitor, error) {
	var ms []*monv1.Monitor
	if h.monitors != nil {
		done := h.d.Overlay.Reading()
		all, err := h.monitors.ListMonitors(ctx, ns)
		if err != nil {
			done()
			return nil, err
		}
		all = writethrough.LayShared(h.d.Overlay, all, ns)
		done()
		ms = make([]*monv1.Monitor, 0, len(all))
		for _, m := range all {
			if m.DeletionTimestamp == nil {
				ms = append(ms, m)
			}
		}
	} else {
		var list monv1.MonitorList
		if err := h.d.List(ctx, &list, ns, client.UnsafeDisableDeepCopy); err != nil {
			return nil, err
		}
		ms = make([]*monv1.Monitor, 0, len(list.Items))
		for i := range list.Items {
			if list.Items[i].DeletionTimestamp == nil {
				ms = append(ms, &list.Items[i])
			}
		}
	}
	if sorted {
		slices.SortFunc(ms, core.NewestFirst)
	}
	return ms, nil
}

// encodeMonitor is the list item of m: its monitor object as JSON.
func (h *Handlers) encodeMonitor(ctx context.Context, m *monv1.Monitor, x *monitorRefs) ([]byte, error) {
	o, err := h.monitorObject(ctx, m, x, false)
	if err != nil {
		return nil, err
	}
	// Marshal escapes HTML like the encoder of writeJSON does.
	return json.Marshal(o)
}

// listKey is everything a list item is built from: the monitor's
// resourceVersion (spec and status), the uids of the group and escalation
// policy it names (a reference can resolve later, or to a re-created
// object) and the plan's default regions. The same key means the same
// bytes.
type listKey struct {
	uid             types.UID
	resourceVersion string
	group, policy   string
	defaultRegions  string
}

func (h *Handlers) listKeyOf(ctx context.Context, m *monv1.Monitor, x *monitorRefs, defaults string) listKey {
	k := listKey{uid: m.UID, resourceVersion: m.ResourceVersion, defaultRegions: defaults}
	k.group = refKey(ctx, x, x.groups, &monv1.MonitorGroup{}, m.Spec.GroupRef)
	k.policy = refKey(ctx, x, x.policies, &monv1.EscalationPolicy{}, m.Spec.EscalationPolicyRef)
	return k
}

// refKey is the uid ref resolves to, "" when it does not. The index is
// read directly so the common case allocates nothing.
func refKey(ctx context.Context, x *monitorRefs, idx *core.ObjectUIDs, obj client.Object, ref *monv1.LocalObjectReference) string {
	switch {
	case ref == nil:
		return ""
	case idx != nil:
		if u, ok := idx.ByName[ref.Name]; ok {
			return u
		}
	}
	if u := x.refUID(ctx, idx, obj, ref); u != nil {
		return *u
	}
	return ""
}

// maxListEntries bounds listCache; past it the cache starts over (deleted
// monitors' entries go with it).
const maxListEntries = 200_000

// listCache keeps the encoded list item of each monitor by uid with the key
// it was built from, and the items of the last answer of each workspace and
// tag. Lookups and stores take the lock once per request.
type listCache struct {
	mu      sync.Mutex
	entries map[types.UID]listEntry
	answers answerSet[answerKey]
	latest  map[[2]string]*sortedAnswer
	// latestBytes is the size of latest's items.
	latestBytes int
	singles     map[types.UID]singleEntry
}

// sortedAnswer is the last list answer of a workspace and tag built at an
// informer version, with the monitors of its items in their order; it is
// never modified (advance builds a new one).
type sortedAnswer struct {
	key versionKey
	ms  []*monv1.Monitor
	// raws are the items, slices of segs: an answer holds its bytes once,
	// laid out as they are written.
	raws [][]byte
	segs []listSegment
}

// listSegment is a run of consecutive items of a list answer, each after
// a comma (",a,b,c"): the answer is "[", the segments without the first
// comma, and "]\n". An answer of 10,000 monitors (8 MB) is about 16
// segments, written in one call each as a bare handler writes a body it
// has, and a changed monitor copies the segment it is in, not the answer.
type listSegment struct {
	b []byte
	n int
}

// segmentBytes is the size a segment is cut at (a variable for tests).
var segmentBytes = 512 << 10

// segmentBuilder lays out the items of an answer in segments: items added
// are copied into new segments, runs kept stay in the segment they are in.
// A run of added items shorter than half a segment takes in the segment
// kept after it (or at the end, before it), so that changes do not leave
// a trail of small segments.
type segmentBuilder struct {
	ms   []*monv1.Monitor
	raws [][]byte
	segs []listSegment
	// raws[pending:] were added and go to new segments, pendingBytes long
	// with their commas.
	pending, pendingBytes int
}

func newSegmentBuilder(n int) *segmentBuilder {
	return &segmentBuilder{ms: make([]*monv1.Monitor, 0, n), raws: make([][]byte, 0, n)}
}

// laidOut returns the answer of key k with the items raws of ms (sorted),
// all in new segments; it takes over raws.
func laidOut(k versionKey, ms []*monv1.Monitor, raws [][]byte) *sortedAnswer {
	b := &segmentBuilder{ms: ms, raws: raws}
	for _, raw := range raws {
		b.pendingBytes += len(raw) + 1
	}
	return b.answer(k)
}

// add adds an item that goes to a new segment.
func (b *segmentBuilder) add(m *monv1.Monitor, raw []byte) {
	b.ms, b.raws = append(b.ms, m), append(b.raws, raw)
	b.pendingBytes += len(raw) + 1
}

// shortRun reports whether the items added since the last segment kept
// are fewer bytes than half a segment (but some).
func (b *segmentBuilder) shortRun() bool {
	return b.pending < len(b.raws) && b.pendingBytes < segmentBytes/2
}

// keep adds the items of segment seg, which stays as it is.
func (b *segmentBuilder) keep(ms []*monv1.Monitor, raws [][]byte, seg listSegment) {
	b.flush()
	b.ms, b.raws = append(b.ms, ms...), append(b.raws, raws...)
	b.segs = append(b.segs, seg)
	b.pending = len(b.raws)
}

// answer ends the layout: the answer of key k.
func (b *segmentBuilder) answer(k versionKey) *sortedAnswer {
	if b.shortRun() && len(b.segs) > 0 {
		last := b.segs[len(b.segs)-1]
		b.segs = b.segs[:len(b.segs)-1]
		b.pending -= last.n
		b.pendingBytes += len(last.b)
	}
	b.flush()
	return &sortedAnswer{key: k, ms: b.ms, raws: b.raws, segs: b.segs}
}

// flush copies the items added since the last segment kept into new
// segments of about the same size, at most segmentBytes each but for
// an item larger than that, and points their raws at their bytes there.
func (b *segmentBuilder) flush() {
	to := len(b.raws)
	if b.pending == to {
		return
	}
	cuts := (b.pendingBytes + segmentBytes - 1) / segmentBytes
	per := b.pendingBytes/cuts + 1
	for b.pending < to {
		size, end := 0, b.pending
		for end < to && (end == b.pending || (size < per && size+len(b.raws[end])+1 <= segmentBytes)) {
			size += len(b.raws[end]) + 1
			end++
		}
		seg := make([]byte, 0, size)
		for i := b.pending; i < end; i++ {
			seg = append(seg, ',')
			at := len(seg)
			seg = append(seg, b.raws[i]...)
			b.raws[i] = seg[at:len(seg):len(seg)]
		}
		b.segs = append(b.segs, listSegment{b: seg, n: end - b.pending})
		b.pending = end
	}
	b.pendingBytes = 0
}

// versionKey names a list answer by the informer's version of the
// workspace's monitors, with the tag filter, the plan's default regions
// and the fingerprint of the groups and escalation policies items refer
// to; writes is this replica's count of writes in the workspace
// (writethrough.Overlay.Version), which advance does not bridge: an answer
// is only advanced along the informer's journal, which may not have the
// write yet.
type versionKey struct {
	namespace, tag, defaultRegions string
	version, refs, writes          uint64
}

func (k versionKey) slot() [2]string { return [2]string{k.namespace, k.tag} }

// fingerprint sums a hash of every group and escalation policy name with
// its uid: what the items' group_id and escalation_policy_id resolve from.
func (x *monitorRefs) fingerprint() uint64 {
	var h maphash.Hash
	h.SetSeed(fingerprintSeed)
	var sum uint64
	for kind, idx := range []*core.ObjectUIDs{x.groups, x.policies} {
		if idx == nil {
			continue
		}
		for name, uid := range idx.ByName {
			h.Reset()
			_ = h.WriteByte(byte(kind))
			_, _ = h.WriteString(name)
			_ = h.WriteByte(0)
			_, _ = h.WriteString(uid)
			sum += h.Sum64()
		}
	}
	return sum
}

// answerOf is what the answer of GET /monitors/:id is built from: the
// monitor's list key and its 24 h and 30 d uptime (see percentKey).
type answerOf struct {
	item     listKey
	day, mon uint64
}

type singleEntry struct {
	key  answerOf
	body []byte
}

// maxSingles bounds the answers of GET /monitors/:id kept; past it they
// start over.
const maxSingles = 20_000

// single returns the answer of GET /monitors/:id built for k, nil when
// there is none.
func (c *listCache) single(k answerOf) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.singles[k.item.uid]; ok && e.key == k {
		return e.body
	}
	return nil
}

// storeSingle remembers body as the answer of GET /monitors/:id for k.
func (c *listCache) storeSingle(k answerOf, body []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.singles == nil || len(c.singles) >= maxSingles {
		c.singles = map[types.UID]singleEntry{}
	}
	c.singles[k.item.uid] = singleEntry{key: k, body: body}
}

type listEntry struct {
	key listKey
	raw []byte
}

// answerKey is what a list answer is built from: the workspace, the tag
// filter, the plan's default regions and the fingerprint and number of its
// items' keys.
type answerKey struct {
	namespace, tag, defaultRegions string
	fingerprint                    uint64
	n                              int
}

func (k answerKey) slot() [2]string { return [2]string{k.namespace, k.tag} }

// answerSet keeps the last list answer of each workspace and tag by what
// it was built from (K); a new answer of the same workspace and tag
// replaces the old one. The listCache's lock guards it.
type answerSet[K interface {
	comparable
	slot() [2]string
}] map[K][][]byte

// get returns the items of the answer built for k, nil when there is none.
func (a answerSet[K]) get(k K) [][]byte { return a[k] }

// put remembers raws as the answer of k, replacing the answer of the same
// workspace and tag built from something else.
func (a *answerSet[K]) put(k K, raws [][]byte) {
	if *a == nil || len(*a) >= maxListAnswers {
		*a = answerSet[K]{}
	}
	for old := range *a {
		if old.slot() == k.slot() {
			delete(*a, old)
		}
	}
	(*a)[k] = raws
}

// answer and latestAnswer look up, storeAnswer and storeLatest remember,
// list answers under the lock.
func (c *listCache) answer(k answerKey) [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.answers.get(k)
}

func (c *listCache) storeAnswer(k answerKey, raws [][]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.answers.put(k, raws)
}

func (c *listCache) latestAnswer(slot [2]string) *sortedAnswer {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.latest[slot]
}

// storeLatest remembers a as the answer of its workspace and tag unless
// one of a later version is already there.
func (c *listCache) storeLatest(a *sortedAnswer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.latest[a.key.slot()]
	if old != nil && old.key.version > a.key.version {
		return
	}
	if old != nil {
		c.latestBytes -= old.size()
	}
	if c.latest == nil || len(c.latest) >= maxListAnswers || c.latestBytes+a.size() > maxLatestBytes {
		c.latest, c.latestBytes = map[[2]string]*sortedAnswer{}, 0
	}
	c.latest[a.key.slot()] = a
	c.latestBytes += a.size()
}

// maxListAnswers bounds the answers kept; past it the answers start over.
// An answer by fingerprint holds the items' slices, not copies of them;
// one by version holds its segments (maxLatestBytes).
const maxListAnswers = 256

// size is the bytes of a's items.
func (a *sortedAnswer) size() int {
	n := 0
	for _, seg := range a.segs {
		n += len(seg.b)
	}
	return n
}

// maxLatestBytes bounds the items of the answers kept by version (each
// holds its items' bytes, about 800 per monitor); past it they start over.
// One workspace of 100,000 monitors is about 80 MB.
const maxLatestBytes = 256 << 20

// lookupPlain returns the cached item of each monitor that refers to no
// group or escalation policy and whose cached key is its key (nil for the
// others), without building the keys.
func (c *listCache) lookupPlain(ms []*monv1.Monitor, defaults string) [][]byte {
	out := make([][]byte, len(ms))
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, m := range ms {
		if m.Spec.GroupRef != nil || m.Spec.EscalationPolicyRef != nil {
			continue
		}
		if e, ok := c.entries[m.UID]; ok && e.key == (listKey{uid: m.UID, resourceVersion: m.ResourceVersion, defaultRegions: defaults}) {
			out[i] = e.raw
		}
	}
	return out
}

// lookup returns the cached item of each key, nil where there is none or
// it is stale.
func (c *listCache) lookup(keys []listKey) [][]byte {
	out := make([][]byte, len(keys))
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, k := range keys {
		if e, ok := c.entries[k.uid]; ok && e.key == k {
			out[i] = e.raw
		}
	}
	return out
}

// store remembers raws[i] for keys[i] of each i in fresh. Objects without a
// uid or resourceVersion (never stored by an API server) are not cached.
func (c *listCache) store(keys []listKey, raws [][]byte, fresh []int) {
	if len(fresh) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries)+len(fresh) > maxListEntries {
		c.entries = make(map[types.UID]listEntry, len(fresh))
	}
	for _, i := range fresh {
		if k := keys[i]; k.uid != "" && k.resourceVersion != "" {
			c.entries[k.uid] = listEntry{key: k, raw: raws[i]}
		}
	}
}
