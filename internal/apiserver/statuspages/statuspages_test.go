package statuspages

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apikeys"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core/coretest"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
)

const (
	pageID = "0c000000-0000-4000-8000-000000000001"
	apiID  = "0c000000-0000-4000-8000-0000000000a1"
	dbID   = "0c000000-0000-4000-8000-0000000000a2"
	noID   = "0c000000-0000-4000-8000-0000000000ff"
)

// subscribers answers the lists of the pages it knows, as the status page
// notifier does, and records which page was asked for.
type subscribers struct{ asked []string }

func (s *subscribers) SubscriberList(_ context.Context, pageUID string) (restapi.PageSubscribers, error) {
	s.asked = append(s.asked, pageUID)
	return restapi.NoPageSubscribers(), nil
}

// newFixture holds the page "status" of team (its monitors: none yet), the
// monitors api (down) and db of team, and the workspace basic-ws whose plan
// has status pages but not white-label.
func newFixture(t *testing.T) (*coretest.Fixture, *subscribers) {
	t.Helper()
	mon := func(name, uid string, st monv1.MonitorStatusValue) *monv1.Monitor {
		return &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: name, UID: types.UID(uid)},
			Spec: monv1.MonitorSpec{Name: name}, Status: monv1.MonitorStatus{CurrentStatus: st}}
	}
	page := &monv1.StatusPage{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "status", UID: types.UID(pageID)},
		Spec: monv1.StatusPageSpec{Title: "Status", Slug: "acme-status", IsPublic: true}}
	basic := &monv1.Plan{ObjectMeta: metav1.ObjectMeta{Name: "basic"}, Spec: monv1.PlanSpec{Features: []monv1.Feature{monv1.FeatureStatusPages}}}
	basicNS := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "basic-ws", Labels: map[string]string{monv1.PlanLabel: "basic"}}}
	f := coretest.New(t, mon("api", apiID, monv1.StatusDown), mon("db", dbID, ""), page, basic, basicNS)
	subs := &subscribers{}
	New(f.Deps, subs, "https://status.example.net/", "").Routes(f.Router)
	return f, subs
}

func owner(ns string) *core.Caller {
	return &core.Caller{Namespace: ns, Level: apikeys.Automation, User: "alice", Owner: true}
}

func fieldOf(body map[string]any) string {
	return body["errors"].([]any)[0].(map[string]any)["field"].(string)
}

func storedPage(t *testing.T, f *coretest.Fixture) *monv1.StatusPage {
	t.Helper()
	var p monv1.StatusPage
	if err := f.K8s.Get(context.Background(), client.ObjectKey{Namespace: "team", Name: "status"}, &p); err != nil {
		t.Fatal(err)
	}
	return &p
}

func TestPages(t *testing.T) {
	f, _ := newFixture(t)
	created := coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", "/status/pages",
		map[string]any{"title": "Shop Status", "accent_color": "#1f6feb", "hide_powered_by": true}), 201, "create")
	slug, _ := created["slug"].(string)
	if created["title"] != "Shop Status" || len(slug) < len("shop-status-") || slug[:len("shop-status-")] != "shop-status-" ||
		created["url"] != "https://status.example.net/s/"+slug || created["hide_powered_by"] != true {
		t.Fatalf("created = %v", created)
	}
	for _, c := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"slug": "x"}, "title"},
		{map[string]any{"title": "T", "slug": "-bad-"}, "slug"},
		{map[string]any{"title": "T", "accent_color": "blue"}, "accent_color"},
		{map[string]any{"title": "T", "logo_url": "http://example.com/logo.png"}, "logo_url"},
	} {
		body := coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", "/status/pages", c.body), 400, c.field)
		if body["code"] != core.CodeValidation || fieldOf(body) != c.field {
			t.Fatalf("%v = %v", c.body, body)
		}
	}
	if body := coretest.Expect(t, f.Call("free-ws", apikeys.Standard, "POST", "/status/pages", map[string]any{"title": "T"}), 403, "free plan"); body["code"] != core.CodeFeatureNotAvailable {
		t.Fatalf("free plan = %v", body)
	}
	if body := coretest.Expect(t, f.Call("basic-ws", apikeys.Standard, "POST", "/status/pages", map[string]any{"title": "T", "hide_powered_by": true}), 403, "white label"); body["code"] != core.CodeWhiteLabel {
		t.Fatalf("white label = %v", body)
	}
	coretest.Expect(t, f.Call("basic-ws", apikeys.Standard, "POST", "/status/pages", map[string]any{"title": "T"}), 201, "basic page")

	var list []map[string]any
	if rec := f.Call("team", apikeys.ReadOnly, "GET", "/status/pages/me", nil); rec.Code != 200 || coretest.DecodeList(t, rec, &list) != 2 {
		t.Fatalf("list: %d %s", rec.Code, rec.Body)
	}
	got := coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "GET", "/status/pages/"+pageID, nil), 200, "get")
	if got["slug"] != "acme-status" || got["is_public"] != true {
		t.Fatalf("page = %v", got)
	}
	coretest.Expect(t, f.Call("other", apikeys.ReadOnly, "GET", "/status/pages/"+pageID, nil), 404, "another workspace")
	coretest.Expect(t, f.Call("team", apikeys.Standard, "PATCH", "/status/pages/"+pageID, map[string]any{"colour": "red"}), 400, "unknown field")
	upd := coretest.Expect(t, f.Call("team", apikeys.Standard, "PATCH", "/status/pages/"+pageID, map[string]any{"title": "Acme", "description": "All systems"}), 200, "update")
	if upd["title"] != "Acme" || upd["description"] != "All systems" || storedPage(t, f).Spec.Title != "Acme" {
		t.Fatalf("updated = %v", upd)
	}
	coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "DELETE", "/status/pages/"+pageID, nil), 403, "read-only delete")
	if rec := f.Call("team", apikeys.Standard, "DELETE", "/status/pages/"+pageID, nil); rec.Code != 204 {
		t.Fatalf("delete: %d %s", rec.Code, rec.Body)
	}
	coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "GET", "/status/pages/"+pageID, nil), 404, "deleted")
}

func TestPageMonitors(t *testing.T) {
	f, _ := newFixture(t)
	path := "/status/pages/" + pageID + "/monitors"
	bad := coretest.Expect(t, f.Call("team", apikeys.Standard, "PUT", path,
		map[string]any{"monitors": []any{map[string]any{"monitor_id": apiID}, map[string]any{"monitor_id": noID}, map[string]any{"monitor_id": apiID}}}), 400, "bad entries")
	fields := map[string]bool{}
	for _, e := range bad["errors"].([]any) {
		fields[e.(map[string]any)["field"].(string)] = true
	}
	if !fields["monitors[1].monitor_id"] || !fields["monitors[2].monitor_id"] {
		t.Fatalf("bad entries = %v", bad)
	}
	put := coretest.Expect(t, f.Call("team", apikeys.Standard, "PUT", path,
		map[string]any{"monitors": []any{map[string]any{"monitor_id": apiID, "section": "Edge"}}}), 200, "put")
	ms := put["monitors"].([]any)
	if len(ms) != 1 || ms[0].(map[string]any)["monitor_id"] != apiID || ms[0].(map[string]any)["section"] != "Edge" || ms[0].(map[string]any)["current_status"] != "down" {
		t.Fatalf("page monitors = %v", ms)
	}
	add := coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", path, map[string]any{"monitorId": dbID}), 200, "add")
	if ms := add["monitors"].([]any); len(ms) != 2 || ms[1].(map[string]any)["current_status"] != "pending" {
		t.Fatalf("after add = %v", ms)
	}
	if body := coretest.Expect(t, f.Call("team", apikeys.Standard, "POST", path, map[string]any{}), 400, "no id"); fieldOf(body) != "monitorId" {
		t.Fatalf("no id = %v", body)
	}
	var list []map[string]any
	if rec := f.Call("team", apikeys.ReadOnly, "GET", "/status/pages/monitor/"+dbID, nil); coretest.DecodeList(t, rec, &list) != 1 || list[0]["id"] != pageID {
		t.Fatalf("pages of db: %s", rec.Body)
	}
	if rec := f.Call("team", apikeys.ReadOnly, "GET", "/status/pages/monitor/"+noID, nil); coretest.DecodeList(t, rec, &list) != 0 {
		t.Fatalf("pages of an unknown monitor: %s", rec.Body)
	}
	if rec := f.Call("team", apikeys.Standard, "DELETE", path+"/"+apiID, nil); rec.Code != 204 {
		t.Fatalf("remove: %d %s", rec.Code, rec.Body)
	}
	coretest.Expect(t, f.Call("team", apikeys.Standard, "DELETE", path+"/"+apiID, nil), 404, "remove again")
	if got := storedPage(t, f).Spec.Monitors; len(got) != 1 || got[0].MonitorRef.Name != "db" {
		t.Fatalf("stored monitors = %v", got)
	}
}

// TestJoinedPageMonitors: a Monitor labelled with the page's name is shown
// after the page's list, and only its label takes it off (409 here).
func TestJoinedPageMonitors(t *testing.T) {
	f, _ := newFixture(t)
	ctx := context.Background()
	var db monv1.Monitor
	if err := f.K8s.Get(ctx, client.ObjectKey{Namespace: "team", Name: "db"}, &db); err != nil {
		t.Fatal(err)
	}
	db.Labels = map[string]string{monv1.StatusPageLabel: "status"}
	db.Annotations = map[string]string{monv1.StatusPageSectionAnnotation: "Discovered"}
	if err := f.K8s.Update(ctx, &db); err != nil {
		t.Fatal(err)
	}
	path := "/status/pages/" + pageID + "/monitors"
	coretest.Expect(t, f.Call("team", apikeys.Standard, "PUT", path, map[string]any{"monitors": []any{map[string]any{"monitor_id": apiID}}}), 200, "put")
	got := coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "GET", "/status/pages/"+pageID, nil), 200, "get")
	ms := got["monitors"].([]any)
	if len(ms) != 2 || ms[0].(map[string]any)["monitor_id"] != apiID || ms[1].(map[string]any)["monitor_id"] != dbID || ms[1].(map[string]any)["section"] != "Discovered" {
		t.Fatalf("page monitors = %v", ms)
	}
	var list []map[string]any
	if rec := f.Call("team", apikeys.ReadOnly, "GET", "/status/pages/monitor/"+dbID, nil); coretest.DecodeList(t, rec, &list) != 1 || list[0]["id"] != pageID {
		t.Fatalf("pages of db: %s", rec.Body)
	}
	if body := coretest.Expect(t, f.Call("team", apikeys.Standard, "DELETE", path+"/"+dbID, nil), 409, "remove a joined monitor"); body["code"] != core.CodeConflict ||
		!strings.Contains(fmt.Sprint(body["error"]), monv1.StatusPageLabel) {
		t.Fatalf("remove a joined monitor = %v", body)
	}
	if got := storedPage(t, f).Spec.Monitors; len(got) != 1 || got[0].MonitorRef.Name != "api" {
		t.Fatalf("stored monitors = %v", got)
	}
}

// TestAccessAndDomain: access and domain are the owner's; a password lives
// in the page's own Secret, and leaving password mode deletes it and signs
// visitors out.
func TestAccessAndDomain(t *testing.T) {
	f, _ := newFixture(t)
	access := "/status/pages/" + pageID + "/access"
	if body := coretest.Expect(t, f.Call("team", apikeys.Automation, "PUT", access, map[string]any{"mode": "public"}), 403, "API key"); body["code"] != core.CodeWorkspaceOwner {
		t.Fatalf("API key = %v", body)
	}
	if body := coretest.Expect(t, f.CallAs(owner("team"), "PUT", access, map[string]any{"mode": "password"}), 400, "no password"); fieldOf(body) != "password" {
		t.Fatalf("no password = %v", body)
	}
	coretest.Expect(t, f.CallAs(owner("team"), "PUT", access, map[string]any{"mode": "password", "password": "short"}), 400, "short password")
	coretest.Expect(t, f.CallAs(owner("team"), "PUT", access, map[string]any{"mode": "open"}), 400, "bad mode")
	set := coretest.Expect(t, f.CallAs(owner("team"), "PUT", access, map[string]any{"mode": "password", "password": "correct horse"}), 200, "password")
	if set["mode"] != "password" || set["has_password"] != true || set["sessions_revoked_at"] == nil {
		t.Fatalf("password access = %v", set)
	}
	var sec corev1.Secret
	key := client.ObjectKey{Namespace: "team", Name: "status-access"}
	// Created with stringData, which the API server (not the fake client)
	// folds into data.
	if err := f.K8s.Get(context.Background(), key, &sec); err != nil || sec.StringData["password"]+string(sec.Data["password"]) != "correct horse" ||
		len(sec.OwnerReferences) != 1 || sec.OwnerReferences[0].UID != pageID {
		t.Fatalf("password secret: %+v %v", sec, err)
	}
	if got := coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "GET", access, nil), 200, "get access"); got["mode"] != "password" {
		t.Fatalf("access = %v", got)
	}
	pub := coretest.Expect(t, f.CallAs(owner("team"), "PUT", access, map[string]any{"mode": "public", "is_public": false}), 200, "public")
	if pub["has_password"] != false || pub["is_public"] != false {
		t.Fatalf("public access = %v", pub)
	}
	if err := f.K8s.Get(context.Background(), key, &sec); !apierrors.IsNotFound(err) {
		t.Fatalf("the password secret outlived password mode: %v", err)
	}
	if got := coretest.Expect(t, f.CallAs(owner("team"), "POST", access+"/revoke-sessions", nil), 200, "revoke"); got["sessions_revoked_at"] == nil {
		t.Fatalf("revoke = %v", got)
	}

	domain := "/status/pages/" + pageID + "/domain"
	coretest.Expect(t, f.Call("team", apikeys.Automation, "PUT", domain, map[string]any{"domain": "status.example.com"}), 403, "API key domain")
	if body := coretest.Expect(t, f.CallAs(owner("team"), "PUT", domain, map[string]any{"domain": "not a host"}), 400, "bad domain"); fieldOf(body) != "domain" {
		t.Fatalf("bad domain = %v", body)
	}
	if got := coretest.Expect(t, f.CallAs(owner("team"), "PUT", domain, map[string]any{"domain": "Status.Example.com."}), 200, "domain"); got["domain"] != "status.example.com" {
		t.Fatalf("domain = %v", got)
	}
	if storedPage(t, f).Spec.CustomDomain != "status.example.com" {
		t.Fatal("the domain was not stored")
	}
	if got := coretest.Expect(t, f.CallAs(owner("team"), "PUT", domain, map[string]any{"domain": nil}), 200, "remove domain"); got["domain"] != nil {
		t.Fatalf("removed domain = %v", got)
	}
}

func TestLanguagesAndSubscribers(t *testing.T) {
	f, subs := newFixture(t)
	path := "/status/pages/" + pageID + "/languages"
	if got := coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "GET", path, nil), 200, "defaults"); got["default"] != "en" || len(got["enabled"].([]any)) != 0 {
		t.Fatalf("default languages = %v", got)
	}
	bad := coretest.Expect(t, f.Call("team", apikeys.Standard, "PUT", path, map[string]any{"translations": []any{map[string]any{"language": "x"}}}), 400, "bad tag")
	if fieldOf(bad) != "translations[0].language" {
		t.Fatalf("bad tag = %v", bad)
	}
	body := map[string]any{"default": "de", "enabled": []string{"de", "en"}, "translations": []any{map[string]any{"language": "de", "title": "Status der Dienste"}}}
	coretest.Expect(t, f.Call("team", apikeys.Standard, "PUT", path, body), 200, "put")
	got := coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "GET", path, nil), 200, "get")
	if got["default"] != "de" || got["translations"].([]any)[0].(map[string]any)["title"] != "Status der Dienste" {
		t.Fatalf("languages = %v", got)
	}

	list := coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "GET", "/status/pages/"+pageID+"/subscribers", nil), 200, "subscribers")
	if list["total"] != float64(0) || len(subs.asked) != 1 || subs.asked[0] != pageID {
		t.Fatalf("subscribers = %v, asked %v", list, subs.asked)
	}
	coretest.Expect(t, f.Call("other", apikeys.ReadOnly, "GET", "/status/pages/"+pageID+"/subscribers", nil), 404, "another workspace")
}

// TestSSOAccess: mode sso takes its rules in sso (an extension), shows them
// on GET, drops them for other modes, and is refused with the missing
// setting on an install without a provider.
func TestSSOAccess(t *testing.T) {
	f, _ := newFixture(t)
	access := "/status/pages/" + pageID + "/access"
	rules := map[string]any{"allowed_email_domains": []string{"example.com"}, "allowed_emails": []string{"a@partner.example"}, "allowed_groups": []string{"sre"}}
	if body := coretest.Expect(t, f.CallAs(owner("team"), "PUT", access, map[string]any{"mode": "sso"}), 400, "no rules"); fieldOf(body) != "sso" {
		t.Fatalf("no rules = %v", body)
	}
	if body := coretest.Expect(t, f.CallAs(owner("team"), "PUT", access, map[string]any{"mode": "sso", "sso": map[string]any{}}), 400, "empty rules"); fieldOf(body) != "sso" {
		t.Fatalf("empty rules = %v", body)
	}
	if body := coretest.Expect(t, f.CallAs(owner("team"), "PUT", access, map[string]any{"mode": "public", "sso": rules}), 400, "rules without sso"); fieldOf(body) != "sso" {
		t.Fatalf("rules without sso = %v", body)
	}
	set := coretest.Expect(t, f.CallAs(owner("team"), "PUT", access, map[string]any{"mode": "sso", "sso": rules}), 200, "sso")
	got := coretest.Expect(t, f.Call("team", apikeys.ReadOnly, "GET", access, nil), 200, "get sso")
	for _, body := range []map[string]any{set, got} {
		sso, _ := body["sso"].(map[string]any)
		if body["mode"] != "sso" || sso == nil || fmt.Sprint(sso["allowed_email_domains"]) != "[example.com]" ||
			fmt.Sprint(sso["allowed_emails"]) != "[a@partner.example]" || fmt.Sprint(sso["allowed_groups"]) != "[sre]" {
			t.Fatalf("sso access = %v", body)
		}
	}
	if a := storedPage(t, f).Spec.Access; a.Mode != monv1.AccessSSO || a.SSO == nil || a.SSO.AllowedGroups[0] != "sre" {
		t.Fatalf("stored access = %+v", a)
	}
	pub := coretest.Expect(t, f.CallAs(owner("team"), "PUT", access, map[string]any{"mode": "public"}), 200, "public")
	if pub["sso"] != nil || storedPage(t, f).Spec.Access.SSO != nil {
		t.Fatalf("sso rules outlived sso mode: %v", pub)
	}

	// An install without a provider.
	g := coretest.New(t, &monv1.StatusPage{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "status", UID: types.UID(pageID)},
		Spec: monv1.StatusPageSpec{Title: "Status", Slug: "acme-status", IsPublic: true}})
	New(g.Deps, nil, "https://status.example.net/", "single sign-on needs --oidc-issuer-url").Routes(g.Router)
	body := coretest.Expect(t, g.CallAs(owner("team"), "PUT", access, map[string]any{"mode": "sso", "sso": rules}), 400, "no provider")
	if fieldOf(body) != "mode" || !strings.Contains(fmt.Sprint(body), "--oidc-issuer-url") {
		t.Fatalf("no provider = %v", body)
	}
}
