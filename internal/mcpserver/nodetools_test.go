package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Helpers for the tests that drive the server with real MCP clients written
// in TypeScript (npm packages on Node). They are exported so the external
// test package (the suites against the real manager) uses them too.

// TB is what the helpers need of *testing.T and of GinkgoT().
type TB interface {
	Helper()
	Logf(format string, args ...any)
	Skipf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// ConformanceVersion is the pinned version of the official conformance
// suite (npm @modelcontextprotocol/conformance): a new release may add or
// change scenarios, so it is bumped on purpose, not picked up by surprise.
const ConformanceVersion = "0.1.16"

// NPM returns the npm executable, skipping the test (with the reason) when
// npm or node is not installed.
func NPM(t TB) string {
	t.Helper()
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skipf("npm is not installed (%v): the tests with real Node MCP clients need Node.js and npm", err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skipf("node is not installed (%v): the tests with real Node MCP clients need Node.js", err)
	}
	return npm
}

// NpmInstall installs pkgs into dir (npm install --prefix dir). A failed
// install (offline, no registry) skips the test with npm's output, except
// in CI (CI=true), where it fails the test: CI must run these clients.
func NpmInstall(t TB, dir string, pkgs ...string) {
	t.Helper()
	npm := NPM(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	args := append([]string{"install", "--prefix", dir, "--no-audit", "--no-fund", "--loglevel=error"}, pkgs...)
	cmd := exec.CommandContext(ctx, npm, args...)
	cmd.Env = append(os.Environ(), "npm_config_update_notifier=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		msg := "npm install " + strings.Join(pkgs, " ") + " failed"
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s (CI=true, so this fails instead of skipping): %v\n%s", msg, err, out)
		}
		t.Skipf("%s (offline without a registry?): %v\n%s", msg, err, out)
	}
}

// Node22 returns a Node 22 executable and the directory whose node_modules
// holds the conformance suite at ConformanceVersion. The suite needs Node
// 22, which `npm install node@22` provides; both are installed once into
// ${XDG_CACHE_HOME:-$HOME/.cache}/uptime-operator/node22 and reused by
// later runs (CI caches that directory).
func Node22(t TB) (node, prefix string) {
	t.Helper()
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			t.Fatalf("no cache directory: %v", err)
		}
		cache = filepath.Join(home, ".cache")
	}
	prefix = filepath.Join(cache, "uptime-operator", "node22")
	node = filepath.Join(prefix, "node_modules", "node", "bin", "node")
	if node22Ready(node, prefix) {
		return node, prefix
	}
	if err := os.MkdirAll(prefix, 0o755); err != nil {
		t.Fatalf("create %s: %v", prefix, err)
	}
	t.Logf("installing node@22 and @modelcontextprotocol/conformance@%s into %s", ConformanceVersion, prefix)
	NpmInstall(t, prefix, "node@22", "@modelcontextprotocol/conformance@"+ConformanceVersion)
	if !node22Ready(node, prefix) {
		t.Fatalf("npm installed node@22 into %s, but %s is not a working Node 22 with the conformance suite %s", prefix, node, ConformanceVersion)
	}
	return node, prefix
}

// node22Ready reports whether prefix holds a working Node 22 and the pinned
// conformance suite.
func node22Ready(node, prefix string) bool {
	out, err := exec.Command(node, "--version").Output()
	if err != nil || !strings.HasPrefix(strings.TrimSpace(string(out)), "v22.") {
		return false
	}
	raw, err := os.ReadFile(filepath.Join(prefix, "node_modules", "@modelcontextprotocol", "conformance", "package.json"))
	if err != nil {
		return false
	}
	var pkg struct {
		Version string `json:"version"`
	}
	return json.Unmarshal(raw, &pkg) == nil && pkg.Version == ConformanceVersion
}
