package storetest

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/uptime-operator/uptime-operator/internal/store"
)

func testSiteHealth(t *testing.T, s store.Store) {
	c := ctx(t)
	ns := "ns-" + uuid.NewString()[:8]
	site, err := s.CreateHealthSite(c, store.HealthSite{Namespace: ns, Name: "Shop", URL: "https://shop.example.com/",
		MaxPages: 100, MaxDepth: 3, CheckExternalLinks: true, PerfAuditEnabled: true,
		PerfAuditURLs: []string{"https://shop.example.com/", "https://shop.example.com/cart"}, PerfAuditFormFactor: store.HealthFormDesktop,
		Schedule: store.HealthScheduleDaily, NotifyOnIssues: true, ScoreDropThresh: 10, IsActive: true, CreatedAt: base})
	must(t, err)
	other, err := s.CreateHealthSite(c, store.HealthSite{Namespace: "other-" + ns, Name: "Blog", URL: "https://blog.example.org/",
		MaxPages: 1, Schedule: store.HealthScheduleManual, ScoreDropThresh: 5, CreatedAt: base.Add(time.Second)})
	must(t, err)
	if _, err := s.CreateHealthSite(c, store.HealthSite{Name: "no namespace"}); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("site without namespace: got %v, want ErrInvalid", err)
	}

	got, err := s.GetHealthSite(c, site.ID)
	must(t, err)
	eq(t, "name", got.Name, "Shop")
	eq(t, "audit urls", len(got.PerfAuditURLs), 2)
	eq(t, "second audit url", got.PerfAuditURLs[1], "https://shop.example.com/cart")
	eq(t, "flags", got.CheckExternalLinks && got.PerfAuditEnabled && got.NotifyOnIssues && got.IsActive, true)
	eq(t, "form factor", got.PerfAuditFormFactor, store.HealthFormDesktop)
	eq(t, "created", got.CreatedAt.Equal(base), true)
	o, err := s.GetHealthSite(c, other.ID)
	must(t, err)
	eq(t, "empty audit urls", o.PerfAuditURLs != nil && len(o.PerfAuditURLs) == 0, true)
	eq(t, "inactive", o.IsActive, false)

	list, err := s.ListHealthSites(c, ns)
	must(t, err)
	eq(t, "sites of the namespace", len(list), 1)
	all, err := s.ListHealthSites(c, "")
	must(t, err)
	eq(t, "sites of every namespace", len(all) >= 2, true)

	got.Name, got.MaxPages, got.PerfAuditURLs, got.Schedule = "Shop 2", 7, nil, store.HealthScheduleWeekly
	upd, err := s.UpdateHealthSite(c, got)
	must(t, err)
	eq(t, "updated name", upd.Name, "Shop 2")
	eq(t, "updated pages", upd.MaxPages, 7)
	eq(t, "updated schedule", upd.Schedule, store.HealthScheduleWeekly)
	eq(t, "cleared audit urls", len(upd.PerfAuditURLs), 0)
	eq(t, "created kept", upd.CreatedAt.Equal(base), true)
	if _, err := s.UpdateHealthSite(c, store.HealthSite{ID: uuid.NewString()}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("update of a missing site: got %v, want ErrNotFound", err)
	}

	// Runs: start, finish with issues and an event, newest first.
	if _, err := s.StartHealthRun(c, store.HealthRun{SiteID: uuid.NewString(), Trigger: "manual"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("run of a missing site: got %v, want ErrNotFound", err)
	}
	var runs []store.HealthRun
	for i := range 3 {
		r, err := s.StartHealthRun(c, store.HealthRun{SiteID: site.ID, Trigger: "scheduled", StartedAt: base.Add(time.Duration(i) * time.Hour)})
		must(t, err)
		eq(t, "running", r.Status, store.HealthRunRunning)
		eq(t, "namespace from the site", r.Namespace, ns)
		runs = append(runs, r)
	}
	score := 87
	summary := json.RawMessage(`{"pages_crawled":12}`)
	fin := base.Add(10 * time.Minute)
	issues := []store.HealthIssue{
		{Kind: "broken_link", URL: "https://shop.example.com/gone", SourceURL: "https://shop.example.com/", Detail: "HTTP 404"},
		{Kind: "mixed_content", URL: "http://cdn.example.com/a.js", SourceURL: "https://shop.example.com/", Detail: "script"},
	}
	ev := store.OutboxEvent{Namespace: ns, Kind: "site_health.issues", Payload: []byte(`{"run_id":"x"}`), Channels: []string{"ch-" + ns}}
	done, err := s.FinishHealthRun(c, store.HealthRun{ID: runs[0].ID, Status: store.HealthRunCompleted, FinishedAt: &fin, Score: &score, Summary: summary}, issues, ev)
	must(t, err)
	eq(t, "finished status", done.Status, store.HealthRunCompleted)
	if _, err := s.FinishHealthRun(c, store.HealthRun{ID: runs[0].ID, Status: store.HealthRunFailed}, nil); !errors.Is(err, store.ErrHealthRunFinished) {
		t.Fatalf("finish twice: got %v, want ErrHealthRunFinished", err)
	}
	if _, err := s.FinishHealthRun(c, store.HealthRun{ID: uuid.NewString(), Status: store.HealthRunFailed}, nil); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("finish a missing run: got %v, want ErrNotFound", err)
	}
	if _, err := s.FinishHealthRun(c, store.HealthRun{ID: runs[1].ID}, nil); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("finish without a status: got %v, want ErrInvalid", err)
	}
	r, err := s.GetHealthRun(c, runs[0].ID)
	must(t, err)
	eq(t, "stored score", r.Score != nil && *r.Score == 87, true)
	eq(t, "finished at", r.FinishedAt != nil && r.FinishedAt.Equal(fin), true)
	var sum map[string]int
	must(t, json.Unmarshal(r.Summary, &sum))
	eq(t, "summary", sum["pages_crawled"], 12)
	stored, err := s.ListHealthIssues(c, runs[0].ID)
	must(t, err)
	eq(t, "issues", len(stored), 2)
	eq(t, "issue order", stored[1].Kind, "mixed_content")
	eq(t, "issue source", stored[0].SourceURL, "https://shop.example.com/")
	dl, err := s.ListDeliveries(c, store.DeliveryQuery{ChannelID: "ch-" + ns, Limit: 10})
	must(t, err)
	eq(t, "event enqueued with the run", len(dl), 1)

	_, err = s.FinishHealthRun(c, store.HealthRun{ID: runs[1].ID, Status: store.HealthRunFailed, Error: "start page: HTTP 500"}, nil)
	must(t, err)
	r, err = s.GetHealthRun(c, runs[1].ID)
	must(t, err)
	eq(t, "failed run error", r.Error, "start page: HTTP 500")
	eq(t, "failed run has no score", r.Score == nil, true)
	eq(t, "failed run has no summary", len(r.Summary), 0)

	listed, err := s.ListHealthRuns(c, site.ID, 0)
	must(t, err)
	eq(t, "runs", len(listed), 3)
	eq(t, "newest first", listed[0].ID, runs[2].ID)
	one, err := s.ListHealthRuns(c, site.ID, 1)
	must(t, err)
	eq(t, "limit", len(one), 1)

	// Pruning keeps the newest and never a running run.
	n, err := s.PruneHealthRuns(c, site.ID, 1)
	must(t, err)
	eq(t, "pruned", n, int64(2))
	listed, err = s.ListHealthRuns(c, site.ID, 0)
	must(t, err)
	eq(t, "kept", len(listed), 1)
	stored, err = s.ListHealthIssues(c, runs[0].ID)
	must(t, err)
	eq(t, "issues pruned with their run", len(stored), 0)

	must(t, s.DeleteHealthSite(c, site.ID))
	if err := s.DeleteHealthSite(c, site.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("delete twice: got %v, want ErrNotFound", err)
	}
	if _, err := s.GetHealthSite(c, site.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleted site: got %v, want ErrNotFound", err)
	}
	if _, err := s.GetHealthRun(c, runs[2].ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("run of a deleted site: got %v, want ErrNotFound", err)
	}
}
