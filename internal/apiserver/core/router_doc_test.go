package core

import (
	"net/http"
	"testing"

	"github.com/uptime-operator/uptime-operator/internal/apidoc"
)

// TestRouteTable checks that the table the document is built from takes
// method, path, access and feature from the registration and reports routes
// whose documentation is missing or omits their rate limit.
func TestRouteTable(t *testing.T) {
	rt := NewRouter(nil, RouterOptions{})
	ok := func(http.ResponseWriter, *http.Request) {}
	rt.Handle(http.MethodPost, "/things/{id}", ok, WithAccess(OwnerOnly), WithFeature("slo"),
		Doc(apidoc.Op{Tag: "Things", Summary: "Change a thing"}))
	rt.Handle(http.MethodGet, "/keyed/*", ok, Doc(apidoc.Op{Path: "/keyed/{key}", Tag: "Things", Summary: "A thing by key"}))
	rt.Public(http.MethodGet, "/open", ok, apidoc.Op{Tag: "Things", Summary: "Open"})
	rt.Handle(http.MethodGet, "/bare", ok)
	rt.Handle(http.MethodGet, "/limited", ok, WithLimit(rt.Limits.Export), Doc(apidoc.Op{Tag: "Things", Summary: "Limited"}))
	rt.SessionOnly("/account/*")

	ops := rt.Ops()
	if len(ops) != 10 {
		t.Fatalf("%d routes in the table, want 10", len(ops))
	}
	want := []apidoc.Op{
		{Method: "POST", Path: "/things/{id}", Access: apidoc.OwnerOnly, Feature: "slo"},
		{Method: "GET", Path: "/keyed/{key}", Access: apidoc.AnyKey},
		{Method: "GET", Path: "/open", Access: apidoc.Public},
		{Method: "GET", Path: "/bare", Access: apidoc.AnyKey},
		{Method: "GET", Path: "/limited", Access: apidoc.AnyKey},
		{Method: "GET", Path: "/account/{path}", Access: apidoc.SessionOnly},
	}
	for i, w := range want {
		o := ops[i]
		if o.Method != w.Method || o.Path != w.Path || o.Access != w.Access || o.Feature != w.Feature {
			t.Errorf("route %d = %s %s %s %q, want %s %s %s %q", i, o.Method, o.Path, o.Access, o.Feature, w.Method, w.Path, w.Access, w.Feature)
		}
	}
	u := rt.Undocumented()
	if len(u) != 2 || u[0] != "GET /bare: no Doc with a tag and a summary" || u[1] != "GET /limited: rate limited, but its Doc has no Limit" {
		t.Errorf("Undocumented() = %q", u)
	}
}
