package core

import (
	"net/http"
	"testing"

	"github.com/uptime-operator/uptime-operator/internal/apidoc"
)

// TestRouteTable checks that the table the document is built from takes
// method, path, access, feature and rate limit from the registration and
// reports routes whose documentation is missing or writes a limit in prose.
func TestRouteTable(t *testing.T) {
	rt := NewRouter(nil, RouterOptions{})
	ok := func(http.ResponseWriter, *http.Request) {}
	rt.Handle(http.MethodPost, "/things/{id}", ok, WithAccess(OwnerOnly), WithFeature("slo"),
		Doc(apidoc.Op{Tag: "Things", Summary: "Change a thing"}))
	rt.Handle(http.MethodGet, "/keyed/*", ok, Doc(apidoc.Op{Path: "/keyed/{key}", Tag: "Things", Summary: "A thing by key"}))
	rt.Public(http.MethodGet, "/open", ok, apidoc.Op{Tag: "Things", Summary: "Open"})
	rt.Handle(http.MethodGet, "/bare", ok)
	rt.Handle(http.MethodGet, "/limited", ok, WithLimit(rt.Limits.Export), Doc(apidoc.Op{Tag: "Things", Summary: "Limited"}))
	rt.Handle(http.MethodGet, "/prose", ok, Doc(apidoc.Op{Tag: "Things", Summary: "Limited in prose", Limit: "5 per minute"}))
	rt.SessionOnly("/account/*")

	ops := rt.Ops()
	if len(ops) != 11 {
		t.Fatalf("%d routes in the table, want 11", len(ops))
	}
	want := []apidoc.Op{
		{Method: "POST", Path: "/things/{id}", Access: apidoc.OwnerOnly, Feature: "slo"},
		{Method: "GET", Path: "/keyed/{key}", Access: apidoc.AnyKey},
		{Method: "GET", Path: "/open", Access: apidoc.Public},
		{Method: "GET", Path: "/bare", Access: apidoc.AnyKey},
		{Method: "GET", Path: "/limited", Access: apidoc.AnyKey},
		{Method: "GET", Path: "/prose", Access: apidoc.AnyKey},
		{Method: "GET", Path: "/account/{path}", Access: apidoc.SessionOnly},
	}
	for i, w := range want {
		o := ops[i]
		if o.Method != w.Method || o.Path != w.Path || o.Access != w.Access || o.Feature != w.Feature {
			t.Errorf("route %d = %s %s %s %q, want %s %s %s %q", i, o.Method, o.Path, o.Access, o.Feature, w.Method, w.Path, w.Access, w.Feature)
		}
	}
	if got, want := ops[4].Limit, "20 per 15 minutes per workspace (plain-text 429)"; got != want {
		t.Errorf("x-rate-limit of /limited = %q, want %q (from its limiter)", got, want)
	}
	u := rt.Undocumented()
	if len(u) != 2 || u[0] != "GET /bare: no Doc with a tag and a summary" || u[1] != "GET /prose: a rate limit in prose; declare its limiters (WithLimit, Public)" {
		t.Errorf("Undocumented() = %q", u)
	}
}
