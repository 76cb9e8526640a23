package coretest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
)

// The REST contract, checked from the answers the tests provoke: every
// request that goes through a fixture (Fixture.Call here, the Ginkgo
// suite's doOn and the caller-limit and proxy fixtures of internal/apiserver,
// the DNS route fixture of monitors) has its answer validated against the
// operation of docs/openapi.json it reached: the status
// must be documented, the body must match that status's schema and the
// Content-Type one of its media types. Paths the document does not describe
// are TestOpenAPICoversRouter's business. A mismatch fails the
// spec that sent the request, so a handler cannot drift from its schema, nor
// a schema from its handler, without a red test.

// servedByFake are the routes whose handler the envtest suite of
// internal/apiserver replaces with a fake (fakePublic records the call and
// answers an empty 200): their answers are the fake's, not the server's. internal/statuspage tests the real ones.
var servedByFake = map[string]bool{
	"/status/{slug}": true, "/status/{slug}/{rest}": true,
	"/s/{slug}": true, "/s/{slug}/login": true, "/s/{slug}/subscribe": true, "/s/{slug}/confirm": true, "/s/{slug}/unsubscribe": true,
	"/s/{slug}/logout": true, "/s/{slug}/sso": true, "/sso/callback": true,
}

// contract is the document loaded once, with a matcher per path template.
type contract struct {
	doc   *openapi3.T
	paths []contractPath

	mu      sync.Mutex
	checked map[string]bool // "METHOD path-template status" seen valid
}

// contractPath is one path template of the document as a regular
// expression: {key} and {path} take the rest of the path (they may contain
// slashes), every other parameter one segment.
type contractPath struct {
	template string
	re       *regexp.Regexp
	literals int // literal characters: the most specific template wins
	item     *openapi3.PathItem
}

var (
	contractOnce sync.Once
	theContract  *contract
	contractErr  error
)

// document is internal/apiserver/openapi.json, the copy of
// docs/openapi.json the server embeds and serves (openapi_test.go there
// keeps the two equal). It is read from the source tree: this package may
// not import internal/apiserver, which assembles the resource packages
// whose tests use it.
func document() ([]byte, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return nil, fmt.Errorf("contract: cannot locate the source tree")
	}
	return os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "openapi.json"))
}

// loadContract parses the document once per test binary.
func loadContract() (*contract, error) {
	contractOnce.Do(func() {
		// Bodies that are text to a validator: the schemas say "string".
		for _, typ := range []string{"text/html", "image/svg+xml", "application/atom+xml"} {
			openapi3filter.RegisterBodyDecoder(typ, openapi3filter.PlainBodyDecoder)
		}
		raw, err := document()
		if err != nil {
			contractErr = err
			return
		}
		loader := openapi3.NewLoader()
		doc, err := loader.LoadFromData(raw)
		if err != nil {
			contractErr = err
			return
		}
		c := &contract{doc: doc, checked: map[string]bool{}}
		param := regexp.MustCompile(`\{([^}]+)\}`)
		for tmpl, item := range doc.Paths.Map() {
			lit := len(param.ReplaceAllString(tmpl, ""))
			var expr strings.Builder
			last := 0
			for _, m := range param.FindAllStringSubmatchIndex(tmpl, -1) {
				expr.WriteString(regexp.QuoteMeta(tmpl[last:m[0]]))
				switch tmpl[m[2]:m[3]] {
				case "key", "path":
					expr.WriteString(`.+`)
				default:
					expr.WriteString(`[^/]+`)
				}
				last = m[1]
			}
			expr.WriteString(regexp.QuoteMeta(tmpl[last:]))
			c.paths = append(c.paths, contractPath{template: tmpl, re: regexp.MustCompile(`^` + expr.String() + `$`), literals: lit, item: item})
		}
		sort.Slice(c.paths, func(i, j int) bool {
			if c.paths[i].literals != c.paths[j].literals {
				return c.paths[i].literals > c.paths[j].literals
			}
			return c.paths[i].template < c.paths[j].template
		})
		theContract = c
	})
	return theContract, contractErr
}

// route finds the documented operation of a request; ok is false for a path
// or method the document does not describe.
func (c *contract) route(method, path string) (*routers.Route, bool) {
	for _, p := range c.paths {
		if !p.re.MatchString(path) {
			continue
		}
		op := p.item.GetOperation(method)
		if op == nil {
			return nil, false
		}
		return &routers.Route{Spec: c.doc, Path: p.template, PathItem: p.item, Method: method, Operation: op}, true
	}
	return nil, false
}

// check validates one answer. It returns nil for answers the document does
// not describe.
func (c *contract) check(req *http.Request, rec *httptest.ResponseRecorder) error {
	route, ok := c.route(req.Method, req.URL.Path)
	if !ok || servedByFake[route.Path] {
		return nil
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, Route: route},
		Status:                 rec.Code,
		Header:                 rec.Header(),
		Body:                   io.NopCloser(bytes.NewReader(rec.Body.Bytes())),
		// A status the operation does not document is an error too, so a
		// client generated from the document knows every answer.
		Options: &openapi3filter.Options{MultiError: true, IncludeResponseStatus: true},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		return fmt.Errorf("%s %s (%s) answered %d, which does not match docs/openapi.json: %w\nbody: %s",
			req.Method, req.URL.Path, route.Path, rec.Code, err, truncateBody(rec.Body.Bytes()))
	}
	c.mu.Lock()
	c.checked[fmt.Sprintf("%s %s %d", req.Method, route.Path, rec.Code)] = true
	c.mu.Unlock()
	return nil
}

func truncateBody(b []byte) string {
	if len(b) > 2000 {
		return string(b[:2000]) + "…"
	}
	return string(b)
}

// report lists the documented operations whose success answer no spec
// checked, so that a gap in the suite's reach is visible (go test -v).
func (c *contract) report(w io.Writer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var unchecked []string
	total := 0
	for _, p := range c.paths {
		for method, op := range p.item.Operations() {
			total++
			ok := false
			for code := range op.Responses.Map() {
				if strings.HasPrefix(code, "2") && c.checked[fmt.Sprintf("%s %s %s", strings.ToUpper(method), p.template, code)] {
					ok = true
				}
			}
			if !ok {
				unchecked = append(unchecked, strings.ToUpper(method)+" "+p.template)
			}
		}
	}
	sort.Strings(unchecked)
	fmt.Fprintf(w, "contract: %d of %d operations had a success answer checked against docs/openapi.json; not reached:\n  %s\n",
		total-len(unchecked), total, strings.Join(unchecked, "\n  "))
}

// CheckAnswer validates the answer rec to req against docs/openapi.json
// (nil for an answer the document does not describe).
func CheckAnswer(req *http.Request, rec *httptest.ResponseRecorder) error {
	c, err := loadContract()
	if err != nil {
		return err
	}
	return c.check(req, rec)
}

// ReportContract writes which documented operations no test reached.
func ReportContract(w io.Writer) {
	if c, err := loadContract(); err == nil {
		c.report(w)
	}
}
