package kubectlplugin

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestRefusalsNameTheRole: whatever command kube-apiserver refuses (403,
// a Kubernetes Status), the error says which role the user needs, as
// docs/kubectl.md promises; on 6d85b7e only `check` did.
func TestRefusalsNameTheRole(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,`+
			`"message":"uptimeincidents.api.uptime-operator.io is forbidden: User \"alice\" cannot create resource"}`)
	}))
	defer ts.Close()
	c := &client{http: ts.Client(), host: ts.URL, namespace: "shop", out: io.Discard}
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		run  func() error
		want string
	}{
		{"ack", func() error { return runAck(ctx, c, []string{"inc-1"}) }, "acknowledging an incident needs create on uptimeincidents/acknowledge (the edit role)"},
		{"resolve", func() error { return runResolve(ctx, c, []string{"inc-1"}) }, "resolving an incident needs create on uptimeincidents/resolve (the edit role)"},
		{"note", func() error { return runNote(ctx, c, []string{"inc-1", "rolled", "back"}) }, "adding a note to an incident needs create on uptimeincidents/notes (the edit role)"},
		{"check", func() error { return runCheck(ctx, c, []string{"web"}) }, "reading uptimemonitors needs get and list on it (the view role)"},
		{"page", func() error { return runPage(ctx, c, []string{"main"}) }, "uptime-operator-viewer"},
	} {
		err := tc.run()
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "forbidden") {
			t.Errorf("%s: %v, want it to say %q and keep the server's message", tc.name, err, tc.want)
		}
	}
	if got := neededRole(http.MethodPost, "/uptimechecks"); got != "running a check needs create on uptimechecks (the edit role)" {
		t.Errorf("check create: %q", got)
	}
}
