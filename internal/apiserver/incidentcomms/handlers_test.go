package incidentcomms

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/apikeys"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core/coretest"
	"github.com/uptime-operator/uptime-operator/internal/assist"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// chatStub speaks the chat-completions API.
func chatStub(t *testing.T) (*httptest.Server, *int) {
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer sk-llm" {
			t.Errorf("chat request %s auth %q", r.URL.Path, r.Header.Get("Authorization"))
		}
		var req struct {
			Model string `json:"model"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		if req.Model != "writer" {
			t.Errorf("model = %q", req.Model)
		}
		_, _ = fmt.Fprint(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":"We are investigating."},"finish_reason":"stop"}]}`)
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

func TestAssistRoutes(t *testing.T) {
	f := coretest.New(t)
	chat, calls := chatStub(t)
	svc := &assist.Service{Config: assist.Config{URL: chat.URL + "/v1", Model: "writer", APIKey: "sk-llm", MonthlyAllowance: 100},
		Store: f.Store, Now: f.Clock.Now}
	New(f.Store, f.Clock, svc).Routes(f.Router)
	ctx := context.Background()
	inc, err := f.Store.OpenIncident(ctx, store.Incident{Namespace: "team", MonitorID: "m1", MonitorName: "Shop", StartedAt: f.Clock.Now().Add(-time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	freeInc, err := f.Store.OpenIncident(ctx, store.Incident{Namespace: "free-ws", MonitorID: "m2", MonitorName: "Free"})
	if err != nil {
		t.Fatal(err)
	}
	base := "/incident-comms/incidents/" + inc.ID

	st := coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "GET", "/incident-comms/status", nil), 200, "status")
	if st["available"] != true || st["model"] != "writer" || st["allowance"].(map[string]any)["remaining"] != float64(100) {
		t.Fatalf("status = %v", st)
	}
	fe := coretest.Expect(t, f.Call("free-ws", apikeys.Standard, "POST", "/incident-comms/incidents/"+freeInc.ID+"/summary", nil), 403, "plan without ai-assist")
	if fe["code"] != core.CodeFeatureNotAvailable {
		t.Fatalf("free plan = %v", fe)
	}
	coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "POST", base+"/summary", nil), 403, "read-only key generating")

	sum := coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", base+"/summary", nil), 200, "summary")
	if sum["body"] != "We are investigating." || sum["kind"] != "summary" {
		t.Fatalf("summary = %v", sum)
	}
	coretest.Expect(t, f.Call("other", apikeys.Standard, "POST", base+"/summary", nil), 404, "incident of another workspace")

	for _, bad := range []any{
		map[string]any{"phase": "panicking"},
		map[string]any{"guidance": strings.Repeat("x", 1001)},
		map[string]any{"tone": "calm"},
	} {
		coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", base+"/status-updates", bad), 400, fmt.Sprint("bad status update ", bad))
	}
	d := coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", base+"/status-updates", map[string]any{"phase": "identified", "guidance": "Be brief."}), 201, "status update")
	draftID := d["id"].(string)
	if d["status"] != "draft" || d["phase"] != "identified" {
		t.Fatalf("draft = %v", d)
	}
	coretest.Expect(t, f.Call("team", apikeys.Standard, "PATCH", "/incident-comms/status-updates/"+draftID, map[string]any{"body": strings.Repeat("x", 5001)}), 400, "body too long")
	ed := coretest.Expect(t, f.Call("team", apikeys.Standard, "PATCH", "/incident-comms/status-updates/"+draftID, map[string]any{"body": "We found the cause.", "phase": "monitoring"}), 200, "edit")
	if ed["body"] != "We found the cause." || ed["phase"] != "monitoring" {
		t.Fatalf("edited = %v", ed)
	}
	coretest.Expect(t, f.Call("other", apikeys.Standard, "POST", "/incident-comms/status-updates/"+draftID+"/publish", nil), 404, "draft of another workspace")
	pub := coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", "/incident-comms/status-updates/"+draftID+"/publish", nil), 200, "publish")
	note := pub["note"].(map[string]any)
	if note["public"] != true || note["body"] != "We found the cause." || note["author"] != "alice" || pub["draft"].(map[string]any)["status"] != "published" {
		t.Fatalf("publish = %v", pub)
	}
	notes, err := f.Store.ListNotes(ctx, inc.ID)
	if err != nil || len(notes) != 1 || !notes[0].Public {
		t.Fatalf("notes = %+v, %v", notes, err)
	}
	coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", "/incident-comms/status-updates/"+draftID+"/publish", nil), 409, "publish twice")
	coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", "/incident-comms/status-updates/"+draftID+"/discard", nil), 409, "discard a published draft")
	coretest.Expect(t, f.Call("team", apikeys.Standard, "PATCH", "/incident-comms/status-updates/"+draftID, map[string]any{"body": "x"}), 409, "edit a published draft")

	pm := coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", base+"/postmortem/generate", map[string]any{}), 200, "postmortem")
	if pm["kind"] != "postmortem" {
		t.Fatalf("postmortem = %v", pm)
	}
	coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", base+"/postmortem/generate", map[string]any{"overwrite": false}), 409, "postmortem exists")
	coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", base+"/postmortem/generate", map[string]any{"overwrite": true}), 200, "overwrite")

	saved := coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "GET", base, nil), 200, "saved content")
	if saved["summary"].(map[string]any)["body"] != "We are investigating." || saved["postmortem"] == nil || len(saved["status_updates"].([]any)) != 1 {
		t.Fatalf("saved = %v", saved)
	}

	// 30 generations per 10 minutes per workspace: eight requests so far
	// (one summary, three invalid and one valid status update, three
	// postmortems, one of them refused as existing); refusals count too.
	made := 8
	for i := made; i < 30; i++ {
		coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", base+"/summary", nil), 200, fmt.Sprintf("generation %d", i+1))
	}
	rec := f.Call("team", apikeys.Standard, "POST", base+"/summary", nil)
	if rec.Code != http.StatusTooManyRequests {
		t.Fatalf("31st generation: %d %s", rec.Code, rec.Body.String())
	}
	f.Clock.SetTime(f.Clock.Now().Add(10 * time.Minute))
	coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", base+"/summary", nil), 200, "after the window")
	if *calls != 27 {
		t.Fatalf("model calls = %d, want 27", *calls)
	}
}

func TestAssistAllowanceAndUnavailable(t *testing.T) {
	f := coretest.New(t)
	chat, _ := chatStub(t)
	svc := &assist.Service{Config: assist.Config{URL: chat.URL + "/v1", Model: "writer", APIKey: "sk-llm", MonthlyAllowance: 1},
		Store: f.Store, Now: f.Clock.Now}
	New(f.Store, f.Clock, svc).Routes(f.Router)
	inc, err := f.Store.OpenIncident(context.Background(), store.Incident{Namespace: "team", MonitorID: "m1", MonitorName: "Shop"})
	if err != nil {
		t.Fatal(err)
	}
	base := "/incident-comms/incidents/" + inc.ID
	coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", base+"/summary", nil), 200, "first")
	lim := coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", base+"/summary", nil), 403, "over the allowance")
	if lim["code"] != core.CodeEntitlementLimit || lim["details"].(map[string]any)["limit"] != float64(1) {
		t.Fatalf("allowance error = %v", lim)
	}

	g := coretest.New(t)
	New(g.Store, g.Clock, &assist.Service{Store: g.Store, Now: g.Clock.Now}).Routes(g.Router)
	inc2, err := g.Store.OpenIncident(context.Background(), store.Incident{Namespace: "team", MonitorID: "m1", MonitorName: "Shop"})
	if err != nil {
		t.Fatal(err)
	}
	st := coretest.Expect(t, g.Call("team", apikeys.Standard, "GET", "/incident-comms/status", nil), 200, "status without a model")
	if st["available"] != false || st["features"].(map[string]any)["summary"] != false || st["reason"] == nil {
		t.Fatalf("status = %v", st)
	}
	un := coretest.Expect(t, g.Call("team", apikeys.Standard, "POST", "/incident-comms/incidents/"+inc2.ID+"/status-updates", map[string]any{"phase": "investigating"}), 503, "generation without a model")
	if un["code"] != CodeAIUnavailable {
		t.Fatalf("unavailable = %v", un)
	}
}
