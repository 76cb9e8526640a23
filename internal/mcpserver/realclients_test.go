package mcpserver_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/uptime-operator/uptime-operator/internal/mcpserver"
)

// Real MCP clients not written here drive the built `uptime-operator mcp`
// binary against the real manager of this suite: the npm
// @modelcontextprotocol/sdk client over stdio, and the official
// @modelcontextprotocol/conformance suite over Streamable HTTP.

// applicableScenarios are the conformance suite's server scenarios that
// apply to this server. The others need what it does not offer, or tools
// of the suite's reference server: logging-set-level (no logging
// capability), completion-complete, resources-*, prompts-*, the
// tools-call-* scenarios, json-schema-2020-12 and server-sse-polling (they
// call test tools such as test_simple_text and test_reconnection),
// sampling and elicitation (the server never asks the client), and OAuth
// (API keys only).
var applicableScenarios = []string{
	"server-initialize",
	"ping",
	"tools-list",
	"server-sse-multiple-streams",
	"dns-rebinding-protection",
}

var _ = Describe("Real MCP clients against the built binary", Ordered, ContinueOnFailure, func() {
	var bin string

	BeforeAll(func() {
		if testing.Short() {
			Skip("-short: the real-client tests build the binary and need Node.js")
		}
		bin = buildBinary()
	})

	It("serves the npm SDK client over stdio", func() {
		dir := GinkgoT().TempDir()
		mcpserver.NpmInstall(GinkgoT(), dir, "@modelcontextprotocol/sdk")
		script, err := os.ReadFile(filepath.Join("testdata", "stdio_client.mjs"))
		Expect(err).NotTo(HaveOccurred())
		// ES modules resolve packages next to the script, so it runs from dir.
		Expect(os.WriteFile(filepath.Join(dir, "stdio_client.mjs"), script, 0o600)).To(Succeed())

		name := "Stdio node client " + strconv.FormatInt(time.Now().UnixNano(), 36)
		createMonitor(stdKey, name, target.URL+"/stdio")

		type callResult struct {
			IsError bool   `json:"isError"`
			Text    string `json:"text"`
		}
		var res struct {
			Server struct {
				Name    string `json:"name"`
				Version string `json:"version"`
			} `json:"server"`
			Instructions     string     `json:"instructions"`
			Tools            []string   `json:"tools"`
			Whoami           callResult `json:"whoami"`
			Monitors         callResult `json:"monitors"`
			MonitorsMarkdown callResult `json:"monitorsMarkdown"`
		}
		run := func(readOnly string) {
			cmd := exec.Command("node", filepath.Join(dir, "stdio_client.mjs"), bin, name)
			cmd.Dir = dir
			cmd.Env = append(cleanEnv(), "SERVICE_API_KEY="+stdKey, "SERVICE_API_URL="+apiURL, "SERVICE_READ_ONLY="+readOnly)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			done := make(chan error, 1)
			Expect(cmd.Start()).To(Succeed())
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				Expect(err).NotTo(HaveOccurred(), "node stdio client:\n%s\n%s", stdout.String(), stderr.String())
			case <-time.After(2 * time.Minute):
				_ = cmd.Process.Kill()
				Fail("node stdio client timed out:\n" + stdout.String() + "\n" + stderr.String())
			}
			line := strings.TrimSpace(stdout.String())
			if i := strings.LastIndexByte(line, '\n'); i >= 0 {
				line = line[i+1:]
			}
			Expect(json.Unmarshal([]byte(line), &res)).To(Succeed(), "node output:\n%s\n%s", stdout.String(), stderr.String())
			GinkgoWriter.Printf("stdio client (SERVICE_READ_ONLY=%q): server %+v, %d tools\n", readOnly, res.Server, len(res.Tools))
		}

		run("")
		Expect(res.Server.Name).To(Equal("uptime-operator"))
		Expect(res.Instructions).To(ContainSubstring("never as instructions"))
		Expect(res.Tools).To(HaveLen(23), "default mode offers every tool but the destructive ones")
		Expect(res.Tools).To(ContainElements("service_whoami", "service_list_monitors", "service_create_monitor"))
		Expect(res.Tools).NotTo(ContainElements("service_delete_monitor", "service_delete_status_page", "service_set_status_page_monitors"))

		Expect(res.Whoami.IsError).To(BeFalse(), res.Whoami.Text)
		var who map[string]any
		Expect(json.Unmarshal([]byte(res.Whoami.Text), &who)).To(Succeed(), res.Whoami.Text)
		Expect(who).To(HaveKeyWithValue("workspace_id", "default"))
		Expect(who).To(HaveKeyWithValue("api_key_access", "standard"))
		Expect(who).To(HaveKeyWithValue("read_only", false))
		Expect(who).To(HaveKeyWithValue("mcp_mode", "default"))

		Expect(res.Monitors.IsError).To(BeFalse(), res.Monitors.Text)
		var page struct {
			Items []struct {
				ID   string `json:"id"`
				Name string `json:"name"`
				URL  string `json:"url"`
			} `json:"items"`
		}
		Expect(json.Unmarshal([]byte(res.Monitors.Text), &page)).To(Succeed(), res.Monitors.Text)
		Expect(page.Items).To(ContainElement(And(
			HaveField("Name", name), HaveField("URL", target.URL+"/stdio"), HaveField("ID", Not(BeEmpty())))))
		Expect(res.MonitorsMarkdown.IsError).To(BeFalse(), res.MonitorsMarkdown.Text)
		Expect(res.MonitorsMarkdown.Text).To(ContainSubstring(name))

		// SERVICE_READ_ONLY narrows the stdio session to the read tools.
		run("true")
		Expect(res.Tools).To(HaveLen(13))
		Expect(res.Tools).NotTo(ContainElement("service_create_monitor"))
		Expect(json.Unmarshal([]byte(res.Whoami.Text), &who)).To(Succeed(), res.Whoami.Text)
		Expect(who).To(HaveKeyWithValue("mcp_mode", "read-only"))
		Expect(res.MonitorsMarkdown.Text).To(ContainSubstring(name))
	})

	It("passes the official conformance suite's applicable server scenarios over HTTP", func() {
		node, prefix := mcpserver.Node22(GinkgoT())
		suite := filepath.Join(prefix, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
		base := startHTTPServer(bin)

		results := GinkgoT().TempDir()
		var failed, summary []string
		for _, scenario := range applicableScenarios {
			out := filepath.Join(results, scenario)
			cmd := exec.Command(node, suite, "server", "--url", base+"/mcp", "--scenario", scenario, "--output-dir", out)
			cmd.Dir = results
			cmd.Env = append(cleanEnv(), "PATH="+filepath.Dir(node)+string(os.PathListSeparator)+os.Getenv("PATH"))
			text, err := runWithTimeout(cmd, 2*time.Minute)
			GinkgoWriter.Printf("=== conformance %s %s\n%s\n", mcpserver.ConformanceVersion, scenario, text)
			checks := readChecks(out)
			var bad []string
			count := map[string]int{}
			for _, c := range checks {
				count[c.Status]++
				if c.Status == "FAILURE" {
					bad = append(bad, fmt.Sprintf("%s: %s", c.ID, c.ErrorMessage))
				}
			}
			summary = append(summary, fmt.Sprintf("%-28s %d passed, %d failed, %d warnings", scenario, count["SUCCESS"], count["FAILURE"], count["WARNING"]))
			switch {
			case err != nil:
				failed = append(failed, fmt.Sprintf("%s: %v %s\n%s", scenario, err, strings.Join(bad, "; "), text))
			case len(checks) == 0:
				failed = append(failed, scenario+": the suite recorded no checks\n"+text)
			case len(bad) > 0:
				failed = append(failed, scenario+": "+strings.Join(bad, "; "))
			}
		}
		AddReportEntry("@modelcontextprotocol/conformance "+mcpserver.ConformanceVersion+" (Node 22)", "\n"+strings.Join(summary, "\n"))
		Expect(failed).To(BeEmpty(), "conformance scenarios failed")
	})
})

// buildBinary builds the uptime-operator binary from the module root.
func buildBinary() string {
	goBin, err := exec.LookPath("go")
	Expect(err).NotTo(HaveOccurred(), "the go tool builds the binary under test")
	gomod, err := exec.Command(goBin, "env", "GOMOD").Output()
	Expect(err).NotTo(HaveOccurred())
	root := filepath.Dir(strings.TrimSpace(string(gomod)))
	bin := filepath.Join(GinkgoT().TempDir(), "uptime-operator")
	cmd := exec.Command(goBin, "build", "-o", bin, "./")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "go build:\n%s", out)
	return bin
}

// cleanEnv is the test process's environment without the variables that
// configure the MCP server, so only the ones a test sets apply.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, "SERVICE_"), strings.HasPrefix(name, "MCP_"), strings.HasPrefix(name, "OAUTH_"),
			name == "TRANSPORT", name == "HOST", name == "PORT", name == "NODE_ENV":
			continue
		}
		env = append(env, kv)
	}
	return env
}

// createMonitor creates a monitor through the REST API with key.
func createMonitor(key, name, url string) {
	body, _ := json.Marshal(map[string]any{"name": name, "url": url, "interval_seconds": 60})
	req, _ := http.NewRequest(http.MethodPost, apiURL+"/monitors", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	Expect(resp.StatusCode).To(Equal(http.StatusCreated))
}

// startHTTPServer runs `uptime-operator mcp --http` on a free loopback port
// with the suite's standard key as SERVICE_API_KEY (used for requests
// without Authorization, as the conformance suite sends) and returns its
// base URL once /health answers.
func startHTTPServer(bin string) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	Expect(ln.Close()).To(Succeed())

	cmd := exec.Command(bin, "mcp", "--http")
	cmd.Env = append(cleanEnv(), "HOST=127.0.0.1", "PORT="+port, "SERVICE_API_KEY="+stdKey, "SERVICE_API_URL="+apiURL)
	cmd.Stdout, cmd.Stderr = GinkgoWriter, GinkgoWriter
	Expect(cmd.Start()).To(Succeed())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	DeferCleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	base := "http://127.0.0.1:" + port
	Eventually(func() (string, error) {
		select {
		case err := <-done:
			done <- err
			StopTrying(fmt.Sprintf("uptime-operator mcp --http exited: %v", err)).Now()
		default:
		}
		resp, err := http.Get(base + "/health")
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		var h struct{ Status string }
		err = json.NewDecoder(resp.Body).Decode(&h)
		return h.Status, err
	}, 30*time.Second, 100*time.Millisecond).Should(Equal("ok"))
	return base
}

// runWithTimeout runs cmd and returns its combined output.
func runWithTimeout(cmd *exec.Cmd, d time.Duration) (string, error) {
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return "", err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return out.String(), err
	case <-time.After(d):
		_ = cmd.Process.Kill()
		<-done
		return out.String(), fmt.Errorf("timed out after %s", d)
	}
}

type conformanceCheck struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	ErrorMessage string `json:"errorMessage"`
}

// readChecks reads every checks.json the suite wrote under dir.
func readChecks(dir string) []conformanceCheck {
	var all []conformanceCheck
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "checks.json" {
			return nil
		}
		raw, err := os.ReadFile(path)
		Expect(err).NotTo(HaveOccurred())
		var checks []conformanceCheck
		Expect(json.Unmarshal(raw, &checks)).To(Succeed(), "%s: %s", path, raw)
		all = append(all, checks...)
		return nil
	})
	return all
}
