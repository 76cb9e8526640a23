package storetest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/uptime-operator/uptime-operator/internal/store"
)

func testCertObservations(t *testing.T, s store.Store) {
	c := ctx(t)
	m := uuid.NewString()
	notAfter := base.Add(30*24*time.Hour + 123456789)
	must(t, s.RecordCertObservation(c, store.CertObservation{MonitorID: m, Region: "eu", ObservedAt: base, NotAfter: notAfter, Issuer: "CA 1", Subject: "CN=a"}))
	must(t, s.RecordCertObservation(c, store.CertObservation{MonitorID: m, Region: "us", ObservedAt: base.Add(time.Minute), NotAfter: notAfter, Issuer: "CA 1", Subject: "CN=a"}))
	// A newer observation replaces the region's, an older one is ignored.
	renewed := base.Add(90 * 24 * time.Hour)
	must(t, s.RecordCertObservation(c, store.CertObservation{MonitorID: m, Region: "eu", ObservedAt: base.Add(2 * time.Minute), NotAfter: renewed, Issuer: "CA 2", Subject: "CN=a"}))
	must(t, s.RecordCertObservation(c, store.CertObservation{MonitorID: m, Region: "eu", ObservedAt: base.Add(-time.Hour), NotAfter: notAfter, Issuer: "old", Subject: "CN=a"}))
	obs, err := s.ListCertObservations(c, m)
	must(t, err)
	eq(t, "observations", len(obs), 2)
	eq(t, "newest first", obs[0].Region, "eu")
	eq(t, "renewed not_after", obs[0].NotAfter.Equal(renewed), true)
	eq(t, "issuer", obs[0].Issuer, "CA 2")
	eq(t, "microseconds kept", obs[1].NotAfter.Equal(notAfter.Truncate(time.Microsecond)), true)
	if err := s.RecordCertObservation(c, store.CertObservation{MonitorID: m}); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("observation without not_after: got %v, want ErrInvalid", err)
	}
	must(t, s.DeleteMonitorHistory(c, m))
	obs, err = s.ListCertObservations(c, m)
	must(t, err)
	eq(t, "deleted with the monitor", len(obs), 0)
}

func testDomainExpiry(t *testing.T, s store.Store) {
	c := ctx(t)
	if _, err := s.GetDomainExpiry(c, "example.com"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown domain: got %v, want ErrNotFound", err)
	}
	exp := base.Add(200 * 24 * time.Hour)
	must(t, s.PutDomainExpiry(c, store.DomainExpiry{Domain: "example.com", CheckedAt: base, ExpiresAt: &exp, Registrar: "Reg"}))
	d, err := s.GetDomainExpiry(c, "example.com")
	must(t, err)
	eq(t, "expires", d.ExpiresAt != nil && d.ExpiresAt.Equal(exp), true)
	eq(t, "registrar", d.Registrar, "Reg")
	must(t, s.PutDomainExpiry(c, store.DomainExpiry{Domain: "example.com", CheckedAt: base.Add(time.Hour), Error: "rdap: 404"}))
	d, err = s.GetDomainExpiry(c, "example.com")
	must(t, err)
	eq(t, "replaced: no date", d.ExpiresAt == nil, true)
	eq(t, "error", d.Error, "rdap: 404")
	eq(t, "checked", d.CheckedAt.Equal(base.Add(time.Hour)), true)
}

func testExpiryNotices(t *testing.T, s store.Store) {
	c := ctx(t)
	m := uuid.NewString()
	exp := base.Add(7 * 24 * time.Hour)
	ev := func() store.OutboxEvent {
		return store.OutboxEvent{Namespace: "ns", Kind: "ssl.expiring", Payload: []byte(`{"stage":"pre_7d"}`), Channels: []string{"ch-1"}}
	}
	n := store.ExpiryNotice{MonitorID: m, Kind: store.ExpiryKindSSL, ExpiresAt: exp, Stage: "pre_7d", SentAt: base}
	// Concurrent callers: exactly one records the stage and enqueues.
	var wg sync.WaitGroup
	results := make([]bool, 4)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e := ev()
			ok, err := s.RecordExpiryNotice(c, n, e)
			if err != nil {
				t.Error(err)
			}
			results[i] = ok
		}()
	}
	wg.Wait()
	won := 0
	for _, ok := range results {
		if ok {
			won++
		}
	}
	eq(t, "recorded once", won, 1)
	ds, err := s.ListDeliveries(c, store.DeliveryQuery{ChannelID: "ch-1"})
	must(t, err)
	eq(t, "one delivery", len(ds), 1)
	// Another stage, another kind, or a new expiry date are new notices.
	for _, other := range []store.ExpiryNotice{
		{MonitorID: m, Kind: store.ExpiryKindSSL, ExpiresAt: exp, Stage: "pre_2d", SentAt: base.Add(time.Hour)},
		{MonitorID: m, Kind: store.ExpiryKindDomain, ExpiresAt: exp, Stage: "pre_7d", SentAt: base.Add(2 * time.Hour)},
		{MonitorID: m, Kind: store.ExpiryKindSSL, ExpiresAt: exp.Add(90 * 24 * time.Hour), Stage: "pre_7d", SentAt: base.Add(3 * time.Hour)},
	} {
		ok, err := s.RecordExpiryNotice(c, other)
		must(t, err)
		eq(t, "new notice "+other.Kind+" "+other.Stage, ok, true)
	}
	list, err := s.ListExpiryNotices(c, m)
	must(t, err)
	eq(t, "notices", len(list), 4)
	eq(t, "newest first", list[0].ExpiresAt.Equal(exp.Add(90*24*time.Hour)), true)
	must(t, s.DeleteMonitorHistory(c, m))
	list, err = s.ListExpiryNotices(c, m)
	must(t, err)
	eq(t, "deleted with the monitor", len(list), 0)
}

func testAIContentAndDrafts(t *testing.T, s store.Store) {
	c := ctx(t)
	m := uuid.NewString()
	inc, err := s.OpenIncident(c, store.Incident{Namespace: "ns", MonitorID: m, MonitorName: "Shop", StartedAt: base})
	must(t, err)

	if _, err := s.PutAIContent(c, store.AIContent{IncidentID: uuid.NewString(), Kind: store.AIContentSummary, Body: "x"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("content of unknown incident: got %v, want ErrNotFound", err)
	}
	_, err = s.PutAIContent(c, store.AIContent{IncidentID: inc.ID, Namespace: "ns", Kind: store.AIContentSummary, Body: "first", Model: "m1", UpdatedAt: base})
	must(t, err)
	_, err = s.PutAIContent(c, store.AIContent{IncidentID: inc.ID, Namespace: "ns", Kind: store.AIContentSummary, Body: "second", Model: "m2", UpdatedAt: base.Add(time.Minute)})
	must(t, err)
	_, err = s.PutAIContent(c, store.AIContent{IncidentID: inc.ID, Namespace: "ns", Kind: store.AIContentPostmortem, Body: "pm", Model: "m2"})
	must(t, err)
	content, err := s.ListAIContent(c, inc.ID)
	must(t, err)
	eq(t, "content kinds", len(content), 2)
	eq(t, "by kind", content[0].Kind, store.AIContentPostmortem)
	eq(t, "replaced", content[1].Body, "second")
	eq(t, "model", content[1].Model, "m2")

	if _, err := s.InsertAIDraft(c, store.AIDraft{IncidentID: uuid.NewString(), Phase: "investigating", Body: "x"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("draft of unknown incident: got %v, want ErrNotFound", err)
	}
	d1, err := s.InsertAIDraft(c, store.AIDraft{Namespace: "ns", IncidentID: inc.ID, Phase: "investigating", Body: "We are looking into it.", Guidance: "short", Model: "m", CreatedAt: base})
	must(t, err)
	eq(t, "draft status", d1.Status, store.AIDraftOpen)
	d2, err := s.InsertAIDraft(c, store.AIDraft{Namespace: "ns", IncidentID: inc.ID, Phase: "identified", Body: "Found it.", Model: "m", CreatedAt: base.Add(time.Minute)})
	must(t, err)
	got, err := s.GetAIDraft(c, d1.ID)
	must(t, err)
	eq(t, "guidance", got.Guidance, "short")
	eq(t, "created", got.CreatedAt.Equal(base), true)
	if _, err := s.GetAIDraft(c, uuid.NewString()); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown draft: got %v, want ErrNotFound", err)
	}
	drafts, err := s.ListAIDrafts(c, inc.ID)
	must(t, err)
	eq(t, "drafts", len(drafts), 2)
	eq(t, "newest first", drafts[0].ID, d2.ID)

	d1.Body, d1.Phase = "Edited.", "monitoring"
	ed, err := s.UpdateAIDraft(c, d1, store.AIDraftOpen)
	must(t, err)
	eq(t, "edited body", ed.Body, "Edited.")
	eq(t, "still a draft", ed.Status, store.AIDraftOpen)

	pub, note, err := s.PublishAIDraft(c, d1.ID, "API key k", base.Add(time.Hour))
	must(t, err)
	eq(t, "published", pub.Status, store.AIDraftPublished)
	eq(t, "note id", pub.NoteID, note.ID)
	eq(t, "public note", note.Public, true)
	eq(t, "note body", note.Body, "Edited.")
	notes, err := s.ListNotes(c, inc.ID)
	must(t, err)
	eq(t, "one note", len(notes), 1)
	eq(t, "note author", notes[0].Author, "API key k")
	if _, _, err := s.PublishAIDraft(c, d1.ID, "x", time.Time{}); !errors.Is(err, store.ErrDraftState) {
		t.Fatalf("publishing twice: got %v, want ErrDraftState", err)
	}
	if _, err := s.UpdateAIDraft(c, store.AIDraft{ID: d1.ID, Body: "again"}, store.AIDraftOpen); !errors.Is(err, store.ErrDraftState) {
		t.Fatalf("editing a published draft: got %v, want ErrDraftState", err)
	}
	d2.Status = store.AIDraftDiscarded
	_, err = s.UpdateAIDraft(c, d2, store.AIDraftOpen)
	must(t, err)
	if _, _, err := s.PublishAIDraft(c, d2.ID, "x", time.Time{}); !errors.Is(err, store.ErrDraftState) {
		t.Fatalf("publishing a discarded draft: got %v, want ErrDraftState", err)
	}
	if _, err := s.UpdateAIDraft(c, store.AIDraft{ID: uuid.NewString()}, store.AIDraftOpen); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown draft update: got %v, want ErrNotFound", err)
	}

	// Deleting the monitor's history removes the incident's AI content.
	must(t, s.DeleteMonitorHistory(c, m))
	content, err = s.ListAIContent(c, inc.ID)
	must(t, err)
	eq(t, "content deleted", len(content), 0)
	drafts, err = s.ListAIDrafts(c, inc.ID)
	must(t, err)
	eq(t, "drafts deleted", len(drafts), 0)
}

func testAIUsage(t *testing.T, s store.Store) {
	c := ctx(t)
	used, err := s.AIUsage(c, "ns", "2026-03")
	must(t, err)
	eq(t, "none yet", used, 0)
	var wg sync.WaitGroup
	var mu sync.Mutex
	granted := 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, ok, err := s.AddAIUsage(c, "ns", "2026-03", 1, 5)
			if err != nil {
				t.Error(err)
			}
			if ok {
				mu.Lock()
				granted++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	eq(t, "granted up to the limit", granted, 5)
	used, ok, err := s.AddAIUsage(c, "ns", "2026-03", 1, 5)
	must(t, err)
	eq(t, "refused at the limit", ok, false)
	eq(t, "count at the limit", used, 5)
	used, ok, err = s.AddAIUsage(c, "ns", "2026-03", -1, 5)
	must(t, err)
	eq(t, "given back", ok, true)
	eq(t, "count after give back", used, 4)
	used, ok, err = s.AddAIUsage(c, "ns", "2026-03", -10, 5)
	must(t, err)
	eq(t, "never below zero", used, 0)
	eq(t, "never below zero ok", ok, true)
	used, ok, err = s.AddAIUsage(c, "ns", "2026-04", 3, 0)
	must(t, err)
	eq(t, "unlimited", ok, true)
	eq(t, "other period", used, 3)
	used, ok, err = s.AddAIUsage(c, "other", "2026-03", 6, 5)
	must(t, err)
	eq(t, "delta over the limit", ok, false)
	eq(t, "untouched", used, 0)
}
