package probes

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
	"github.com/uptime-operator/uptime-operator/internal/testutil"
)

// renderingSite serves the pages of the browser tests: an app that renders
// its content with JavaScript after a delay, one whose script fails, and a
// log-in flow whose session cookie is set only for the right password.
func renderingSite(t testing.TB, password string) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /app", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, `<!doctype html><html><body><div id="app">Loading…</div>
<script>setTimeout(() => { document.getElementById('app').innerHTML = '<h1 class="ready">Dashboard</h1><p>All systems go</p>'; }, 150);</script>
</body></html>`)
	})
	mux.HandleFunc("GET /broken", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, `<!doctype html><html><body><div id="app">Loading…</div>
<script>setTimeout(() => { undefinedFunction(); document.getElementById('app').innerHTML = '<h1 class="ready">Dashboard</h1>'; }, 50);</script>
</body></html>`)
	})
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, `<!doctype html><html><body><form id="f">
<input id="user" name="user"><input id="password" name="password" type="password"><button id="go" type="submit">Sign in</button></form>
<p id="msg"></p>
<script>document.getElementById('f').addEventListener('submit', async (e) => {
  e.preventDefault();
  const r = await fetch('/api/login', {method: 'POST', headers: {'Content-Type': 'application/json'},
    body: JSON.stringify({user: document.getElementById('user').value, password: document.getElementById('password').value})});
  if (r.ok) { location.href = '/home'; } else { document.getElementById('msg').textContent = 'Wrong password'; }
});</script></body></html>`)
	})
	mux.HandleFunc("POST /api/login", func(w http.ResponseWriter, r *http.Request) {
		var in struct{ User, Password string }
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.User != "ada" || in.Password != password {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: "session", Value: "ok", Path: "/"})
	})
	mux.HandleFunc("GET /home", func(w http.ResponseWriter, r *http.Request) {
		if c, err := r.Cookie("session"); err != nil || c.Value != "ok" {
			http.Redirect(w, r, "/login", http.StatusFound)
			return
		}
		fmt.Fprint(w, `<!doctype html><html><body><div id="root"></div><script>document.getElementById('root').textContent = 'Welcome back, Ada';</script></body></html>`)
	})
	mux.HandleFunc("GET /status500", func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "boom", http.StatusInternalServerError)
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts
}

// browserEnv is a test Env whose browser checks use the chromium of the
// browser tests (failing or skipping the test without one).
func browserEnv(t testing.TB) *Env {
	t.Helper()
	env := testEnv()
	env.Browsers = &Browsers{Path: testutil.Chromium(t)}
	return env
}

// remoteBrowser starts a Chromium that serves the DevTools protocol on a
// loopback port, as a remote browser of a region does, and returns its
// WebSocket URL.
func remoteBrowser(t *testing.T) string {
	t.Helper()
	path := testutil.Chromium(t)
	// Not t.TempDir: Chromium's helper processes may still write into the
	// profile for a moment after the browser is killed, and t.TempDir's
	// cleanup fails the test on a directory that is not empty.
	dir, err := os.MkdirTemp("", "remote-browser-")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, path, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
		"--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0", "--user-data-dir="+dir, "about:blank")
	// Its own process group, killed whole: the renderer and zygote
	// processes go with the browser.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		for i := 0; ; i++ {
			if err := os.RemoveAll(dir); err == nil || i == 50 {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "DevTools listening on "); ok {
				found <- strings.TrimSpace(u)
			}
		}
	}()
	select {
	case u := <-found:
		return u
	case <-time.After(30 * time.Second):
		t.Fatal("chromium did not announce its DevTools endpoint")
	}
	return ""
}

func browserDetailsOf(t *testing.T, res probeapi.Result) browserDetails {
	t.Helper()
	var d browserDetails
	if err := json.Unmarshal(res.Details, &d); err != nil {
		t.Fatalf("details %s: %v", res.Details, err)
	}
	return d
}

// TestBrowserCheck runs browser checks in a real headless Chromium, local
// and remote, against pages that render with JavaScript.
func TestBrowserCheck(t *testing.T) {
	const password = "s3cret-Passw0rd"
	site := renderingSite(t, password)
	local := browserEnv(t)
	remoteEnv := testEnv()
	remoteEnv.Browsers = &Browsers{}
	remoteEnv.Browsers.Configure(&probeapi.RegionBrowser{Endpoint: remoteBrowser(t), MaxConcurrent: 1})
	for _, env := range []struct {
		name string
		env  *Env
	}{{"local", local}, {"remote", remoteEnv}} {
		t.Run(env.name, func(t *testing.T) {
			t.Run("rendered by script is up", func(t *testing.T) {
				res := run(t, probeapi.Assignment{Type: string(monv1.MonitorBrowser), URL: site.URL + "/app", Config: monv1.MonitorSpec{
					Browser: &monv1.BrowserConfig{WaitForSelector: "h1.ready", WaitForText: "All systems go"}}}, env.env)
				wantStatus(t, res, probeapi.StatusUp)
				d := browserDetailsOf(t, res)
				if d.Browser != env.name || d.FailedStep != nil || len(d.Steps) != 1 || !d.Steps[0].Passed {
					t.Errorf("details %+v", d)
				}
				if d.Timings == nil || d.Timings.LoadMs <= 0 || d.Timings.FirstByteMs <= 0 {
					t.Errorf("timings %+v, want the navigation timing of the page", d.Timings)
				}
				if res.StatusCode == nil || *res.StatusCode != 200 || len(res.Screenshot) != 0 {
					t.Errorf("status code %v, screenshot of %d bytes", res.StatusCode, len(res.Screenshot))
				}
			})
			t.Run("script that fails to render is down with a screenshot", func(t *testing.T) {
				res := run(t, probeapi.Assignment{Type: string(monv1.MonitorBrowser), URL: site.URL + "/broken", TimeoutMs: 20000, Config: monv1.MonitorSpec{
					Browser: &monv1.BrowserConfig{WaitForSelector: "h1.ready"}}}, env.env)
				wantStatus(t, res, probeapi.StatusDown)
				d := browserDetailsOf(t, res)
				if d.FailedStep == nil || *d.FailedStep != 0 || !strings.Contains(res.ErrorMessage, "load: wait for h1.ready") {
					t.Errorf("failed step %v, error %q", d.FailedStep, res.ErrorMessage)
				}
				if !bytes.HasPrefix(res.Screenshot, []byte{0xff, 0xd8, 0xff}) || len(res.Screenshot) > probeapi.MaxScreenshotBytes || d.ScreenshotBytes != len(res.Screenshot) {
					t.Errorf("screenshot of %d bytes (details %d), want a JPEG of at most %d", len(res.Screenshot), d.ScreenshotBytes, probeapi.MaxScreenshotBytes)
				}
				if testing.Verbose() {
					_ = os.WriteFile(filepath.Join(t.TempDir(), "broken.jpg"), res.Screenshot, 0o600)
				}
			})
			t.Run("failing step is reported with its index", func(t *testing.T) {
				res := run(t, probeapi.Assignment{Type: string(monv1.MonitorBrowser), URL: site.URL + "/app", TimeoutMs: 20000, Config: monv1.MonitorSpec{
					Browser: &monv1.BrowserConfig{WaitForSelector: "h1.ready", Steps: []monv1.BrowserStep{
						{Action: monv1.BrowserEvaluate, Expression: "document.querySelectorAll('h1').length === 1"},
						{Name: "rows", Action: monv1.BrowserEvaluate, Expression: "Promise.resolve(document.querySelectorAll('tr').length > 3)"},
					}}}}, env.env)
				wantStatus(t, res, probeapi.StatusDown)
				d := browserDetailsOf(t, res)
				if res.ErrorType != probeapi.ErrorStep || d.FailedStep == nil || *d.FailedStep != 2 || len(d.Steps) != 3 || !d.Steps[1].Passed ||
					!strings.HasPrefix(res.ErrorMessage, "step 2 (rows): expression is false") {
					t.Errorf("%s %q, details %+v", res.ErrorType, res.ErrorMessage, d)
				}
				if len(res.Screenshot) == 0 {
					t.Error("no screenshot of the failed step")
				}
			})
			t.Run("log-in flow", func(t *testing.T) {
				login := func(pw string) probeapi.Result {
					return run(t, probeapi.Assignment{Type: string(monv1.MonitorBrowser), URL: site.URL + "/login", TimeoutMs: 30000, Config: monv1.MonitorSpec{
						Browser: &monv1.BrowserConfig{WaitForSelector: "#user", Credentials: []monv1.HTTPHeader{{Name: "password", Value: ptr(pw)}}, Steps: []monv1.BrowserStep{
							{Action: monv1.BrowserFill, Selector: "#user", Value: ptr("ada")},
							{Action: monv1.BrowserFill, Selector: "#password", Credential: "password"},
							{Action: monv1.BrowserClick, Selector: "#go"},
							{Name: "signed in", Action: monv1.BrowserExpectText, Text: "Welcome back"},
						}}}}, env.env)
				}
				res := login(password)
				wantStatus(t, res, probeapi.StatusUp)
				res = login("wrong-password")
				wantStatus(t, res, probeapi.StatusDown)
				if !strings.HasPrefix(res.ErrorMessage, "step 4 (signed in)") {
					t.Errorf("error %q", res.ErrorMessage)
				}
			})
			t.Run("error status", func(t *testing.T) {
				res := run(t, probeapi.Assignment{Type: string(monv1.MonitorBrowser), URL: site.URL + "/status500"}, env.env)
				wantStatus(t, res, probeapi.StatusDown)
				if res.ErrorType != probeapi.ErrorHTTPStatus || res.StatusCode == nil || *res.StatusCode != 500 {
					t.Errorf("%s %q code %v", res.ErrorType, res.ErrorMessage, res.StatusCode)
				}
			})
		})
	}
}

// TestBrowserFillStaysOnItsOrigin: a fill step on a page of another origin
// than the monitor's (here a redirect from 127.0.0.1 to localhost) types
// nothing and fails.
func TestBrowserFillStaysOnItsOrigin(t *testing.T) {
	site := renderingSite(t, "pw")
	env := browserEnv(t)
	away := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, strings.Replace(site.URL, "127.0.0.1", "localhost", 1)+"/login", http.StatusFound)
	}))
	t.Cleanup(away.Close)
	res := run(t, probeapi.Assignment{Type: string(monv1.MonitorBrowser), URL: away.URL + "/start", TimeoutMs: 20000, Config: monv1.MonitorSpec{
		Browser: &monv1.BrowserConfig{WaitForSelector: "#password", Steps: []monv1.BrowserStep{
			{Action: monv1.BrowserFill, Selector: "#password", Value: ptr("pw")},
		}}}}, env)
	wantStatus(t, res, probeapi.StatusDown)
	if !strings.Contains(res.ErrorMessage, "the value is not typed") {
		t.Errorf("error %q", res.ErrorMessage)
	}
}

// TestBrowserWithoutBrowser: a region without a browser reports the check
// blocked (the region abstains), saying what is missing.
func TestBrowserWithoutBrowser(t *testing.T) {
	env := testEnv()
	env.Browsers = &Browsers{Path: filepath.Join(t.TempDir(), "no-chromium")}
	res := run(t, probeapi.Assignment{Type: string(monv1.MonitorBrowser), URL: "http://127.0.0.1:1/"}, env)
	wantStatus(t, res, probeapi.StatusBlocked)
	if res.ErrorType != probeapi.ErrorNoBrowser || !strings.Contains(res.ErrorMessage, "spec.browser.endpoint") {
		t.Errorf("%s %q", res.ErrorType, res.ErrorMessage)
	}
}

// TestBrowserConcurrency: a region's bound holds the checks beyond it
// until a slot frees.
func TestBrowserConcurrency(t *testing.T) {
	b := &Browsers{}
	b.Configure(&probeapi.RegionBrowser{MaxConcurrent: 1})
	release, err := b.acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := b.acquire(ctx); err == nil {
		t.Fatal("a second check got a slot of a region that allows one")
	}
	release()
	r2, err := b.acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r2()
}
