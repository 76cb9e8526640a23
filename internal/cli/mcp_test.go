package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

func envOf(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

func TestLoadMCPConfig(t *testing.T) {
	errCases := map[string]struct {
		env  map[string]string
		http bool
		want string
	}{
		"stdio without key":         {map[string]string{}, false, "SERVICE_API_KEY"},
		"plain http to remote":      {map[string]string{"SERVICE_API_KEY": "sk_x", "SERVICE_API_URL": "http://api.example.com"}, false, "https"},
		"bad limit":                 {map[string]string{"SERVICE_API_KEY": "sk_x", "SERVICE_MAX_WRITES_PER_MINUTE": "zero"}, false, "SERVICE_MAX_WRITES_PER_MINUTE"},
		"bad transport":             {map[string]string{"TRANSPORT": "sse"}, false, "TRANSPORT"},
		"production without oauth":  {map[string]string{"TRANSPORT": "http", "NODE_ENV": "production"}, false, "OAUTH_RESOURCE_PROXY_SECRET"},
		"production flag with http": {map[string]string{"NODE_ENV": "production"}, true, "MCP_OAUTH=off"},
	}
	for name, tc := range errCases {
		if _, err := loadMCPConfig(envOf(tc.env), tc.http); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to mention %s", name, err, tc.want)
		}
	}
	c, err := loadMCPConfig(envOf(map[string]string{"SERVICE_API_KEY": "sk_x", "SERVICE_READ_ONLY": "yes", "SERVICE_ALLOW_DESTRUCTIVE": "on",
		"SERVICE_MAX_PAUSES_PER_HOUR": "3", "MCP_ALLOWED_ORIGINS": "https://a.example, https://b.example"}), false)
	if err != nil {
		t.Fatal(err)
	}
	if c.http || !c.opts.ReadOnly || !c.opts.AllowDestructive || c.opts.MaxPausesPerHour != 3 || len(c.opts.AllowedOrigins) != 2 ||
		c.opts.APIURL != "http://127.0.0.1:8080" {
		t.Errorf("config = %+v", c)
	}
	c, err = loadMCPConfig(envOf(map[string]string{"TRANSPORT": "HTTP", "NODE_ENV": "production", "MCP_OAUTH": "off", "HOST": "0.0.0.0"}), false)
	if err != nil || !c.http || c.addr != "0.0.0.0:3333" || c.opts.ListenHost != "0.0.0.0" {
		t.Errorf("http config = %+v, %v", c, err)
	}
	c, err = loadMCPConfig(envOf(map[string]string{"SERVICE_API_URL": "https://api.example.com"}), true)
	if err != nil || c.addr != "127.0.0.1:3333" {
		t.Errorf("default http address = %+v, %v", c, err)
	}
}

// syncBuffer is a goroutine-safe writer.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestRunMCPServerHTTP(t *testing.T) {
	t.Setenv("TRANSPORT", "")
	t.Setenv("PORT", "0")
	t.Setenv("HOST", "127.0.0.1")
	t.Setenv("SERVICE_API_KEY", "")
	ctx, cancel := context.WithCancel(context.Background())
	var stderr syncBuffer
	done := make(chan error, 1)
	go func() { done <- runMCPServer(ctx, []string{"--http"}, &bytes.Buffer{}, &stderr) }()
	re := regexp.MustCompile(`http://(\S+)/mcp`)
	var addr string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && addr == ""; time.Sleep(20 * time.Millisecond) {
		if m := re.FindStringSubmatch(stderr.String()); m != nil {
			addr = m[1]
		}
	}
	if addr == "" {
		cancel()
		t.Fatalf("server did not start: %s", stderr.String())
	}
	resp, err := http.Get("http://" + addr + "/health")
	if err != nil {
		t.Fatal(err)
	}
	var h map[string]string
	_ = json.NewDecoder(resp.Body).Decode(&h)
	resp.Body.Close()
	if h["version"] != Version {
		t.Errorf("health = %v", h)
	}
	resp, err = http.Post("http://"+addr+"/mcp", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
		t.Errorf("POST /mcp without key: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("runMCPServer: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("server did not stop")
	}
}
