package probes

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

// recorder is a loopback server that notes the headers each request
// brought, by path.
type recorder struct {
	*httptest.Server
	mu   sync.Mutex
	seen map[string][]http.Header
}

func newRecorder(t *testing.T, h func(rec *recorder, w http.ResponseWriter, r *http.Request)) *recorder {
	t.Helper()
	rec := &recorder{seen: map[string][]http.Header{}}
	rec.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.mu.Lock()
		rec.seen[r.URL.Path] = append(rec.seen[r.URL.Path], r.Header.Clone())
		rec.mu.Unlock()
		h(rec, w, r)
	}))
	t.Cleanup(rec.Close)
	return rec
}

// got returns the values of header name that requests to path carried.
func (rec *recorder) got(path, name string) []string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var out []string
	for _, h := range rec.seen[path] {
		out = append(out, h.Values(name)...)
	}
	return out
}

func (rec *recorder) requests(path string) int {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return len(rec.seen[path])
}

func origin(t *testing.T, raw string) string {
	t.Helper()
	o, ok := probeapi.Origin(raw)
	if !ok {
		t.Fatalf("no origin in %q", raw)
	}
	return o
}

// A Secret-resolved header goes only to its origin: a redirect to another
// origin (here the same loopback host on another port, which net/http's
// rule of "same host or subdomain" lets Authorization follow) drops every
// one of them, X-Api-Key included, and a redirect back brings them again.
// Literal headers follow redirects as before.
func TestCredentialsStayOnTheirOrigin(t *testing.T) {
	var home *recorder
	away := newRecorder(t, func(_ *recorder, w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/bounce" {
			http.Redirect(w, r, home.URL+"/back", http.StatusFound)
			return
		}
		fmt.Fprint(w, "landed")
	})
	home = newRecorder(t, func(_ *recorder, w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/leave":
			http.Redirect(w, r, away.URL+"/landing", http.StatusFound)
		case "/roundtrip":
			http.Redirect(w, r, away.URL+"/bounce", http.StatusFound)
		case "/stay":
			http.Redirect(w, r, "/here", http.StatusFound)
		default:
			fmt.Fprint(w, "landed")
		}
	})
	a := func(path string) probeapi.Assignment {
		a := httpAssignment(home.URL+path, monv1.HTTPConfig{Keyword: "landed", Headers: probeapi.TextHeaders(map[string]string{
			"X-Api-Key": "key-from-secret", "Authorization": "Bearer token-from-secret", "X-Tenant": "acme",
		})})
		a.Credentials = []probeapi.Credential{
			{Header: "X-Api-Key", Origin: origin(t, home.URL)},
			{Header: "Authorization", Origin: origin(t, home.URL)},
		}
		return a
	}

	wantStatus(t, run(t, a("/leave"), testEnv()), probeapi.StatusUp)
	if got := home.got("/leave", "X-Api-Key"); len(got) != 1 || got[0] != "key-from-secret" {
		t.Fatalf("the origin got X-Api-Key %q, want the credential", got)
	}
	for _, h := range []string{"X-Api-Key", "Authorization"} {
		if got := away.got("/landing", h); len(got) != 0 {
			t.Fatalf("the redirect's origin got %s %q", h, got)
		}
	}
	if got := away.got("/landing", "X-Tenant"); len(got) != 1 {
		t.Fatalf("a literal header did not follow the redirect: %q", got)
	}

	wantStatus(t, run(t, a("/roundtrip"), testEnv()), probeapi.StatusUp)
	if got := away.got("/bounce", "X-Api-Key"); len(got) != 0 {
		t.Fatalf("the other origin got X-Api-Key %q", got)
	}
	if got := home.got("/back", "X-Api-Key"); len(got) != 1 {
		t.Fatalf("back on its origin the request lost its credential: %q", got)
	}

	wantStatus(t, run(t, a("/stay"), testEnv()), probeapi.StatusUp)
	if got := home.got("/here", "Authorization"); len(got) != 1 {
		t.Fatalf("a redirect within the origin dropped the credential: %q", got)
	}
}

// An agent does not send a credential to a URL of another origin than the
// one it was stored for, whatever the assignment's URL says: the check
// fails with credential_origin and the target sees no request.
func TestCredentialRefusedForAnotherOrigin(t *testing.T) {
	stored := newRecorder(t, func(_ *recorder, w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "ok") })
	other := newRecorder(t, func(_ *recorder, w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "ok") })
	a := httpAssignment(other.URL+"/", monv1.HTTPConfig{Headers: probeapi.TextHeaders(map[string]string{"X-Api-Key": "key-from-secret"})})
	a.Credentials = []probeapi.Credential{{Header: "X-Api-Key", Origin: origin(t, stored.URL)}}
	res := run(t, a, testEnv())
	wantStatus(t, res, probeapi.StatusDown)
	if res.ErrorType != probeapi.ErrorCredentialOrigin || !strings.Contains(res.ErrorMessage, "header X-Api-Key holds a credential stored for "+origin(t, stored.URL)) {
		t.Fatalf("error %s: %s", res.ErrorType, res.ErrorMessage)
	}
	if n := other.requests("/"); n != 0 {
		t.Fatalf("the other origin got %d requests", n)
	}
	// The same assignment bound to its own origin runs.
	a.Credentials[0].Origin = origin(t, other.URL)
	wantStatus(t, run(t, a, testEnv()), probeapi.StatusUp)
	if got := other.got("/", "X-Api-Key"); len(got) != 1 {
		t.Fatalf("the origin got X-Api-Key %q", got)
	}
}

// A multistep step sends its credentials to the origin of its URL as
// sent, after {{variables}} from earlier responses: step 0 (moved to a
// server of someone's choosing) answers base=<their host>, and step 1's
// stored Authorization does not go there.
func TestMultistepCredentialFollowsTheTemplatedHost(t *testing.T) {
	attacker := newRecorder(t, func(_ *recorder, w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, `{"ok":true}`) })
	api := newRecorder(t, func(_ *recorder, w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, `{"ok":true}`) })
	entry := newRecorder(t, func(_ *recorder, w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, `{"base":%q,"id":"42"}`, attacker.URL)
	})
	steps := func(url string) []monv1.MultistepStep {
		return []monv1.MultistepStep{
			{Name: "discover", URL: entry.URL + "/", Extract: []monv1.Extraction{
				{Variable: "base", Source: "json_body", Property: "$.base"},
				{Variable: "id", Source: "json_body", Property: "$.id"}}},
			{Name: "orders", URL: url, Headers: probeapi.TextHeaders(map[string]string{"Authorization": "Bearer prod-billing-token"})},
		}
	}
	one := 1
	for _, c := range []struct {
		name, url, bound string
	}{
		{"a templated host binds to no origin", "{{base}}/orders", ""},
		{"a template that resolves to another host", "{{base}}/orders", origin(t, api.URL)},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := probeapi.Assignment{Type: probeapi.TypeMultistep, TimeoutMs: 5000, Config: monv1.MonitorSpec{Multistep: &monv1.MultistepConfig{Steps: steps(c.url)}},
				Credentials: []probeapi.Credential{{Step: &one, Header: "Authorization", Origin: c.bound}}}
			res := run(t, a, testEnv())
			wantStatus(t, res, probeapi.StatusDown)
			if res.ErrorType != probeapi.ErrorCredentialOrigin || !strings.Contains(res.ErrorMessage, "step 2 (orders): header Authorization holds a credential") {
				t.Fatalf("error %s: %s", res.ErrorType, res.ErrorMessage)
			}
			if n := attacker.requests("/orders"); n != 0 {
				t.Fatalf("the templated host got %d requests", n)
			}
			var d multistepDetails
			_ = json.Unmarshal(res.Details, &d)
			if len(d.Steps) != 2 || d.Steps[1].Passed || !strings.Contains(d.Steps[1].Error, "credential") {
				t.Fatalf("details %+v", d)
			}
		})
	}
	// A literal origin with a templated path keeps working.
	a := probeapi.Assignment{Type: probeapi.TypeMultistep, TimeoutMs: 5000, Config: monv1.MonitorSpec{Multistep: &monv1.MultistepConfig{Steps: steps(api.URL + "/orders/{{id}}")}},
		Credentials: []probeapi.Credential{{Step: &one, Header: "Authorization", Origin: origin(t, api.URL)}}}
	wantStatus(t, run(t, a, testEnv()), probeapi.StatusUp)
	if got := api.got("/orders/42", "Authorization"); len(got) != 1 || got[0] != "Bearer prod-billing-token" {
		t.Fatalf("the stored origin got Authorization %q", got)
	}
	if got := entry.got("/", "Authorization"); len(got) != 0 {
		t.Fatalf("step 0 got step 1's credential: %q", got)
	}
}

// An MCP check refuses to send a credential to another origin than its own.
func TestMCPCredentialOrigin(t *testing.T) {
	ts := startMCP(t)
	a := probeapi.Assignment{Type: probeapi.TypeMCP, URL: ts.URL + "/mcp", TimeoutMs: 5000, Config: monv1.MonitorSpec{
		MCP: &monv1.MCPConfig{Headers: probeapi.TextHeaders(map[string]string{"X-Api-Key": "k"})}},
		Credentials: []probeapi.Credential{{Header: "X-Api-Key", Origin: origin(t, ts.URL)}}}
	wantStatus(t, run(t, a, tlsEnv(ts)), probeapi.StatusUp)
	a.Credentials[0].Origin = "https://api.example.com:443"
	res := run(t, a, tlsEnv(ts))
	wantStatus(t, res, probeapi.StatusDown)
	if res.ErrorType != probeapi.ErrorCredentialOrigin {
		t.Fatalf("error %s: %s", res.ErrorType, res.ErrorMessage)
	}
}

func TestOrigin(t *testing.T) {
	for raw, want := range map[string]string{
		"https://API.example.com/x":       "https://api.example.com:443",
		"https://api.example.com:443/":    "https://api.example.com:443",
		"http://api.example.com":          "http://api.example.com:80",
		"http://[::1]:8080/a":             "http://[::1]:8080",
		"{{base}}/orders":                 "",
		"https://{{tenant}}.example.com/": "",
		"https://api.example.com:{{p}}/":  "",
		"ftp://api.example.com/":          "",
		"https://api.example.com/{{id}}":  "https://api.example.com:443",
	} {
		got, _ := probeapi.Origin(raw)
		if got != want {
			t.Errorf("Origin(%q) = %q, want %q", raw, got, want)
		}
	}
}

// A multistep step's secrets stand for {{name}} in its headers and body:
// the login step sends the password to its own origin, a 307 redirect to
// another origin (which would send the body again) is refused before it is
// followed, a header holding a secret is dropped on a redirect to another
// origin, the URL is never templated with a secret, and no secret appears
// in the result.
func TestMultistepSecretsStayOnTheirOrigin(t *testing.T) {
	away := newRecorder(t, func(_ *recorder, w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, `{"ok":true}`) })
	var bodies []string
	var mu sync.Mutex
	home := newRecorder(t, func(_ *recorder, w http.ResponseWriter, r *http.Request) {
		b := make([]byte, 512)
		n, _ := r.Body.Read(b)
		mu.Lock()
		bodies = append(bodies, r.URL.Path+" "+string(b[:n]))
		mu.Unlock()
		switch r.URL.Path {
		case "/login":
			fmt.Fprint(w, `{"session":"s-1"}`)
		case "/login-elsewhere":
			http.Redirect(w, r, away.URL+"/login", http.StatusTemporaryRedirect)
		case "/profile-elsewhere":
			http.Redirect(w, r, away.URL+"/profile", http.StatusFound)
		default:
			fmt.Fprint(w, `{"ok":true}`)
		}
	})
	zero := 0
	login := func(path string) probeapi.Assignment {
		return probeapi.Assignment{Type: probeapi.TypeMultistep, TimeoutMs: 5000, Config: monv1.MonitorSpec{Multistep: &monv1.MultistepConfig{Steps: []monv1.MultistepStep{{
			Name: "login", Method: "POST", URL: home.URL + path + "?u={{pw}}",
			Headers: probeapi.TextHeaders(map[string]string{"X-Pin": "{{pin}}"}),
			Body:    `{"user":"ops","password":"{{pw}}"}`,
			Secrets: probeapi.TextHeaders(map[string]string{"pw": "hunter2-from-secret", "pin": "4711"}),
		}}}}, Credentials: []probeapi.Credential{
			{Step: &zero, Header: probeapi.SecretVariable("pw"), Origin: origin(t, home.URL)},
			{Step: &zero, Header: probeapi.SecretVariable("pin"), Origin: origin(t, home.URL)},
		}}
	}

	res := run(t, login("/login"), testEnv())
	wantStatus(t, res, probeapi.StatusUp)
	mu.Lock()
	got := strings.Join(bodies, "\n")
	mu.Unlock()
	if !strings.Contains(got, `/login {"user":"ops","password":"hunter2-from-secret"}`) {
		t.Fatalf("the login step's body: %s", got)
	}
	if pins := home.got("/login", "X-Pin"); len(pins) != 1 || pins[0] != "4711" {
		t.Fatalf("X-Pin %q", pins)
	}
	raw, _ := json.Marshal(res)
	if strings.Contains(string(raw), "hunter2") || strings.Contains(string(raw), "4711") {
		t.Fatalf("a secret in the result: %s", raw)
	}

	res = run(t, login("/login-elsewhere"), testEnv())
	wantStatus(t, res, probeapi.StatusDown)
	if res.ErrorType != probeapi.ErrorCredentialOrigin || !strings.Contains(res.ErrorMessage, "the body holds a credential stored for "+origin(t, home.URL)) {
		t.Fatalf("error %s: %s", res.ErrorType, res.ErrorMessage)
	}
	if n := away.requests("/login"); n != 0 {
		t.Fatalf("the other origin got the login %d times", n)
	}

	// A 302 turns the POST into a GET without body: the header holding a
	// secret is dropped, the rest follows.
	a := login("/profile-elsewhere")
	a.Config.Multistep.Steps[0].Body = ""
	wantStatus(t, run(t, a, testEnv()), probeapi.StatusUp)
	if pins := away.got("/profile", "X-Pin"); len(pins) != 0 {
		t.Fatalf("the other origin got X-Pin %q", pins)
	}
	if n := away.requests("/profile"); n != 1 {
		t.Fatalf("the redirect was not followed: %d", n)
	}

	// Bound to another origin, the step is not sent at all.
	a = login("/login")
	a.Credentials[0].Origin = origin(t, away.URL)
	res = run(t, a, testEnv())
	if res.ErrorType != probeapi.ErrorCredentialOrigin || !strings.Contains(res.ErrorMessage, "secret {{pw}} holds a credential") {
		t.Fatalf("error %s: %s", res.ErrorType, res.ErrorMessage)
	}
}
