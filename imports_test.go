package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// module is the import path of this repository.
const module = "github.com/uptime-operator/uptime-operator"

// layer is one row of the import table. A package may import packages of
// the rows below its own; it may import packages of its own row only when
// siblings is true.
type layer struct {
	name string
	// siblings allows imports between the packages of this row. The domain
	// services and the front doors do not import each other: what one needs
	// of another is an interface declared where it is consumed, and the
	// composition root wires the two together.
	siblings bool
	// pkgs are directories relative to the repository root; each covers
	// its subpackages unless a longer entry of another row names them. "."
	// is the root package (main.go) alone.
	pkgs []string
}

// layers is the import table, the bottom row first. docs/architecture.md
// ("Import direction") describes each row; TestLayers enforces it over the
// import graph `go list` reports (test files are not part of it: a test may
// import what it needs). A new package must be placed in a row, or the test
// fails.
var layers = []layer{
	{name: "libraries", siblings: true, pkgs: []string{
		// Helpers that know nothing of monitors: text, JSON, JSON paths,
		// the address guard, limits, TLS material, HTTP servers, condition
		// setters, the write-through overlay.
		"internal/textutil", "internal/httpjson", "internal/jsonpath", "internal/hostname", "internal/backoff", "internal/ssa", "internal/clientip",
		"internal/ratelimit", "internal/netguard", "internal/trust", "internal/certs",
		"internal/httpserver", "internal/conditions", "internal/writethrough",
		"internal/confirmlink", "internal/devmail", "internal/podsecurity", "internal/apikeys",
		"internal/oidcdev",  // the loopback OpenID provider of the sso tests and dev mode
		"internal/chromium", // finding and starting Chromium, and its guarded proxy
	}},
	{name: "model", siblings: true, pkgs: []string{
		// The API types and the pure logic over them (the wire form of a
		// monitor's config derived from its CRD struct), and the shared
		// contracts: the probe wire contract, alert events, the REST
		// answers and their OpenAPI document, the reliability math.
		"api", "config", "internal/monitor", "internal/monitorconfig", "internal/probeapi", "internal/alertevent",
		"internal/restapi", "internal/apidoc", "internal/reliability", "internal/plans", "internal/maintenance",
		"internal/oncall", "internal/credentials", "internal/discovery",
	}},
	{name: "leaf services", siblings: true, pkgs: []string{
		// Services over the model that no domain service is needed for:
		// storage, assignments, metrics, exports, the aggregated API's
		// authentication, the local control plane.
		"internal/store", "internal/assign", "internal/metrics", "internal/recipients",
		"internal/assist", "internal/otelexport", "internal/localcp", "internal/aggregated",
		"internal/bootstrap",   // applies the chart's regions and plans
		"internal/certrotator", // keeps the serving certificates and injects the CA bundles
		"internal/credsecrets", // the Secrets a Monitor may reference, and only those
	}},
	{name: "domain services", pkgs: []string{
		"probes", "internal/engine", "internal/probeserver", "internal/alerting",
		"internal/expiry", "internal/sitehealth", "internal/statuspage", "internal/thirdparty",
	}},
	{name: "front doors", pkgs: []string{
		"controllers", "webhooks", "internal/apiserver", "internal/mcpserver",
		"internal/kubectlplugin", // kubectl uptime: a client of the aggregated API
	}},
	{name: "composition root", siblings: true, pkgs: []string{
		".", "internal/manager", "internal/cli", "cmd",
	}},
	{name: "tools and test harnesses", siblings: true, pkgs: []string{
		"hack", "test", "internal/testenv", "internal/testutil",
	}},
}

// exception is an arrow the table forbids that is still in the code.
type exception struct {
	from, to string
	// why it is still there, and what removes it.
	why string
}

// exceptions are the known wrong-way arrows, each named with its reason.
// TestLayers fails on an exception that is no longer needed, so the list
// only shrinks.
var exceptions = []exception{}

// pkg is a package of the module and what its non-test files import.
type pkg struct {
	path    string // relative to the repository root, "." for the root
	imports []string
}

// goList runs `go list -json ./...` and returns the module's packages with
// their imports of other packages of the module.
func goList() ([]pkg, error) {
	cmd := exec.Command("go", "list", "-e", "-json=ImportPath,Imports,Error", "./...")
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, fmt.Errorf("go list: %v: %s", err, ee.Stderr)
		}
		return nil, fmt.Errorf("go list: %w", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p struct {
			ImportPath string
			Imports    []string
			Error      *struct{ Err string }
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("decode go list: %w", err)
		}
		if p.Error != nil {
			return nil, fmt.Errorf("go list %s: %s", p.ImportPath, p.Error.Err)
		}
		rel, ok := relative(p.ImportPath)
		if !ok {
			continue
		}
		q := pkg{path: rel}
		for _, imp := range p.Imports {
			if r, ok := relative(imp); ok {
				q.imports = append(q.imports, r)
			}
		}
		pkgs = append(pkgs, q)
	}
	return pkgs, nil
}

// relative is path relative to the repository root, and whether it is a
// package of the module.
func relative(path string) (string, bool) {
	if path == module {
		return ".", true
	}
	rel, ok := strings.CutPrefix(path, module+"/")
	return rel, ok
}

// rowOf returns the index in table of the row that holds path: the row
// with the longest entry that is path or a parent directory of it; -1
// when no row does.
func rowOf(table []layer, path string) int {
	row, _ := entryOf(table, path)
	return row
}

// entryOf returns the row of path and the entry of that row that holds it.
func entryOf(table []layer, path string) (row int, entry string) {
	row, best := -1, -1
	for i, l := range table {
		for _, p := range l.pkgs {
			match := p == path || (p != "." && strings.HasPrefix(path, p+"/"))
			if match && len(p) > best {
				row, best, entry = i, len(p), p
			}
		}
	}
	return row, entry
}

// checkLayers returns every problem of the graph pkgs under table and
// excs: packages in no row, arrows that run down-to-up or sideways in a row
// without siblings and are not excepted, and exceptions that no longer
// match an arrow.
func checkLayers(table []layer, excs []exception, pkgs []pkg) []string {
	var problems []string
	used := make([]bool, len(excs))
	for _, p := range pkgs {
		from, fromEntry := entryOf(table, p.path)
		if from < 0 {
			problems = append(problems, fmt.Sprintf("%s is in no row of the layer table: add it to one", p.path))
			continue
		}
		for _, imp := range p.imports {
			to, toEntry := entryOf(table, imp)
			if to < 0 {
				continue // reported as a package of its own
			}
			if toEntry == fromEntry && fromEntry != "." {
				// Inside one entry (internal/apiserver and its resource
				// packages): the entry's own tests keep its imports in
				// order (internal/apiserver/layout_test.go).
				continue
			}
			if to < from || (to == from && table[from].siblings) {
				continue
			}
			i := slices.IndexFunc(excs, func(e exception) bool { return e.from == p.path && e.to == imp })
			if i >= 0 {
				used[i] = true
				continue
			}
			how := "up, into " + table[to].name
			if to == from {
				how = "sideways: " + table[from].name + " do not import each other"
			}
			problems = append(problems, fmt.Sprintf("%s (%s) imports %s: the arrow runs %s", p.path, table[from].name, imp, how))
		}
	}
	for i, e := range excs {
		if !used[i] {
			problems = append(problems, fmt.Sprintf("exception %s → %s is no longer needed: remove it", e.from, e.to))
		}
	}
	return problems
}

// TestLayers checks the module's import graph against the layer table.
func TestLayers(t *testing.T) {
	pkgs, err := goList()
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < 20 {
		t.Fatalf("go list found only %d packages of %s", len(pkgs), module)
	}
	for _, p := range checkLayers(layers, exceptions, pkgs) {
		t.Error(p)
	}
	for _, e := range exceptions {
		if e.why == "" {
			t.Errorf("exception %s → %s has no reason", e.from, e.to)
		}
	}
}

// TestCheckLayersCatchesWrongWayArrows runs the check over a synthetic graph
// with one arrow of each kind.
func TestCheckLayersCatchesWrongWayArrows(t *testing.T) {
	table := []layer{
		{name: "model", siblings: true, pkgs: []string{"internal/monitor", "internal/probeapi"}},
		{name: "domain services", pkgs: []string{"internal/engine", "internal/alerting", "probes"}},
		{name: "front doors", pkgs: []string{"controllers"}},
		{name: "composition root", siblings: true, pkgs: []string{".", "internal/manager"}},
	}
	graph := []pkg{
		{path: "internal/monitor", imports: []string{"internal/probeapi"}},         // sideways, siblings allowed
		{path: "internal/engine", imports: []string{"internal/monitor"}},           // down
		{path: "internal/manager", imports: []string{"controllers", "probes"}},     // down
		{path: ".", imports: []string{"internal/manager"}},                         // sideways, siblings allowed
		{path: "internal/alerting/sub", imports: []string{"internal/monitor"}},     // a subpackage takes its parent's row
		{path: "controllers", imports: []string{"controllers/sub"}},                // inside one entry
		{path: "internal/probeapi", imports: []string{"probes"}},                   // up: wrong
		{path: "internal/engine/x", imports: []string{"controllers"}},              // up: wrong
		{path: "internal/engine", imports: []string{"internal/alerting"}},          // sideways without siblings: wrong
		{path: "controllers", imports: []string{"probes", "internal/manager"}},     // down, then up: wrong
		{path: "internal/newpkg", imports: []string{"internal/monitor"}},           // in no row
		{path: "probes", imports: []string{"internal/engine", "internal/monitor"}}, // excepted below
	}
	excs := []exception{
		{from: "probes", to: "internal/engine", why: "test"},
		{from: "internal/monitor", to: "controllers", why: "stale"},
	}
	got := checkLayers(table, excs, graph)
	want := []string{
		"internal/probeapi (model) imports probes: the arrow runs up, into domain services",
		"internal/engine/x (domain services) imports controllers: the arrow runs up, into front doors",
		"internal/engine (domain services) imports internal/alerting: the arrow runs sideways: domain services do not import each other",
		"controllers (front doors) imports internal/manager: the arrow runs up, into composition root",
		"internal/newpkg is in no row of the layer table: add it to one",
		"exception internal/monitor → controllers is no longer needed: remove it",
	}
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestLayerTableIsAPartition fails when a directory is named in two rows:
// its row would depend on the order of the table.
func TestLayerTableIsAPartition(t *testing.T) {
	seen := map[string]string{}
	for _, l := range layers {
		for _, p := range l.pkgs {
			if prev, ok := seen[p]; ok {
				t.Errorf("%s is in both %s and %s", p, prev, l.name)
			}
			seen[p] = l.name
		}
	}
}

// testOnly are the packages the release binary must not link, by import
// path prefix: test frameworks and harnesses, controller-runtime's envtest
// and its internal testing helpers (internal/localcp runs the local control
// plane without them), and this module's own test harnesses.
var testOnly = []string{
	"testing", "sigs.k8s.io/controller-runtime/pkg/envtest", "sigs.k8s.io/controller-runtime/pkg/internal/testing/",
	"sigs.k8s.io/controller-runtime/pkg/client/fake", "github.com/onsi/ginkgo", "github.com/onsi/gomega",
	module + "/internal/testenv", module + "/internal/testutil", module + "/test/", module + "/hack/",
}

// testOnlyAllowed are packages testOnly names that the binary may link, each
// with its reason.
var testOnlyAllowed = map[string]string{
	"k8s.io/client-go/testing": "client-go's generic typed clients (k8s.io/client-go/gentype) import it for their fake twins",
}

// linkedTestCode returns the test-only packages of the import graph under
// root (importers by package), each with the chain of imports that links
// it, shortest first.
func linkedTestCode(root string, imports map[string][]string) []string {
	// Breadth-first from root: via[p] is the package p was first reached
	// from, so the chain back to root is a shortest one.
	via := map[string]string{root: ""}
	queue := []string{root}
	var found []string
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if isTestOnly(p) {
			chain := []string{p}
			for q := via[p]; q != ""; q = via[q] {
				chain = append(chain, q)
			}
			slices.Reverse(chain)
			found = append(found, strings.Join(chain, " → "))
			continue // what it imports is reported through it
		}
		for _, imp := range imports[p] {
			if _, seen := via[imp]; !seen {
				via[imp] = p
				queue = append(queue, imp)
			}
		}
	}
	return found
}

func isTestOnly(path string) bool {
	if _, ok := testOnlyAllowed[path]; ok {
		return false
	}
	for _, prefix := range testOnly {
		if path == strings.TrimSuffix(prefix, "/") || strings.HasPrefix(path, strings.TrimSuffix(prefix, "/")+"/") {
			return true
		}
	}
	return false
}

// TestBinaryLinksNoTestCode fails when the uptime-operator binary (the root
// package, built as the Dockerfile builds it) links test-only code. The
// `dev` subcommand once linked controller-runtime's envtest, and with it
// its internal testing helpers, into the release image.
func TestBinaryLinksNoTestCode(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}} {{join .Imports " "}}`, ".")
	cmd.Env = append(cmd.Environ(), "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v: %s", err, ee.Stderr)
		}
		t.Fatal(err)
	}
	imports := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		imports[f[0]] = f[1:]
	}
	if len(imports) < 100 {
		t.Fatalf("go list found only %d packages in the binary", len(imports))
	}
	for _, chain := range linkedTestCode(module, imports) {
		t.Errorf("the binary links test-only code: %s", chain)
	}
	for allowed := range testOnlyAllowed {
		if _, ok := imports[allowed]; !ok {
			t.Errorf("%s is allowed in the binary but no longer linked: remove it from testOnlyAllowed", allowed)
		}
	}
}

// TestLinkedTestCodeNamesTheChain runs the check over a synthetic graph.
func TestLinkedTestCodeNamesTheChain(t *testing.T) {
	graph := map[string][]string{
		module:                       {module + "/internal/cli", "fmt"},
		module + "/internal/cli":     {module + "/internal/localcp", "k8s.io/client-go/gentype"},
		module + "/internal/localcp": {"sigs.k8s.io/controller-runtime/pkg/envtest"},
		"sigs.k8s.io/controller-runtime/pkg/envtest": {"sigs.k8s.io/controller-runtime/pkg/internal/testing/addr"},
		"k8s.io/client-go/gentype":                   {"k8s.io/client-go/testing"},
		"fmt":                                        {"testingish"},
	}
	got := linkedTestCode(module, graph)
	want := []string{module + " → " + module + "/internal/cli → " + module + "/internal/localcp → sigs.k8s.io/controller-runtime/pkg/envtest"}
	if !slices.Equal(got, want) {
		t.Errorf("found:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
