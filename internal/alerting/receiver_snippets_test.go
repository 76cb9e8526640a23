package alerting

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// snippet returns the fenced code block of lang in the "Receiving webhooks"
// section of docs/alerting.md.
func snippet(t *testing.T, lang string) string {
	t.Helper()
	raw, err := os.ReadFile("../../docs/alerting.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	i := strings.Index(doc, "## Receiving webhooks")
	if i < 0 {
		t.Fatal("docs/alerting.md has no Receiving webhooks section")
	}
	m := regexp.MustCompile("(?s)```" + lang + "\n(.*?)```").FindStringSubmatch(doc[i:])
	if m == nil {
		t.Fatalf("no %s snippet in the section", lang)
	}
	return m[1]
}

// signedRequest is a delivery as the worker signs it, with an optional
// tampered body and timestamp offset.
func signedRequest(secret []byte, body string, age time.Duration, tamper bool) (http.Header, []byte) {
	ts := strconv.FormatInt(time.Now().Add(-age).Unix(), 10)
	h := http.Header{}
	h.Set("X-Service-Timestamp", ts)
	h.Set("X-Service-Signature", Sign(secret, ts, []byte(body)))
	h.Set("X-Service-Delivery", "3f6f1a2e-0000-4000-8000-000000000001")
	h.Set("Content-Type", "application/json")
	if tamper {
		body = strings.Replace(body, "DOWN", "UP", 1)
	}
	return h, []byte(body)
}

var receiverCases = []struct {
	name   string
	age    time.Duration
	tamper bool
	valid  bool
}{
	{"signed now", 0, false, true},
	{"signed 4 minutes ago", 4 * time.Minute, false, true},
	{"tampered body", 0, true, false},
	{"signed 6 minutes ago", 6 * time.Minute, false, false},
}

// TestReceiverSnippets runs the receiver code of docs/alerting.md against
// deliveries signed like the worker signs them.
func TestReceiverSnippets(t *testing.T) {
	secret := []byte("whsec_test_secret")
	body := `{"event":"monitor.down","title":"API is DOWN"}`

	t.Run("go", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module receiver\n\ngo 1.22\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(snippet(t, "go")), 0o644); err != nil {
			t.Fatal(err)
		}
		bin := filepath.Join(dir, "receiver")
		build := exec.Command("go", "build", "-o", bin, ".")
		build.Dir = dir
		build.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("the Go snippet does not build: %v\n%s", err, out)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		run := exec.CommandContext(ctx, bin)
		run.Env = append(os.Environ(), "WEBHOOK_SECRET="+string(secret), "LISTEN="+addr)
		if err := run.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { cancel(); _ = run.Wait() }()
		url := "http://" + addr + "/hooks/uptime"
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			if c, err := net.Dial("tcp", addr); err == nil {
				c.Close()
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the Go receiver did not start")
			}
		}
		for _, tc := range receiverCases {
			h, b := signedRequest(secret, body, tc.age, tc.tamper)
			req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(b))
			req.Header = h
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if got := resp.StatusCode == http.StatusNoContent; got != tc.valid {
				t.Errorf("%s: status %d, want valid=%v", tc.name, resp.StatusCode, tc.valid)
			}
		}
	})

	t.Run("python", func(t *testing.T) {
		py, err := exec.LookPath("python3")
		if err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatal("python3 is needed to test the Python snippet")
			}
			t.Skip("no python3")
		}
		for _, tc := range receiverCases {
			h, b := signedRequest(secret, body, tc.age, tc.tamper)
			script := snippet(t, "python") + fmt.Sprintf(`
import sys
headers = {"X-Service-Timestamp": %q, "X-Service-Signature": %q}
print("valid" if verified(headers, sys.stdin.buffer.read(), %q.encode()) else "invalid")
`, h.Get("X-Service-Timestamp"), h.Get("X-Service-Signature"), string(secret))
			cmd := exec.Command(py, "-c", script)
			cmd.Stdin = bytes.NewReader(b)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v\n%s", tc.name, err, out)
			}
			if got := strings.TrimSpace(string(out)) == "valid"; got != tc.valid {
				t.Errorf("%s: %s, want valid=%v", tc.name, out, tc.valid)
			}
		}
	})
}
