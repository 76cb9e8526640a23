package apiserver

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
)

// limitProse finds a rate limit written in prose: a number, up to two words
// of what is counted, "per" or "/", a window and optionally what it is
// counted per ("20 per 15 minutes per workspace", "600/15 min per
// workspace", "1200/min per key", "600 failed requests per minute").
var limitProse = regexp.MustCompile(`\b(\d[\d,]*)(?: [a-z-]+){0,2} ?(?:per|/) ?(?:(\d+) ?)?(min|minutes?|h|hours?)\b(?: per (key|IP|workspace|account|client|URL))?`)

// docPath finds a route's path in a line of the docs: /monitors/:id/run,
// /automation/monitors/{key}.
var docPath = regexp.MustCompile(`/[a-z][A-Za-z0-9_{}:.\-/]*[A-Za-z0-9}]`)

// proseLimit is one limit as prose says it.
type proseLimit struct {
	n      int
	window time.Duration
	scope  string
}

// parseLimit reads a match of limitProse.
func parseLimit(m []string) proseLimit {
	n, _ := strconv.Atoi(strings.ReplaceAll(m[1], ",", ""))
	window := time.Minute
	if strings.HasPrefix(m[3], "h") {
		window = time.Hour
	}
	if m[2] != "" {
		k, _ := strconv.Atoi(m[2])
		window *= time.Duration(k)
	}
	return proseLimit{n, window, m[4]}
}

// proseScopes are the words the docs count a limit per.
var proseScopes = map[string]core.Scope{
	"key": core.PerKey, "IP": core.PerClient, "client": core.PerClient,
	"workspace": core.PerWorkspace, "account": core.PerWorkspace, "URL": core.PerPath,
}

// TestDocsRateLimitsMatchLimiters holds every rate limit the docs write in
// prose to a limiter the server declares (the Limits table and the routes'
// own): the same number, window and, when the sentence says it, scope; on a
// line that names a rate-limited route, one of that route's limiters. A
// limit changed in code without its docs, or a typo in the docs, fails here.
// The x-rate-limit of docs/openapi.json is written from the limiters
// themselves (core.Router).
func TestDocsRateLimitsMatchLimiters(t *testing.T) {
	s := New(Options{})
	var all []proseLimit
	for _, l := range s.rt.Limiters() {
		for _, word := range []string{"", "key", "IP", "workspace", "URL"} {
			if word == "" || proseScopes[word] == l.Scope() {
				all = append(all, proseLimit{l.Limit(), l.Window(), word})
			}
		}
	}
	perKey := s.rt.Limits.PerKey
	// The limits of each rate-limited route, as its x-rate-limit says them.
	routes := map[string][]proseLimit{}
	for _, o := range s.rt.Ops() {
		for _, m := range limitProse.FindAllStringSubmatch(o.Limit, -1) {
			l := parseLimit(m)
			routes[normalisePath(o.Path)] = append(routes[normalisePath(o.Path)], l, proseLimit{l.n, l.window, ""})
		}
	}
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil || len(files) == 0 {
		t.Fatalf("no docs: %v", err)
	}
	checked := 0
	for _, f := range append(files, "../../README.md") {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			candidates := all
			var named []proseLimit
			for _, p := range docPath.FindAllString(line, -1) {
				named = append(named, routes[normalisePath(colonParam.ReplaceAllString(p, "{}"))]...)
			}
			if len(named) > 0 { // and the per-key limit every route counts against
				candidates = append(named, proseLimit{perKey.Limit(), perKey.Window(), "key"}, proseLimit{perKey.Limit(), perKey.Window(), ""})
			}
			for _, m := range limitProse.FindAllStringSubmatch(line, -1) {
				checked++
				if l := parseLimit(m); !slices.Contains(candidates, proseLimit{l.n, l.window, scopeWord(l.scope)}) {
					t.Errorf("%s:%d: %q is no limit the server declares (core.NewLimits, core.WithLimit, Router.Public)", filepath.Base(f), i+1, m[0])
				}
			}
		}
	}
	if checked < 20 {
		t.Errorf("only %d rate limits found in the docs; is the pattern still right?", checked)
	}
}

// colonParam is a path parameter as the docs write it (:id).
var colonParam = regexp.MustCompile(`:[A-Za-z]+`)

// scopeWord is the word the limiters are listed under for a scope word of
// the docs ("client" is "IP", "account" is "workspace").
func scopeWord(w string) string {
	for _, k := range []string{"key", "IP", "workspace", "URL"} {
		if w != "" && proseScopes[k] == proseScopes[w] {
			return k
		}
	}
	return w
}
