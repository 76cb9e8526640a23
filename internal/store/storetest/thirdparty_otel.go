package storetest

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/store"
)

func testThirdPartySubscriptions(t *testing.T, s store.Store) {
	c := ctx(t)
	sub, err := s.InsertThirdPartySubscription(c, store.ThirdPartySubscription{Namespace: "ns", ProviderID: "github",
		ComponentIDs: []string{"c1", "c2"}, Keywords: []string{"actions"}, Notify: true, MinSeverity: "major", CreatedAt: base})
	must(t, err)
	eq(t, "id filled", sub.ID != "", true)
	again, err := s.InsertThirdPartySubscription(c, store.ThirdPartySubscription{Namespace: "ns", ProviderID: "github", MinSeverity: "minor"})
	if !errors.Is(err, store.ErrSubscriptionExists) {
		t.Fatalf("second subscription to one provider: got %v, want ErrSubscriptionExists", err)
	}
	eq(t, "existing returned", again.ID, sub.ID)
	_, err = s.InsertThirdPartySubscription(c, store.ThirdPartySubscription{Namespace: "other", ProviderID: "github", CreatedAt: base.Add(time.Second)})
	must(t, err)
	_, err = s.InsertThirdPartySubscription(c, store.ThirdPartySubscription{Namespace: "ns", ProviderID: "aws", CreatedAt: base.Add(2 * time.Second)})
	must(t, err)
	if _, err := s.InsertThirdPartySubscription(c, store.ThirdPartySubscription{Namespace: "ns"}); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("subscription without provider: got %v, want ErrInvalid", err)
	}

	got, err := s.GetThirdPartySubscription(c, sub.ID)
	must(t, err)
	eq(t, "components", slices.Equal(got.ComponentIDs, []string{"c1", "c2"}), true)
	eq(t, "keywords", slices.Equal(got.Keywords, []string{"actions"}), true)
	eq(t, "notify", got.Notify, true)
	eq(t, "notify maintenance", got.NotifyMaintenance, false)
	eq(t, "severity", got.MinSeverity, "major")
	eq(t, "created", got.CreatedAt.Equal(base), true)

	list, err := s.ListThirdPartySubscriptions(c, "ns")
	must(t, err)
	eq(t, "workspace's subscriptions", len(list), 2)
	eq(t, "oldest first", list[0].ProviderID, "github")
	all, err := s.ListThirdPartySubscriptions(c, "")
	must(t, err)
	eq(t, "every workspace's", len(all), 3)

	got.ComponentIDs, got.Keywords, got.NotifyMaintenance, got.MinSeverity = nil, []string{"a", "b"}, true, "critical"
	got.UpdatedAt = base.Add(time.Hour)
	upd, err := s.UpdateThirdPartySubscription(c, got)
	must(t, err)
	eq(t, "components cleared", len(upd.ComponentIDs), 0)
	eq(t, "keywords replaced", len(upd.Keywords), 2)
	eq(t, "maintenance followed", upd.NotifyMaintenance, true)
	eq(t, "updated", upd.UpdatedAt.Equal(base.Add(time.Hour)), true)
	eq(t, "provider kept", upd.ProviderID, "github")
	if _, err := s.UpdateThirdPartySubscription(c, store.ThirdPartySubscription{ID: "missing"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("update of a missing subscription: got %v, want ErrNotFound", err)
	}
	must(t, s.DeleteThirdPartySubscription(c, sub.ID))
	if err := s.DeleteThirdPartySubscription(c, sub.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("second delete: got %v, want ErrNotFound", err)
	}
	if _, err := s.GetThirdPartySubscription(c, sub.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("get after delete: got %v, want ErrNotFound", err)
	}
	// Following the provider again after unfollowing works.
	_, err = s.InsertThirdPartySubscription(c, store.ThirdPartySubscription{Namespace: "ns", ProviderID: "github"})
	must(t, err)
}

func testThirdPartyState(t *testing.T, s store.Store) {
	c := ctx(t)
	if _, err := s.GetThirdPartyState(c, "github"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("state before any poll: got %v, want ErrNotFound", err)
	}
	changed := base.Add(-time.Minute)
	ev := store.OutboxEvent{Namespace: "ns", Kind: "third_party.incident", Payload: []byte(`{"kind":"incident_opened"}`), Channels: []string{"ch-1"}}
	must(t, s.PutThirdPartyState(c, store.ThirdPartyState{ProviderID: "github", ETag: `"v1"`, LastModified: "Tue, 10 Mar 2026 12:00:00 GMT",
		Snapshot: []byte(`{"components":{"a":{"status":"operational"}}}`), PolledAt: base, ChangedAt: &changed}, ev))
	st, err := s.GetThirdPartyState(c, "github")
	must(t, err)
	eq(t, "etag", st.ETag, `"v1"`)
	eq(t, "last modified", st.LastModified, "Tue, 10 Mar 2026 12:00:00 GMT")
	eq(t, "polled", st.PolledAt.Equal(base), true)
	eq(t, "changed", st.ChangedAt != nil && st.ChangedAt.Equal(changed), true)
	eq(t, "snapshot kept", len(st.Snapshot) > 0, true)
	ds, err := s.ListDeliveries(c, store.DeliveryQuery{ChannelID: "ch-1"})
	must(t, err)
	eq(t, "event enqueued with the state", len(ds), 1)
	eq(t, "event kind", ds[0].Kind, "third_party.incident")

	must(t, s.PutThirdPartyState(c, store.ThirdPartyState{ProviderID: "github", ETag: `"v1"`, Snapshot: st.Snapshot,
		PolledAt: base.Add(time.Minute), ChangedAt: st.ChangedAt, Error: "provider answered 503"}))
	st, err = s.GetThirdPartyState(c, "github")
	must(t, err)
	eq(t, "error recorded", st.Error, "provider answered 503")
	eq(t, "polled again", st.PolledAt.Equal(base.Add(time.Minute)), true)
	eq(t, "last modified replaced", st.LastModified, "")
	if err := s.PutThirdPartyState(c, store.ThirdPartyState{}); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("state without provider: got %v, want ErrInvalid", err)
	}
}

func testThirdPartyPages(t *testing.T, s store.Store) {
	c := ctx(t)
	p, err := s.GetThirdPartyPage(c, "page-1")
	must(t, err)
	eq(t, "no services yet", len(p.Services), 0)
	_, err = s.PutThirdPartyPage(c, store.ThirdPartyPage{PageUID: "page-1", Namespace: "ns", UpdatedAt: base, Services: []store.ThirdPartyService{
		{ProviderID: "github", ComponentIDs: []string{"c1"}, DisplayName: "Code hosting"},
		{ProviderID: "aws"},
	}})
	must(t, err)
	p, err = s.GetThirdPartyPage(c, "page-1")
	must(t, err)
	eq(t, "services", len(p.Services), 2)
	eq(t, "namespace", p.Namespace, "ns")
	eq(t, "display name", p.Services[0].DisplayName, "Code hosting")
	eq(t, "order kept", p.Services[1].ProviderID, "aws")
	eq(t, "components never null", p.Services[1].ComponentIDs != nil, true)
	eq(t, "updated", p.UpdatedAt.Equal(base), true)
	_, err = s.PutThirdPartyPage(c, store.ThirdPartyPage{PageUID: "page-0", Namespace: "other", Services: []store.ThirdPartyService{{ProviderID: "slack"}}})
	must(t, err)
	pages, err := s.ListThirdPartyPages(c)
	must(t, err)
	eq(t, "pages listed", len(pages), 2)
	eq(t, "pages by uid", pages[0].PageUID+","+pages[1].PageUID, "page-0,page-1")
	eq(t, "listed services", len(pages[1].Services), 2)
	_, err = s.PutThirdPartyPage(c, store.ThirdPartyPage{PageUID: "page-1", Namespace: "ns"})
	must(t, err)
	p, err = s.GetThirdPartyPage(c, "page-1")
	must(t, err)
	eq(t, "cleared", len(p.Services), 0)
	pages, err = s.ListThirdPartyPages(c)
	must(t, err)
	eq(t, "cleared page not listed", len(pages), 1)
}

func testOTelSettings(t *testing.T, s store.Store) {
	c := ctx(t)
	if _, err := s.GetOTelSettings(c, "ns"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("settings before put: got %v, want ErrNotFound", err)
	}
	o, err := s.PutOTelSettings(c, store.OTelSettings{Namespace: "ns", Endpoint: "https://otel.example.com", Protocol: store.OTelHTTPProtobuf,
		Headers: map[string]string{"Authorization": "Bearer secret"}, ServiceName: "uptime", Enabled: true, ExportSpans: true,
		CreatedAt: base, UpdatedAt: base})
	must(t, err)
	eq(t, "created", o.CreatedAt.Equal(base), true)
	o.Protocol, o.ExportMetrics, o.Enabled, o.Headers = store.OTelGRPC, true, false, nil
	o.CreatedAt, o.UpdatedAt = time.Time{}, base.Add(time.Hour)
	_, err = s.PutOTelSettings(c, o)
	must(t, err)
	got, err := s.GetOTelSettings(c, "ns")
	must(t, err)
	eq(t, "protocol replaced", got.Protocol, store.OTelGRPC)
	eq(t, "metrics", got.ExportMetrics, true)
	eq(t, "spans", got.ExportSpans, true)
	eq(t, "disabled", got.Enabled, false)
	eq(t, "headers replaced", len(got.Headers), 0)
	eq(t, "created kept", got.CreatedAt.Equal(base), true)
	eq(t, "updated", got.UpdatedAt.Equal(base.Add(time.Hour)), true)
	if _, err := s.PutOTelSettings(c, store.OTelSettings{Namespace: "ns"}); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("settings without endpoint: got %v, want ErrInvalid", err)
	}

	d, err := s.GetOTelDelivery(c, "ns")
	must(t, err)
	eq(t, "no delivery yet", d.LastSuccessAt == nil && d.SpansExported == 0, true)
	must(t, s.RecordOTelExport(c, store.OTelExportResult{Namespace: "ns", At: base, Spans: 3, DataPoints: 4}))
	must(t, s.RecordOTelExport(c, store.OTelExportResult{Namespace: "ns", At: base.Add(time.Minute), Spans: 9, Error: "endpoint answered 503", Dropped: 2}))
	must(t, s.RecordOTelExport(c, store.OTelExportResult{Namespace: "ns", At: base.Add(2 * time.Minute), Spans: 1, DataPoints: 2}))
	d, err = s.GetOTelDelivery(c, "ns")
	must(t, err)
	eq(t, "last success", d.LastSuccessAt != nil && d.LastSuccessAt.Equal(base.Add(2*time.Minute)), true)
	eq(t, "last error kept after a success", d.LastError, "endpoint answered 503")
	eq(t, "last error at", d.LastErrorAt != nil && d.LastErrorAt.Equal(base.Add(time.Minute)), true)
	eq(t, "spans: only successful exports count", d.SpansExported, int64(4))
	eq(t, "points", d.PointsExported, int64(6))
	eq(t, "successful exports", d.SuccessfulCalls, int64(2))
	eq(t, "failed exports", d.FailedExports, int64(1))
	eq(t, "dropped", d.DroppedChecks, int64(2))

	must(t, s.DeleteOTelSettings(c, "ns"))
	if err := s.DeleteOTelSettings(c, "ns"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("second delete: got %v, want ErrNotFound", err)
	}
	d, err = s.GetOTelDelivery(c, "ns")
	must(t, err)
	eq(t, "status removed with the settings", d.SpansExported, int64(0))
}
