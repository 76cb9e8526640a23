//go:build chaos

package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apikeys"
	"github.com/uptime-operator/uptime-operator/internal/manager"
	"github.com/uptime-operator/uptime-operator/internal/plans"
	"github.com/uptime-operator/uptime-operator/internal/testenv"
)

// TestRESTFuzz sends malformed bodies, parameters and headers to every
// operation of docs/openapi.json on the real REST server (the manager's
// direct-listener handler over loopback TCP, SQLite store, envtest
// kube-apiserver) and counts the answers by class. No answer may be a 5xx or
// a panic, and every 4xx must have the error shape of docs/rest-api.md: a
// JSON object with a non-empty string `error`, an upper-case `code` when one
// is given, `errors` [{field, message}] with VALIDATION_ERROR, and for 429
// either that or the documented plain text, with Retry-After.
func TestRESTFuzz(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	spec := loadSpec(t)
	env := startEnv(t, manager.Options{Store: filepath.Join(t.TempDir(), "uptime.db"), DefaultPlan: "pro"})

	ns := "chaos"
	for _, code := range []string{"eu-1", "us-1"} {
		must(t, env.Client.Create(ctx, &monv1.ProbeRegion{ObjectMeta: metav1.ObjectMeta{Name: code}}))
	}
	must(t, env.Client.Create(ctx, &monv1.Plan{ObjectMeta: metav1.ObjectMeta{Name: "pro"}, Spec: monv1.PlanSpec{Features: plans.AllFeatures()}}))
	must(t, env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{monv1.PlanLabel: "pro"}}}))
	// Several keys per level keep the per-key limit (1200 a minute) from
	// turning most of the run into 429s.
	levels := []apikeys.Level{apikeys.ReadOnly, apikeys.Standard, apikeys.Automation}
	var keys []string
	for i := 0; i < 8; i++ {
		for _, l := range levels {
			full, _, err := apikeys.Create(ctx, env.Client, ns, fmt.Sprintf("%s %d", l, i), l)
			must(t, err)
			keys = append(keys, full)
		}
	}

	var panics atomic.Int64
	var panicSample atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				panics.Add(1)
				buf := make([]byte, 4096)
				panicSample.Store(fmt.Sprintf("%s %s: %v\n%s", r.Method, r.URL, p, buf[:runtime.Stack(buf, false)]))
				w.WriteHeader(http.StatusInternalServerError)
			}
		}()
		env.Manager.Handler().ServeHTTP(w, r)
	}))
	defer srv.Close()
	c := &fuzzClient{base: srv.URL}

	// Wait until the cache serves the keys, then make a monitor so that
	// operations on {id} reach past the lookup.
	deadline := time.Now().Add(30 * time.Second)
	for c.send(t, "GET", "/automation/whoami", nil, http.Header{"Authorization": {"Bearer " + keys[1]}}).status != http.StatusOK {
		if time.Now().After(deadline) {
			t.Fatal("the API keys were not served within 30s")
		}
		time.Sleep(200 * time.Millisecond)
	}
	var monitorIDs []string
	for i := 0; i < 3; i++ {
		res := c.send(t, "POST", "/monitors", []byte(fmt.Sprintf(`{"name":"chaos %d","url":"https://chaos-%d.invalid/"}`, i, i)),
			http.Header{"Authorization": {"Bearer " + keys[1]}, "Content-Type": {"application/json"}})
		var m struct {
			ID string `json:"id"`
		}
		if res.status != http.StatusCreated || json.Unmarshal(res.body, &m) != nil || m.ID == "" {
			t.Fatalf("create monitor: %d %s", res.status, res.body)
		}
		monitorIDs = append(monitorIDs, m.ID)
	}

	classes := map[string]int{}
	var shapeBad []string
	codesOutsideSpec := map[string]int{}
	specCodes := specErrorCodes(t)
	requests, pages := 0, 0
	ops := spec.operations()
	for oi, op := range ops {
		for vi, v := range op.variants(spec, monitorIDs[oi%len(monitorIDs)]) {
			if ctx.Err() != nil {
				t.Fatal("the fuzz run exceeded its 10 minute bound")
			}
			h := v.header.Clone()
			if h == nil {
				h = http.Header{}
			}
			if _, set := h["Authorization"]; !set {
				h.Set("Authorization", "Bearer "+keys[(oi+vi)%len(keys)])
			}
			res := c.send(t, op.method, v.path, v.body, h)
			requests++
			classes[res.class()]++
			htmlPage := op.page && strings.HasPrefix(res.header.Get("Content-Type"), "text/html")
			if res.status >= 400 && res.status < 500 && op.method != http.MethodHead && !htmlPage {
				// HEAD answers carry no body to judge.
				if problem := errorShapeProblem(res); problem != "" {
					shapeBad = append(shapeBad, fmt.Sprintf("%s %s → %d: %s (body %.200q)", op.method, v.path, res.status, problem, res.body))
				} else if code := res.code(); code != "" && !specCodes[code] {
					codesOutsideSpec[code]++
				}
			}
			if htmlPage && res.status >= 400 && res.status < 500 {
				pages++
			}
			if res.status >= 500 || res.err != nil {
				shapeBad = append(shapeBad, fmt.Sprintf("%s %.300s → %d %v (body %.200q)", op.method, v.path, res.status, res.err, res.body))
			}
		}
	}
	if len(shapeBad) > 0 {
		f := filepath.Join(os.TempDir(), "uptime-operator-chaos-fuzz.txt")
		_ = os.WriteFile(f, []byte(strings.Join(shapeBad, "\n")+"\n"), 0o644)
		t.Logf("every bad answer: %s", f)
	}
	for i, s := range shapeBad {
		if i == 30 {
			t.Logf("… and %d more", len(shapeBad)-30)
			break
		}
		t.Log(s)
	}
	if p, _ := panicSample.Load().(string); p != "" {
		t.Log("first panic:", p)
	}
	t.Logf("codes outside the spec's table: %v; 4xx answered as an HTML page by browser pages: %d", codesOutsideSpec, pages)
	record(t, "operations fuzzed", fmt.Sprintf("%d (%d requests)", len(ops), requests), fmt.Sprintf("%d documented", len(ops)), len(ops) > 0)
	record(t, "answers by class", fmt.Sprintf("2xx %d, 3xx %d, 4xx %d, 5xx %d, no answer %d", classes["2xx"], classes["3xx"], classes["4xx"], classes["5xx"], classes["error"]), "5xx 0, no answer 0", classes["5xx"] == 0 && classes["error"] == 0)
	recordCount(t, "handler panics", int(panics.Load()), 0)
	recordCount(t, "4xx not in the error shape", len(shapeBad)-classes["5xx"]-classes["error"], 0)
}

// fuzzClient sends each request from its own loopback address (127.0.x.y)
// over a new connection, so per-address limits and the invalid-key block do
// not make one request's answer depend on the ones before it.
type fuzzClient struct {
	base string
	seq  atomic.Uint32
}

type answer struct {
	status int
	header http.Header
	body   []byte
	err    error
}

func (a answer) class() string {
	switch {
	case a.err != nil:
		return "error"
	case a.status >= 500:
		return "5xx"
	case a.status >= 400:
		return "4xx"
	case a.status >= 300:
		return "3xx"
	default:
		return "2xx"
	}
}

func (a answer) code() string {
	var e struct {
		Code string `json:"code"`
	}
	_ = json.Unmarshal(a.body, &e)
	return e.Code
}

func (c *fuzzClient) send(t *testing.T, method, path string, body []byte, h http.Header) answer {
	n := c.seq.Add(1)
	local := &net.TCPAddr{IP: net.IPv4(127, byte(1+(n>>16)%250), byte(n>>8), byte(n))}
	// Large bodies ask first (Expect: 100-continue), as a careful client
	// does: a handler that answers without reading the body then does not
	// reset the connection under a body it never wanted.
	tr := &http.Transport{DisableKeepAlives: true, ExpectContinueTimeout: 5 * time.Second, DialContext: (&net.Dialer{LocalAddr: local, Timeout: 5 * time.Second}).DialContext}
	defer tr.CloseIdleConnections()
	cl := &http.Client{Transport: tr, Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		// A path the client itself refuses is not sent; it says nothing
		// about the server.
		return answer{status: 499}
	}
	for k, vs := range h {
		req.Header[k] = vs
	}
	if len(body) > 64<<10 {
		req.Header.Set("Expect", "100-continue")
	}
	res, err := cl.Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	return answer{status: res.StatusCode, header: res.Header, body: b}
}

var codeRE = regexp.MustCompile(`^[A-Z][A-Z0-9_]+$`)

// errorShapeProblem says how a 4xx answer misses the documented error shape
// ("" when it does not).
func errorShapeProblem(a answer) string {
	if a.status == 499 {
		return ""
	}
	if a.status == http.StatusTooManyRequests {
		if a.header.Get("Retry-After") == "" {
			return "429 without Retry-After"
		}
		if strings.TrimSpace(string(a.body)) == "Too many requests, please try again later" {
			return ""
		}
	}
	if a.status == http.StatusMethodNotAllowed || a.status == http.StatusNotFound {
		// Checked like any other below: the router's own answers must
		// have the shape too.
	}
	var e map[string]any
	if err := json.Unmarshal(a.body, &e); err != nil {
		return "body is not a JSON object"
	}
	msg, _ := e["error"].(string)
	if msg == "" {
		return "no non-empty string `error`"
	}
	if raw, has := e["code"]; has {
		code, _ := raw.(string)
		if !codeRE.MatchString(code) {
			return fmt.Sprintf("`code` %v is not an upper-case code", raw)
		}
		if code == "VALIDATION_ERROR" {
			list, _ := e["errors"].([]any)
			if len(list) == 0 {
				return "VALIDATION_ERROR without `errors`"
			}
			for _, it := range list {
				m, _ := it.(map[string]any)
				if _, ok := m["field"].(string); !ok {
					return "VALIDATION_ERROR entry without string `field`"
				}
				if s, _ := m["message"].(string); s == "" {
					return "VALIDATION_ERROR entry without `message`"
				}
			}
		}
	}
	if ct := a.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		return "Content-Type " + ct
	}
	return ""
}

// specErrorCodes reads the codes of the error table in docs/rest-api.md and
// the shared spec when it is beside the checkout.
func specErrorCodes(t *testing.T) map[string]bool {
	codes := map[string]bool{}
	re := regexp.MustCompile("(?m)^\\| `?([A-Z][A-Z0-9_]{3,})`? \\| [0-9]{3} \\|")
	for _, p := range []string{"../../docs/rest-api.md", "../../../shared/spec/rest-api.md"} {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			codes[m[1]] = true
		}
	}
	return codes
}

// openAPI is the part of docs/openapi.json the fuzzer reads.
type openAPI struct {
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components struct {
		Schemas    map[string]schema    `json:"schemas"`
		Parameters map[string]parameter `json:"parameters"`
	} `json:"components"`
}

type parameter struct {
	Ref    string `json:"$ref"`
	In     string `json:"in"`
	Name   string `json:"name"`
	Schema schema `json:"schema"`
}

type schema struct {
	Ref        string            `json:"$ref"`
	Type       any               `json:"type"`
	Properties map[string]schema `json:"properties"`
	Items      *schema           `json:"items"`
	AnyOf      []schema          `json:"anyOf"`
	AllOf      []schema          `json:"allOf"`
	OneOf      []schema          `json:"oneOf"`
}

type operation struct {
	method, path string
	params       []parameter
	body         *schema
	// page: the operation answers a browser with an HTML page (its 200 is
	// text/html), so its 4xx may be a page too.
	page bool
}

func loadSpec(t *testing.T) *openAPI {
	b, err := os.ReadFile("../../docs/openapi.json")
	must(t, err)
	var s openAPI
	must(t, json.Unmarshal(b, &s))
	return &s
}

func (s *openAPI) operations() []operation {
	var ops []operation
	for p, methods := range s.Paths {
		var shared []parameter
		if raw, ok := methods["parameters"]; ok {
			_ = json.Unmarshal(raw, &shared)
		}
		for m, raw := range methods {
			if m == "parameters" || strings.HasPrefix(m, "x-") {
				continue
			}
			var o struct {
				Parameters []parameter `json:"parameters"`
				Responses  map[string]struct {
					Content map[string]json.RawMessage `json:"content"`
				} `json:"responses"`
				RequestBody struct {
					Content map[string]struct {
						Schema schema `json:"schema"`
					} `json:"content"`
				} `json:"requestBody"`
			}
			_ = json.Unmarshal(raw, &o)
			op := operation{method: strings.ToUpper(m), path: p}
			_, op.page = o.Responses["200"].Content["text/html"]
			for _, prm := range append(append([]parameter{}, shared...), o.Parameters...) {
				if prm.Ref != "" {
					prm = s.Components.Parameters[strings.TrimPrefix(prm.Ref, "#/components/parameters/")]
				}
				op.params = append(op.params, prm)
			}
			for _, c := range o.RequestBody.Content {
				sc := s.resolve(c.Schema)
				op.body = &sc
				break
			}
			ops = append(ops, op)
		}
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].path+ops[i].method < ops[j].path+ops[j].method })
	return ops
}

func (s *openAPI) resolve(sc schema) schema {
	for i := 0; i < 8 && sc.Ref != ""; i++ {
		sc = s.Components.Schemas[strings.TrimPrefix(sc.Ref, "#/components/schemas/")]
	}
	if len(sc.AllOf) > 0 && sc.Properties == nil {
		sc.Properties = map[string]schema{}
		for _, a := range sc.AllOf {
			for k, v := range s.resolve(a).Properties {
				sc.Properties[k] = v
			}
		}
	}
	return sc
}

type variant struct {
	path   string
	body   []byte
	header http.Header
}

// Malformed values for path and query parameters.
var badValues = []string{
	"chaos-missing", "%00", "..%2F..%2Fetc%2Fpasswd", strings.Repeat("a", 5000), "-1",
	"1e309", "%E2%80%AE%F0%9F%92%A9", "%FF%FE", "%27%20OR%201%3D1%20--", "00000000-0000-0000-0000-000000000000",
}

func (o operation) fill(pathValue func(name string) string, query url.Values) string {
	p := o.path
	for _, prm := range o.params {
		if prm.In == "path" {
			p = strings.ReplaceAll(p, "{"+prm.Name+"}", pathValue(prm.Name))
		}
	}
	if len(query) > 0 {
		// Encode by hand so already-escaped bad values stay as they are.
		var parts []string
		for k, vs := range query {
			for _, v := range vs {
				parts = append(parts, url.QueryEscape(k)+"="+v)
			}
		}
		sort.Strings(parts)
		p += "?" + strings.Join(parts, "&")
	}
	return p
}

// variants are the malformed requests sent to one operation: bad path
// values, bad query values, bad bodies (for operations with one, and a few
// for those without) and bad headers.
func (o operation) variants(s *openAPI, monitorID string) []variant {
	good := func(string) string { return monitorID }
	jsonCT := http.Header{"Content-Type": {"application/json"}}
	var out []variant
	for _, bad := range badValues {
		b := bad
		if strings.Contains(o.path, "{") {
			out = append(out, variant{path: o.fill(func(string) string { return b }, nil), header: jsonCT, body: []byte(`{}`)})
		}
	}
	q := url.Values{}
	hasQuery := false
	for _, prm := range o.params {
		if prm.In == "query" {
			hasQuery = true
		}
	}
	for i, bad := range badValues {
		q = url.Values{}
		for _, prm := range o.params {
			if prm.In == "query" {
				q[prm.Name] = []string{bad, badValues[(i+3)%len(badValues)]}
			}
		}
		if !hasQuery {
			q["unknown"] = []string{bad}
		}
		out = append(out, variant{path: o.fill(good, q)})
	}
	bodies := [][]byte{[]byte(`{`), []byte(`null`)}
	if o.body != nil {
		bodies = append(bodies, nil, []byte(`[]`), []byte(`"x"`), []byte(`123`), []byte("{\"a\":\"\xff\xfe\"}"),
			[]byte(strings.Repeat("[", 10000)+strings.Repeat("]", 10000)),
			[]byte(`{"name":"`+strings.Repeat("x", 3<<20)+`"}`),
			[]byte(`{"a":1e999999}`), []byte(`{"__proto__":{"x":1},"constructor":null}`),
			o.wrongTypes(s, 0), o.wrongTypes(s, 1), o.wrongTypes(s, 2), o.wrongTypes(s, 3))
	}
	for _, b := range bodies {
		out = append(out, variant{path: o.fill(good, nil), body: b, header: jsonCT})
	}
	headers := []http.Header{
		{"Authorization": nil},
		{"Authorization": {"Bearer"}},
		{"Authorization": {"Bearer sk_" + strings.Repeat("z", 60)}},
		{"Authorization": {"Basic Zm9vOmJhcg=="}},
		{"Authorization": {"Bearer " + strings.Repeat("k", 7000)}},
		{"X-Workspace-Id": {"another-workspace"}, "Content-Type": {"application/json"}},
		{"Content-Type": {"text/plain; charset=\"\xff"}, "Accept": {"application/xml"}},
		{"X-Forwarded-For": {"not-an-ip, , 999.1.1.1"}, "Forwarded": {"for=\"[::1"}, "Origin": {"null"}},
		{"Content-Type": {"multipart/form-data; boundary=x"}, "Content-Encoding": {"gzip"}},
	}
	for _, h := range headers {
		h := h.Clone()
		if h["Authorization"] == nil {
			if _, named := h["Authorization"]; named {
				h.Set("Authorization", "")
			}
		}
		out = append(out, variant{path: o.fill(good, nil), body: []byte(`{"name":1}`), header: h})
	}
	return out
}

// wrongTypes is a body with every documented property set to a value of
// the wrong kind (round picks which wrong kind).
func (o operation) wrongTypes(s *openAPI, round int) []byte {
	wrong := []any{
		map[string]any{"nested": []any{1, "x"}}, "not-a-number", -1, []any{nil, true},
	}
	m := map[string]any{}
	props := s.resolve(*o.body).Properties
	i := 0
	for k, p := range props {
		p = s.resolve(p)
		v := wrong[(round+i)%len(wrong)]
		switch p.Type {
		case "string":
			if round == 3 {
				v = "\x00" + strings.Repeat("é", 2000) + "http://127.0.0.1:1/"
			} else if _, isStr := v.(string); isStr {
				v = 12.5
			}
		case "integer", "number":
			if round == 3 {
				v = 9.99e307
			}
		}
		m[k] = v
		i++
	}
	b, _ := json.Marshal(m)
	return b
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// startEnv starts envtest with the real manager and stops it with the test.
// startMu serialises control-plane start-ups (see startEnv).
var startMu sync.Mutex

func startEnv(t *testing.T, opts manager.Options) *testenv.Env {
	t.Helper()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set; run `make chaos`")
	}
	// Control planes start one at a time: started together on a busy
	// machine, kube-apiservers miss envtest's start timeout.
	startMu.Lock()
	env, err := testenv.Start(opts)
	startMu.Unlock()
	must(t, err)
	t.Cleanup(env.Stop)
	return env
}
