package thirdparty

import (
	"context"
	"testing"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/restapi"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// TestPageServices polls a local provider that no workspace follows but a
// page shows, and reads the services the page shows from the stored state.
func TestPageServices(t *testing.T) {
	sp := newStatuspage(t)
	acme := Provider{ID: "acme", Name: "Acme", Kind: KindStatuspage, URL: sp.URL}
	quiet := Provider{ID: "quiet", Name: "Quiet", Kind: KindStatuspage, URL: "http://127.0.0.1:1", StatusPageURL: "https://status.quiet.example"}
	f := newFixture(t, acme, quiet)
	ctx := context.Background()
	_, err := f.st.PutThirdPartyPage(ctx, store.ThirdPartyPage{PageUID: "page", Namespace: "team", Services: []store.ThirdPartyService{
		{ProviderID: "acme"},
		{ProviderID: "acme", ComponentIDs: []string{"web"}, DisplayName: "Acme website"},
		{ProviderID: "acme", ComponentIDs: []string{"api"}, DisplayName: "Acme API"},
		{ProviderID: "quiet"},
		{ProviderID: "gone"},
	}})
	if err != nil {
		t.Fatal(err)
	}

	before, err := f.svc.PageServices(ctx, "page")
	if err != nil {
		t.Fatal(err)
	}
	if len(before) != 4 || before[0].Status != "unknown" {
		t.Fatalf("before the first poll: %+v, want 4 services (the one missing from the catalog left out), all unknown", before)
	}

	sp.set(summary("major", apiPartial+","+webOK+","+groupOK, incOpen, ""))
	_ = f.svc.PollAll(ctx) // quiet's address refuses connections: its poll fails
	if got := sp.last(); got != "summary 200" {
		t.Fatalf("a provider shown on a page but followed by nobody was not polled: last request %q", got)
	}
	if n := len(f.notices(t, "hook-team")); n != 0 {
		t.Fatalf("polling for a page enqueued %d notices", n)
	}

	got, err := f.svc.PageServices(ctx, "page")
	if err != nil {
		t.Fatal(err)
	}
	want := []restapi.PublicService{
		{Name: "Acme", Status: "down", URL: sp.URL},
		{Name: "Acme website", Status: "up", URL: sp.URL, Components: []restapi.PublicServiceComponent{{Name: "Website", Status: "up"}}},
		{Name: "Acme API", Status: "down", URL: sp.URL, Components: []restapi.PublicServiceComponent{{Name: "API", Status: "down"}}},
		{Name: "Quiet", Status: "unknown", URL: "https://status.quiet.example"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d services, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.Name != w.Name || g.Status != w.Status || g.URL != w.URL || len(g.Components) != len(w.Components) {
			t.Fatalf("service %d = %+v, want %+v", i, g, w)
		}
		for j := range w.Components {
			if g.Components[j] != w.Components[j] {
				t.Fatalf("service %d component %d = %+v, want %+v", i, j, g.Components[j], w.Components[j])
			}
		}
	}
	if inc := got[0].Incidents; len(inc) != 1 || inc[0].Name != "Elevated API errors" || inc[0].URL != "https://stspg.io/inc1" {
		t.Fatalf("open incidents of the whole provider = %+v", inc)
	}
	if len(got[1].Incidents) != 0 || len(got[2].Incidents) != 1 {
		t.Fatalf("incidents are shown only on the services whose components they affect: website %+v, API %+v", got[1].Incidents, got[2].Incidents)
	}

	// A state older than three poll intervals is no longer shown.
	f.svc.Now = func() time.Time { return time.Now().Add(4 * DefaultInterval) }
	stale, err := f.svc.PageServices(ctx, "page")
	if err != nil {
		t.Fatal(err)
	}
	if stale[0].Status != "unknown" {
		t.Fatalf("stale state shown as %q, want unknown", stale[0].Status)
	}
}
