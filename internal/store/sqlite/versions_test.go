package sqlite_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/uptime-operator/uptime-operator/internal/store"
)

// TestAdoptionStampsUptimeVersions: a re-created monitor adopting its
// predecessor's rollups changes the uptime version of both UIDs, so the
// REST API's uptime cache does not keep the empty uptime it may have read
// for the new UID before the adoption.
func TestAdoptionStampsUptimeVersions(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	at := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	old := store.MonitorIdentity{UID: uuid.NewString(), Namespace: "team", Name: "web", Type: "http"}
	cur := old
	cur.UID = uuid.NewString()
	if _, err := s.ClaimMonitorHistory(ctx, store.HistoryClaim{MonitorIdentity: old, AdoptFrom: "web", At: at}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.InsertChecks(ctx, []store.Check{{ID: uuid.NewString(), MonitorID: old.UID, Region: "eu", CheckedAt: at, Status: store.StatusUp}}); err != nil {
		t.Fatal(err)
	}
	if err := s.RetireMonitorHistory(ctx, old, at.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	vOld, _ := s.UptimeVersion(old.UID)
	vCur, _ := s.UptimeVersion(cur.UID)
	adopted, err := s.ClaimMonitorHistory(ctx, store.HistoryClaim{MonitorIdentity: cur, AdoptFrom: "web", At: at.Add(2 * time.Minute)})
	if err != nil || adopted != old.UID {
		t.Fatalf("claim: adopted %q, %v", adopted, err)
	}
	if v, _ := s.UptimeVersion(cur.UID); v == vCur {
		t.Error("the adopting monitor's uptime version did not change")
	}
	if v, _ := s.UptimeVersion(old.UID); v == vOld {
		t.Error("the adopted monitor's uptime version did not change")
	}
}
