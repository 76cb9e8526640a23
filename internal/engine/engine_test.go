package engine_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/credentials"
	"github.com/uptime-operator/uptime-operator/internal/engine"
	"github.com/uptime-operator/uptime-operator/internal/probeserver"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

var _ = Describe("Incidents by region quorum", Ordered, func() {
	var m *monv1.Monitor

	BeforeAll(func() {
		target.setDown()
		m = newMonitor("quorum", nil)
	})

	It("reports up and fills status from the real agents", func() {
		Eventually(func(g Gomega) {
			got := get(m)
			g.Expect(got.Status.CurrentStatus).To(Equal(monv1.StatusUp))
			g.Expect(got.Status.Regions).To(HaveLen(3))
			g.Expect(got.Status.LastCheckedAt).NotTo(BeNil())
			g.Expect(got.Status.Uptime24h).To(Equal("100.00%"))
		}, 30*time.Second, 200*time.Millisecond).Should(Succeed())
	})

	It("opens no incident when a single region fails", func() {
		target.setDown("r1")
		Eventually(func(g Gomega) {
			g.Expect(get(m).Status.Regions).To(ContainElement(HaveField("Status", "down")))
		}, 20*time.Second, 200*time.Millisecond).Should(Succeed())
		Consistently(func() []store.Incident { return incidents(m) }, 2*time.Second, 200*time.Millisecond).Should(BeEmpty())
		Expect(get(m).Status.CurrentStatus).NotTo(Equal(monv1.StatusDown))
	})

	It("opens one incident confirmed by two of three regions", func() {
		target.setDown("r1", "r2")
		Eventually(func(g Gomega) {
			incs := incidents(m)
			g.Expect(incs).To(HaveLen(1))
			g.Expect(incs[0].ResolvedAt).To(BeNil())
			g.Expect(incs[0].Confirmations).To(Equal(2))
			g.Expect(incs[0].ConfirmingRegions).To(ConsistOf("r1", "r2"))
			g.Expect(incs[0].RegionsTotal).To(Equal(3))
		}, 20*time.Second, 200*time.Millisecond).Should(Succeed())
		Eventually(func(g Gomega) {
			got := get(m)
			g.Expect(got.Status.CurrentStatus).To(Equal(monv1.StatusDown))
			g.Expect(got.Status.OpenIncident).NotTo(BeNil())
			g.Expect(got.Status.OpenIncident.ConfirmingRegions).To(ConsistOf("r1", "r2"))
		}, 10*time.Second, 200*time.Millisecond).Should(Succeed())
		// The gauge counts this and other specs' open incidents of the namespace.
		Eventually(func() bool { return openIncidentsGauge(m.Namespace) == openIncidentsIn(m.Namespace) }, 10*time.Second).Should(BeTrue())
		// More failing checks keep the same incident open.
		Consistently(func() []store.Incident { return incidents(m) }, 2*time.Second, 200*time.Millisecond).Should(HaveLen(1))
	})

	It("explains the incident with votes and the quorum rule", func() {
		x, err := env.Manager.Engine.ExplainMonitor(ctx, get(m))
		Expect(err).NotTo(HaveOccurred())
		Expect(x.State).To(Equal("incident_open"))
		Expect(x.Failing).To(BeNumerically(">=", 2))
		Expect(x.QuorumRule).To(ContainSubstring("at least 2 failing regions"))
		Expect(x.FailureClass).To(Equal("response"))
		Expect(x.Fault).To(Equal(engine.FaultYours))
	})

	It("resolves the incident with a duration when the regions recover", func() {
		target.setDown()
		Eventually(func(g Gomega) {
			incs := incidents(m)
			g.Expect(incs).To(HaveLen(1))
			g.Expect(incs[0].ResolvedAt).NotTo(BeNil())
			g.Expect(incs[0].ResolvedManually).To(BeFalse())
			g.Expect(incs[0].DurationSeconds(time.Now())).To(BeNumerically(">=", 0))
		}, 20*time.Second, 200*time.Millisecond).Should(Succeed())
		Eventually(func() monv1.MonitorStatusValue { return get(m).Status.CurrentStatus }, 10*time.Second, 200*time.Millisecond).
			Should(Equal(monv1.StatusUp))
		Eventually(func() bool { return openIncidentsGauge(m.Namespace) == openIncidentsIn(m.Namespace) }, 10*time.Second).Should(BeTrue())
	})
})

var _ = Describe("Maintenance", func() {
	It("suppresses alerts of incidents opened during a window and shows maintenance", func() {
		m := newMonitor("maint", nil)
		w := &monv1.MaintenanceWindow{
			ObjectMeta: metav1.ObjectMeta{Name: "now", Namespace: "default"},
			Spec: monv1.MaintenanceWindowSpec{
				Title: "Upgrade", Scope: "monitors", Monitors: []monv1.LocalObjectReference{{Name: m.Name}},
				StartsAt: metav1.NewTime(time.Now().Add(-time.Minute)), EndsAt: metav1.NewTime(time.Now().Add(time.Hour)),
			},
		}
		Expect(k8s.Create(ctx, w)).To(Succeed())
		Eventually(func() monv1.MaintenanceState {
			var got monv1.MaintenanceWindow
			_ = k8s.Get(ctx, client.ObjectKeyFromObject(w), &got)
			return got.Status.State
		}, 10*time.Second, 200*time.Millisecond).Should(Equal(monv1.MaintenanceOngoing))
		Eventually(func() monv1.MonitorStatusValue { return get(m).Status.CurrentStatus }, 20*time.Second, 200*time.Millisecond).
			Should(Equal(monv1.StatusMaintenance))

		target.setDown("r1", "r2", "r3")
		defer target.setDown()
		Eventually(func(g Gomega) {
			incs := incidents(m)
			g.Expect(incs).To(HaveLen(1))
			g.Expect(incs[0].AlertSuppressed).To(BeTrue())
			g.Expect(incs[0].SuppressionReason).To(Equal("maintenance"))
		}, 20*time.Second, 200*time.Millisecond).Should(Succeed())
	})
})

var _ = Describe("Cron heartbeats", func() {
	It("gets a token, records pings, opens an incident on a reported failure and resolves on success", func() {
		m := &monv1.Monitor{
			ObjectMeta: metav1.ObjectMeta{Name: "backup", Namespace: "default"},
			Spec:       monv1.MonitorSpec{Type: monv1.MonitorCron, Cron: &monv1.CronConfig{CronExpression: "@daily", GraceSeconds: 60}},
		}
		Expect(k8s.Create(ctx, m)).To(Succeed())
		var token string
		Eventually(func(g Gomega) {
			token = heartbeatSecretToken(g, get(m))
			g.Expect(token).To(HaveLen(32))
		}, 10*time.Second, 100*time.Millisecond).Should(Succeed())
		Expect(get(m).Annotations).NotTo(HaveKey(monv1.HeartbeatTokenAnnotation), "the token is not in the object")
		Eventually(func() error {
			return env.Manager.Engine.HeartbeatByToken(ctx, token, engine.Ping{OK: true})
		}, 10*time.Second, 100*time.Millisecond).Should(Succeed())
		Expect(errors.Is(env.Manager.Engine.HeartbeatByToken(ctx, "nope", engine.Ping{OK: true}), engine.ErrUnknownToken)).To(BeTrue())

		Expect(env.Manager.Engine.HeartbeatByToken(ctx, token, engine.Ping{OK: false})).To(Succeed())
		Eventually(func() []store.Incident { return incidents(m) }, 5*time.Second, 100*time.Millisecond).Should(HaveLen(1))
		Expect(env.Manager.Engine.HeartbeatByToken(ctx, token, engine.Ping{OK: true})).To(Succeed())
		Eventually(func() *time.Time { return incidents(m)[0].ResolvedAt }, 5*time.Second, 100*time.Millisecond).ShouldNot(BeNil())
		pings, err := env.Manager.Store.ListHeartbeats(ctx, string(get(m).UID), 10)
		Expect(err).NotTo(HaveOccurred())
		Expect(pings).To(HaveLen(3))
	})

	It("moves a token kept in the object to the credentials Secret, and its pings keep working", func() {
		// A cron Monitor as an earlier version left it: the token in an
		// annotation, which Kubernetes' view role reads.
		token := engine.NewHeartbeatToken()
		m := &monv1.Monitor{
			ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "default",
				Annotations: map[string]string{monv1.HeartbeatTokenAnnotation: token}},
			Spec: monv1.MonitorSpec{Type: monv1.MonitorCron, Cron: &monv1.CronConfig{CronExpression: "@daily", GraceSeconds: 60}},
		}
		Expect(k8s.Create(ctx, m)).To(Succeed())
		Eventually(func(g Gomega) {
			got := get(m)
			g.Expect(got.Annotations).NotTo(HaveKey(monv1.HeartbeatTokenAnnotation))
			g.Expect(got.Annotations).To(HaveKeyWithValue(monv1.HeartbeatTokenHashAnnotation, monv1.HashHeartbeatToken(token)))
			g.Expect(heartbeatSecretToken(g, got)).To(Equal(token), "the same token: the job's URL keeps working")
		}, 10*time.Second, 100*time.Millisecond).Should(Succeed())
		raw, err := json.Marshal(get(m))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(raw)).NotTo(ContainSubstring(token), "nothing in the Monitor holds the token")
		Eventually(func() error {
			return env.Manager.Engine.HeartbeatByToken(ctx, token, engine.Ping{OK: true})
		}, 10*time.Second, 100*time.Millisecond).Should(Succeed())
		pings, err := env.Manager.Store.ListHeartbeats(ctx, string(get(m).UID), 10)
		Expect(err).NotTo(HaveOccurred())
		Expect(pings).To(HaveLen(1))
	})

	It("opens an incident when a run is missed", func() {
		m := &monv1.Monitor{
			ObjectMeta: metav1.ObjectMeta{Name: "every-minute", Namespace: "default"},
			Spec:       monv1.MonitorSpec{Type: monv1.MonitorCron, Cron: &monv1.CronConfig{CronExpression: "* * * * *"}},
		}
		Expect(k8s.Create(ctx, m)).To(Succeed())
		created := get(m)
		due, err := engine.NextExpected(created, nil)
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			incs := incidents(created)
			g.Expect(incs).To(HaveLen(1))
			g.Expect(incs[0].Cause).To(Equal("missed_heartbeat"))
		}, time.Until(due)+20*time.Second, 500*time.Millisecond).Should(Succeed())
	})
})

var _ = Describe("Manual incidents", func() {
	It("opens one, refuses a second, and resolves it once", func() {
		m := newMonitor("manual", func(m *monv1.Monitor) { m.Spec.Paused = true })
		m = get(m)
		inc, err := env.Manager.Engine.OpenManualIncident(ctx, m)
		Expect(err).NotTo(HaveOccurred())
		_, err = env.Manager.Engine.OpenManualIncident(ctx, m)
		Expect(errors.Is(err, store.ErrIncidentOpen)).To(BeTrue())
		resolved, err := env.Manager.Engine.ResolveIncident(ctx, inc.ID, "fixed", "ops")
		Expect(err).NotTo(HaveOccurred())
		Expect(resolved.ResolvedManually).To(BeTrue())
		_, err = env.Manager.Engine.ResolveIncident(ctx, inc.ID, "", "ops")
		Expect(errors.Is(err, store.ErrIncidentResolved)).To(BeTrue())
	})

	It("stays open while the monitor's checks pass, until resolved by hand", func() {
		// A person declared it, often for what no check sees: the next
		// passing check must not end it.
		m := newMonitor("declared", nil)
		Eventually(func() monv1.MonitorStatusValue { return get(m).Status.CurrentStatus }, 30*time.Second, 200*time.Millisecond).Should(Equal(monv1.StatusUp))
		inc, err := env.Manager.Engine.OpenManualIncident(ctx, get(m))
		Expect(err).NotTo(HaveOccurred())
		opened := time.Now()
		Eventually(func() bool {
			last := get(m).Status.LastCheckedAt
			return last != nil && last.After(opened)
		}, 40*time.Second, 200*time.Millisecond).Should(BeTrue(), "a check after the incident was opened")
		Expect(get(m).Status.Regions).To(HaveEach(HaveField("Status", "up")), "every region passes")
		Consistently(func() *time.Time { return incidents(m)[0].ResolvedAt }, 2*time.Second, 200*time.Millisecond).Should(BeNil())
		resolved, err := env.Manager.Engine.ResolveIncident(ctx, inc.ID, "fixed", "ops")
		Expect(err).NotTo(HaveOccurred())
		Expect(resolved.ResolvedManually).To(BeTrue())
	})
})

var _ = Describe("Dependencies", func() {
	It("suppresses a child's alerts while its parent has an open incident", func() {
		parentSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusInternalServerError) }))
		defer parentSrv.Close()
		parent := &monv1.Monitor{
			ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "default"},
			Spec:       monv1.MonitorSpec{URL: parentSrv.URL, IntervalSeconds: 15, Regions: regions, HTTP: &monv1.HTTPConfig{TimeoutMs: 2000}},
		}
		Expect(k8s.Create(ctx, parent)).To(Succeed())
		Eventually(func() []store.Incident { return incidents(parent) }, 20*time.Second, 200*time.Millisecond).Should(HaveLen(1))

		child := &monv1.Monitor{
			ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "default"},
			Spec: monv1.MonitorSpec{URL: parentSrv.URL + "/app", IntervalSeconds: 15, Regions: regions,
				DependsOn: []monv1.LocalObjectReference{{Name: "db"}}, HTTP: &monv1.HTTPConfig{TimeoutMs: 2000}},
		}
		Expect(k8s.Create(ctx, child)).To(Succeed())
		Eventually(func(g Gomega) {
			incs := incidents(child)
			g.Expect(incs).To(HaveLen(1))
			g.Expect(incs[0].AlertSuppressed).To(BeTrue())
			g.Expect(incs[0].SuppressionReason).To(Equal("parent dependency down: db"))
		}, 20*time.Second, 200*time.Millisecond).Should(Succeed())
		Expect(incidents(parent)[0].AlertSuppressed).To(BeFalse())
	})
})

var _ = Describe("Ad-hoc checks", func() {
	It("run from the chosen region's agent, saved or not", func() {
		target.setDown("r2")
		defer target.setDown()
		m := get(newMonitor("adhoc", nil))
		// Each run below goes to its region's agent only while one is online
		// (else the manager runs it); wait for all three.
		for _, r := range []string{"r1", "r2", "r3"} {
			// A minute: under a loaded machine (make test runs every
			// package at once) an agent's first long poll can take a while.
			Eventually(func() int { n, _ := env.Manager.Probes.AgentsOnline(r, time.Minute); return n }, time.Minute).Should(BeNumerically(">", 0), r)
		}
		res, err := env.Manager.Engine.RunCheck(ctx, m, "r2", true)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Region).To(Equal("r2"))
		Expect(string(res.Status)).To(Equal("down"))
		Eventually(func() bool {
			items, _, _ := env.Manager.Store.ListChecks(ctx, store.ChecksQuery{MonitorID: string(m.UID), Region: "r2", Limit: 500})
			for _, c := range items {
				if c.ID == res.ID {
					return true
				}
			}
			return false
		}, 5*time.Second, 100*time.Millisecond).Should(BeTrue(), "a saved run-check is recorded like a scheduled check")

		res, err = env.Manager.Engine.RunCheck(ctx, m, "r1", false)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Region).To(Equal("r1"))
		Expect(string(res.Status)).To(Equal("up"))

		unsaved := &monv1.Monitor{Spec: monv1.MonitorSpec{Name: "draft", Type: monv1.MonitorHTTP, URL: target.URL + "/draft", Regions: []string{"r3"}}}
		res, err = env.Manager.Engine.RunCheck(ctx, unsaved, "r3", false)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Region).To(Equal("r3"))
		Expect(string(res.Status)).To(Equal("up"))
	})
})

var _ = Describe("Run-checks of a saved monitor", func() {
	It("run only from the monitor's regions, also right after it was created", func() {
		for _, r := range regions {
			// A minute: under a loaded machine (make test runs every
			// package at once) an agent's first long poll can take a while.
			Eventually(func() int { n, _ := env.Manager.Probes.AgentsOnline(r, time.Minute); return n }, time.Minute).Should(BeNumerically(">", 0), r)
		}
		// Without regions of its own the monitor runs in the plan's
		// default regions; its status does not name them yet when the
		// check is asked for at once (issue 29 row 5: it ran from the
		// manager and was recorded under "manager").
		for i := range 20 {
			m := &monv1.Monitor{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("fresh-%d", i), Namespace: "default"},
				Spec:       monv1.MonitorSpec{URL: target.URL + "/fresh", IntervalSeconds: 15, HTTP: &monv1.HTTPConfig{TimeoutMs: 2000}},
			}
			Expect(k8s.Create(ctx, m)).To(Succeed())
			res, err := env.Manager.Engine.RunCheck(ctx, m, "", true)
			Expect(err).NotTo(HaveOccurred())
			Expect(regions).To(ContainElement(res.Region), "iteration %d", i)
			latest, err := env.Manager.Store.LatestChecks(ctx, string(m.UID))
			Expect(err).NotTo(HaveOccurred())
			for _, c := range latest {
				Expect(regions).To(ContainElement(c.Region), "iteration %d: a check recorded under %s", i, c.Region)
			}
		}

		m := get(newMonitor("two-regions", func(m *monv1.Monitor) { m.Spec.Regions = []string{"r1", "r2"} }))
		_, err := env.Manager.Engine.RunCheck(ctx, m, "r3", true)
		var regionErr *engine.RegionError
		Expect(errors.As(err, &regionErr)).To(BeTrue(), "a region the monitor does not use is refused: %v", err)
		Expect(regionErr.Regions).To(Equal([]string{"r1", "r2"}))
	})

	It("is refused when no agent of the monitor's regions comes online in time", func() {
		// A region whose agent never calls.
		Expect(k8s.Create(ctx, &monv1.ProbeRegion{ObjectMeta: metav1.ObjectMeta{Name: "silent"},
			Spec: monv1.ProbeRegionSpec{Placement: monv1.ProbePlacement{
				Mode: monv1.PlacementRemote, TokenSecretRef: &monv1.SecretKeySelector{Name: "token-silent", Key: probeserver.RegionTokenKey},
			}}})).To(Succeed())
		m := get(newMonitor("silent-region", func(m *monv1.Monitor) { m.Spec.Regions = []string{"silent"} }))
		start := time.Now()
		_, err := env.Manager.Engine.RunCheck(ctx, m, "", true)
		var noAgent *engine.NoAgentError
		Expect(errors.As(err, &noAgent)).To(BeTrue(), "got %v", err)
		Expect(noAgent.Regions).To(Equal([]string{"silent"}))
		Expect(time.Since(start)).To(BeNumerically(">=", engine.RunCheckAgentWait), "it waits for an agent first")
		latest, err := env.Manager.Store.LatestChecks(ctx, string(m.UID))
		Expect(err).NotTo(HaveOccurred())
		Expect(latest).To(BeEmpty(), "nothing is recorded")
	})
})

// openIncidentsIn counts the monitors of ns whose status shows an open
// incident, read from the API server.
func openIncidentsIn(ns string) float64 {
	var list monv1.MonitorList
	Expect(k8s.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
	n := 0.0
	for _, m := range list.Items {
		if m.Status.OpenIncident != nil {
			n++
		}
	}
	return n
}

// openIncidentsGauge is uptime_operator_open_incidents of workspace ns as
// the manager's metrics endpoint would serve it; -1 when absent.
func openIncidentsGauge(ns string) float64 {
	families, err := ctrlmetrics.Registry.Gather()
	Expect(err).NotTo(HaveOccurred())
	for _, f := range families {
		if f.GetName() != "uptime_operator_open_incidents" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "workspace" && l.GetValue() == ns {
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	return -1
}

// heartbeatSecretToken is the heartbeat token m's credentials Secret
// keeps, checked to be m's own (owned by its UID) and to match the hash in
// m.
func heartbeatSecretToken(g Gomega, m *monv1.Monitor) string {
	var sec corev1.Secret
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: credentials.SecretName(m.Name)}, &sec)).To(Succeed())
	g.Expect(credentials.IsOwn(&sec, m)).To(BeTrue(), "the Secret is owned by the Monitor's UID")
	tok := credentials.HeartbeatToken(&sec, m)
	g.Expect(tok).NotTo(BeEmpty(), "the Secret's token matches the hash in the Monitor")
	return tok
}
