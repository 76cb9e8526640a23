package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestNodeClient connects the official TypeScript SDK (npm
// @modelcontextprotocol/sdk, on the machine's Node) to the HTTP server over
// Streamable HTTP: a real external MCP client.
func TestNodeClient(t *testing.T) {
	if testing.Short() {
		t.Skip("needs npm and node")
	}
	NPM(t)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	NpmInstall(t, dir, "@modelcontextprotocol/sdk")
	// ES modules resolve packages next to the script, so it runs from dir.
	script, err := os.ReadFile(filepath.Join("testdata", "client.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "client.mjs"), script, 0o600); err != nil {
		t.Fatal(err)
	}

	api := newFakeAPI(t)
	base := startMCP(t, api, Options{Version: "node-test"})
	cmd := exec.CommandContext(ctx, node, filepath.Join(dir, "client.mjs"), base+"/mcp", "sk_good")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("node client: %v\n%s\n%s", err, out, stderr)
	}
	var res struct {
		Server struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"server"`
		Tools   []string       `json:"tools"`
		IsError bool           `json:"isError"`
		Whoami  map[string]any `json:"whoami"`
	}
	line := strings.TrimSpace(string(out))
	if i := strings.LastIndexByte(line, '\n'); i >= 0 {
		line = line[i+1:]
	}
	if err := json.Unmarshal([]byte(line), &res); err != nil {
		t.Fatalf("decode node output %q: %v", out, err)
	}
	if res.Server.Name != "uptime-operator" || res.Server.Version != "node-test" {
		t.Errorf("server info = %+v", res.Server)
	}
	if len(res.Tools) != 23 {
		t.Errorf("node client saw %d tools in default mode, want 23: %v", len(res.Tools), res.Tools)
	}
	if res.IsError || res.Whoami["workspace_id"] != "team" || res.Whoami["mcp_mode"] != "default" {
		t.Errorf("whoami via node = %v (error %v)", res.Whoami, res.IsError)
	}
}
