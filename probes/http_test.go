package probes

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/netguard"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

func ptr[T any](v T) *T { return &v }

func testMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/code/{code}", func(w http.ResponseWriter, r *http.Request) {
		var c int
		fmt.Sscan(r.PathValue("code"), &c)
		w.WriteHeader(c)
	})
	mux.HandleFunc("/redirect/{n}", func(w http.ResponseWriter, r *http.Request) {
		var n int
		fmt.Sscan(r.PathValue("n"), &n)
		if n == 0 {
			fmt.Fprint(w, "landed")
			return
		}
		http.Redirect(w, r, fmt.Sprintf("/redirect/%d", n-1), http.StatusFound)
	})
	mux.HandleFunc("/text", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "Hello World from the Probe")
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(150 * time.Millisecond)
		fmt.Fprint(w, "slow")
	})
	mux.HandleFunc("/huge", func(w http.ResponseWriter, r *http.Request) {
		chunk := strings.Repeat("a", 64<<10)
		for i := 0; i < 64; i++ { // 4 MiB
			if _, err := fmt.Fprint(w, chunk); err != nil {
				return
			}
		}
		fmt.Fprint(w, "NEEDLE")
	})
	mux.HandleFunc("/json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Secret", "s3cr3t-value")
		fmt.Fprint(w, `{"data":{"items":[{"id":42,"name":"first"},{"id":7,"name":"second"}],"ok":true,"nil":null},"version":"1.2.3"}`)
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Method", r.Method)
		w.Header().Set("X-Auth", r.Header.Get("Authorization"))
		b := make([]byte, 100)
		n, _ := r.Body.Read(b)
		w.Write(b[:n])
	})
	return mux
}

func httpAssignment(url string, cfg monv1.HTTPConfig) probeapi.Assignment {
	return probeapi.Assignment{Type: probeapi.TypeHTTP, URL: url, TimeoutMs: 5000, Config: monv1.MonitorSpec{HTTP: &cfg}}
}

func TestHTTPStatusCodes(t *testing.T) {
	ts := httptest.NewServer(testMux())
	defer ts.Close()
	cases := []struct {
		code     int
		expected []int32
		want     probeapi.Status
	}{
		{200, nil, probeapi.StatusUp},
		{204, nil, probeapi.StatusUp},
		{304, nil, probeapi.StatusUp},
		{404, nil, probeapi.StatusDown},
		{500, nil, probeapi.StatusDown},
		{404, []int32{404}, probeapi.StatusUp},
		{200, []int32{201}, probeapi.StatusDown},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%d-%v", c.code, c.expected), func(t *testing.T) {
			res := run(t, httpAssignment(fmt.Sprintf("%s/code/%d", ts.URL, c.code), monv1.HTTPConfig{ExpectedStatusCodes: c.expected}), testEnv())
			wantStatus(t, res, c.want)
			if res.StatusCode == nil || *res.StatusCode != c.code {
				t.Fatalf("status code %v", res.StatusCode)
			}
			if c.want == probeapi.StatusDown && res.ErrorType != probeapi.ErrorHTTPStatus {
				t.Fatalf("error type %q", res.ErrorType)
			}
			if res.ID == "" || res.Region != "test" || res.CheckedAt.IsZero() || res.Timings == nil {
				t.Fatalf("identity not filled: %+v", res)
			}
		})
	}
}

func TestHTTPMethodHeadersBody(t *testing.T) {
	ts := httptest.NewServer(testMux())
	defer ts.Close()
	res := run(t, httpAssignment(ts.URL+"/echo", monv1.HTTPConfig{
		Method: "POST", Headers: probeapi.TextHeaders(map[string]string{"Authorization": "Bearer tok"}), Body: "payload",
		Assertions: []monv1.Assertion{
			{Source: "header", Property: "X-Method", Operator: "equals", Target: "POST"},
			{Source: "header", Property: "x-auth", Operator: "equals", Target: "Bearer tok"},
			{Source: "body", Operator: "equals", Target: "payload"},
		},
	}), testEnv())
	wantStatus(t, res, probeapi.StatusUp)
}

func TestHTTPRedirects(t *testing.T) {
	ts := httptest.NewServer(testMux())
	defer ts.Close()
	cases := []struct {
		hops      int
		max       *int32
		want      probeapi.Status
		wantCode  int
		errorType string
	}{
		{3, nil, probeapi.StatusUp, 200, ""},
		{5, nil, probeapi.StatusUp, 200, ""},
		{6, nil, probeapi.StatusDown, 0, ErrorRedirects},
		{2, ptr[int32](2), probeapi.StatusUp, 200, ""},
		{3, ptr[int32](2), probeapi.StatusDown, 0, ErrorRedirects},
		{1, ptr[int32](0), probeapi.StatusUp, 302, ""},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("hops%d", c.hops), func(t *testing.T) {
			res := run(t, httpAssignment(fmt.Sprintf("%s/redirect/%d", ts.URL, c.hops), monv1.HTTPConfig{MaxRedirects: c.max, Keyword: map[bool]string{true: "landed"}[c.wantCode == 200]}), testEnv())
			wantStatus(t, res, c.want)
			if res.ErrorType != c.errorType {
				t.Fatalf("error type %q want %q", res.ErrorType, c.errorType)
			}
			if c.wantCode != 0 && *res.StatusCode != c.wantCode {
				t.Fatalf("code %d want %d", *res.StatusCode, c.wantCode)
			}
		})
	}
}

func TestHTTPKeyword(t *testing.T) {
	ts := httptest.NewServer(testMux())
	defer ts.Close()
	url := ts.URL + "/text"
	wantStatus(t, run(t, httpAssignment(url, monv1.HTTPConfig{Keyword: "World"}), testEnv()), probeapi.StatusUp)
	res := run(t, httpAssignment(url, monv1.HTTPConfig{Keyword: "world"}), testEnv())
	wantStatus(t, res, probeapi.StatusDown)
	if res.ErrorType != probeapi.ErrorKeyword {
		t.Fatalf("error type %q", res.ErrorType)
	}
	wantStatus(t, run(t, httpAssignment(url, monv1.HTTPConfig{Keyword: "WORLD", KeywordCaseInsensitive: true}), testEnv()), probeapi.StatusUp)
}

func TestHTTPResponseTime(t *testing.T) {
	ts := httptest.NewServer(testMux())
	defer ts.Close()
	url := ts.URL + "/slow"
	res := run(t, httpAssignment(url, monv1.HTTPConfig{MaxResponseTimeMs: ptr[int32](50)}), testEnv())
	wantStatus(t, res, probeapi.StatusDown)
	if res.ErrorType != probeapi.ErrorResponseTime || res.ResponseTimeMs < 150 {
		t.Fatalf("%+v", res)
	}
	wantStatus(t, run(t, httpAssignment(url, monv1.HTTPConfig{MaxResponseTimeMs: ptr[int32](5000), DegradedResponseTimeMs: ptr[int32](50)}), testEnv()), probeapi.StatusDegraded)
	wantStatus(t, run(t, httpAssignment(url, monv1.HTTPConfig{MaxResponseTimeMs: ptr[int32](5000), DegradedResponseTimeMs: ptr[int32](4000)}), testEnv()), probeapi.StatusUp)
	// The check timeout also bounds a slow server.
	a := httpAssignment(url, monv1.HTTPConfig{})
	a.TimeoutMs = 50
	res = run(t, a, testEnv())
	wantStatus(t, res, probeapi.StatusDown)
	if res.ErrorType != probeapi.ErrorTimeout {
		t.Fatalf("error type %q: %s", res.ErrorType, res.ErrorMessage)
	}
}

func TestHTTPHugeBodyBounded(t *testing.T) {
	ts := httptest.NewServer(testMux())
	defer ts.Close()
	res := run(t, httpAssignment(ts.URL+"/huge", monv1.HTTPConfig{Keyword: "NEEDLE"}), testEnv())
	wantStatus(t, res, probeapi.StatusDown)
	var d httpDetails
	json.Unmarshal(res.Details, &d)
	if d.BodyBytes != defaultMaxResponseBytes || !d.BodyTruncated {
		t.Fatalf("details %+v", d)
	}
	res = run(t, httpAssignment(ts.URL+"/huge", monv1.HTTPConfig{MaxResponseBytes: ptr[int32](1000)}), testEnv())
	wantStatus(t, res, probeapi.StatusUp)
	json.Unmarshal(res.Details, &d)
	if d.BodyBytes != 1000 {
		t.Fatalf("read %d bytes", d.BodyBytes)
	}
}

func TestHTTPTLS(t *testing.T) {
	ts := httptest.NewTLSServer(testMux())
	defer ts.Close()
	res := run(t, httpAssignment(ts.URL+"/text", monv1.HTTPConfig{}), tlsEnv(ts))
	wantStatus(t, res, probeapi.StatusUp)
	if res.TLS == nil || res.TLS.NotAfter.Before(time.Now()) || res.TLS.Issuer == "" {
		t.Fatalf("tls info %+v", res.TLS)
	}
	if res.Timings.TLSMs <= 0 {
		t.Fatalf("tls timing %+v", res.Timings)
	}
	// Without the test CA the certificate is untrusted: down, error type tls.
	res = run(t, httpAssignment(ts.URL+"/text", monv1.HTTPConfig{}), testEnv())
	wantStatus(t, res, probeapi.StatusDown)
	if res.ErrorType != probeapi.ErrorTLS {
		t.Fatalf("error type %q: %s", res.ErrorType, res.ErrorMessage)
	}
}

func TestHTTPBlockedWithoutAllowPrivate(t *testing.T) {
	ts := httptest.NewServer(testMux())
	defer ts.Close()
	res := run(t, httpAssignment(ts.URL+"/text", monv1.HTTPConfig{}), &Env{Guard: netguard.Guard{}})
	wantStatus(t, res, probeapi.StatusBlocked)
	// A name that resolves to loopback is refused at dial time.
	res = run(t, httpAssignment("http://localhost:"+strings.Split(ts.URL, ":")[2]+"/text", monv1.HTTPConfig{}), &Env{})
	wantStatus(t, res, probeapi.StatusBlocked)
}

func TestHTTPConnectionRefused(t *testing.T) {
	ts := httptest.NewServer(testMux())
	url := ts.URL
	ts.Close()
	res := run(t, httpAssignment(url, monv1.HTTPConfig{}), testEnv())
	wantStatus(t, res, probeapi.StatusDown)
	if res.ErrorType != probeapi.ErrorRefused {
		t.Fatalf("error type %q", res.ErrorType)
	}
}

func TestAssertions(t *testing.T) {
	ts := httptest.NewServer(testMux())
	defer ts.Close()
	type tc struct {
		a    monv1.Assertion
		pass bool
	}
	A := func(src, prop, op, target string) monv1.Assertion {
		return monv1.Assertion{Source: monv1.AssertionSource(src), Property: prop, Operator: monv1.AssertionOperator(op), Target: target}
	}
	cases := []tc{
		{A("status_code", "", "equals", "200"), true},
		{A("status_code", "", "not_equals", "200"), false},
		{A("status_code", "", "greater_or_equal", "200"), true},
		{A("status_code", "", "less_than", "300"), true},
		{A("status_code", "", "greater_than", "200"), false},
		{A("status_code", "", "less_or_equal", "199"), false},
		{A("header", "Content-Type", "contains", "json"), true},
		{A("header", "Content-Type", "not_contains", "xml"), true},
		{A("header", "X-Missing", "not_exists", ""), true},
		{A("header", "X-Missing", "exists", ""), false},
		{A("header", "X-Secret", "equals", "nope"), false},
		{A("header", "content-type", "matches", "^application/(json|xml)$"), true},
		{A("json_body", "$.data.items[0].id", "equals", "42"), true},
		{A("json_body", "$.data.items[-1].name", "equals", "second"), true},
		{A("json_body", "$.data.items[1].id", "less_than", "10"), true},
		{A("json_body", "$.data.ok", "equals", "true"), true},
		{A("json_body", "$.data.nil", "equals", "null"), true},
		{A("json_body", "$.data.nil", "exists", ""), true},
		{A("json_body", "$.data.items[5]", "not_exists", ""), true},
		{A("json_body", "$['version']", "matches", `^\d+\.\d+\.\d+$`), true},
		{A("json_body", "data.items", "contains", `"name":"first"`), true},
		{A("json_body", "$.version", "greater_than", "1"), false},
		{A("json_body", "$.nope", "equals", "x"), false},
		{A("json_body", "$.data.items[*].name", "equals", `["first","second"]`), true},
		{A("json_body", "$.data.items[*].name", "contains", `"second"`), true},
		{A("json_body", "$.data.items.*.id", "not_contains", "13"), true},
		{A("json_body", "$.data.items[*].missing", "not_exists", ""), true},
		{A("json_body", "$.data.items[*].id", "exists", ""), true},
		{A("json_body", "$.data.*", "contains", "true"), true},
		{A("body", "", "contains", `"ok":true`), true},
		{A("body", "", "not_contains", "error"), true},
		{A("body", "", "matches", `"id":\s*42`), true},
		{A("body", "", "matches", `(`), false},
		{A("response_time", "", "less_than", "5000"), true},
		{A("response_time", "", "greater_than", "100000"), false},
		{A("bogus", "", "equals", "1"), false},
		{A("status_code", "", "bogus", "1"), false},
	}
	for i, c := range cases {
		t.Run(fmt.Sprintf("%d-%s-%s", i, c.a.Source, c.a.Operator), func(t *testing.T) {
			a := httpAssignment(ts.URL+"/json", monv1.HTTPConfig{Assertions: []monv1.Assertion{c.a}})
			a.Type = probeapi.TypeAPI
			res := run(t, a, testEnv())
			want := map[bool]probeapi.Status{true: probeapi.StatusUp, false: probeapi.StatusDown}[c.pass]
			wantStatus(t, res, want)
			if strings.Contains(res.ErrorMessage, "s3cr3t") || strings.Contains(string(res.Details), "s3cr3t") {
				t.Fatalf("header value leaked: %s %s", res.ErrorMessage, res.Details)
			}
		})
	}
}
