package engine_test

import (
	"hash/fnv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// The suite's agents run with IntervalUnit 20 ms, so a 900 s interval is an
// 18 s cycle whose slot is fixed by the monitor's id (see probes.Scheduler).
const resumeUnit = 20 * time.Millisecond

// nextScheduledSlot is the first scheduled run of monitor uid with
// intervalSeconds after now, as the agents' scheduler places it.
func nextScheduledSlot(uid string, intervalSeconds int, now time.Time) time.Time {
	interval := int64(intervalSeconds) * int64(resumeUnit)
	h := fnv.New64a()
	_, _ = h.Write([]byte(uid))
	phase := int64(h.Sum64() % uint64(interval))
	t := (now.UnixNano()-phase)/interval*interval + phase
	for t <= now.UnixNano() {
		t += interval
	}
	return time.Unix(0, t)
}

var _ = Describe("Resuming a monitor", func() {
	It("checks it right away from every region, not at its next slot (spec edit, as kubectl does)", func() {
		m := newMonitor("resume-now", func(m *monv1.Monitor) {
			m.Spec.IntervalSeconds = 900
			m.Spec.Paused = true
		})
		uid := string(m.UID)
		checks := func() []store.Check {
			items, _, err := env.Manager.Store.ListChecks(ctx, store.ChecksQuery{MonitorID: uid, Limit: 100})
			Expect(err).NotTo(HaveOccurred())
			return items
		}
		Consistently(checks, time.Second, 100*time.Millisecond).Should(BeEmpty(), "a paused monitor is not checked")

		// Resume only when the next scheduled slot is far enough off that a
		// check seen soon after cannot be the scheduled one.
		const window = 5 * time.Second
		for {
			now := time.Now()
			next := nextScheduledSlot(uid, 900, now)
			if next.Sub(now) > window+3*time.Second {
				break
			}
			time.Sleep(next.Sub(now) + 100*time.Millisecond)
		}
		resumedAt := time.Now()
		cur := get(m)
		patch := client.MergeFrom(cur.DeepCopy())
		cur.Spec.Paused = false
		Expect(k8s.Patch(ctx, cur, patch)).To(Succeed())

		Eventually(func() []string {
			var regions []string
			for _, c := range checks() {
				regions = append(regions, c.Region)
			}
			return regions
		}, window, 50*time.Millisecond).Should(ConsistOf(regions), "one check per region right after resuming")
		for _, c := range checks() {
			Expect(c.CheckedAt).To(BeTemporally("<", nextScheduledSlot(uid, 900, resumedAt)), "before the scheduled slot")
		}
	})
})
