package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apikeys"
	"github.com/uptime-operator/uptime-operator/internal/manager"
	"github.com/uptime-operator/uptime-operator/internal/testenv"
)

func TestParseSpecs(t *testing.T) {
	cases := map[string]struct {
		in   string
		keys []string
	}{
		"monitors list": {"monitors:\n- key: a\n  name: A\n- key: b\n  name: B\n", []string{"a", "b"}},
		"yaml stream":   {"key: a\nname: A\n---\n# comment only\n---\nkey: b\nname: B\n", []string{"a", "b"}},
		"json object":   {`{"monitors": [{"key": "a", "name": "A"}]}`, []string{"a"}},
		"json list":     {`[{"key": "a"}, {"key": "b"}]`, []string{"a", "b"}},
		"list document": {"- key: a\n- key: b\n", []string{"a", "b"}},
	}
	for name, tc := range cases {
		specs, err := parseSpecs(strings.NewReader(tc.in), "f.yaml")
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		var keys []string
		for _, s := range specs {
			var m map[string]any
			if err := json.Unmarshal(s.raw, &m); err != nil {
				t.Fatal(err)
			}
			keys = append(keys, m["key"].(string))
		}
		if strings.Join(keys, ",") != strings.Join(tc.keys, ",") {
			t.Errorf("%s: keys = %v, want %v", name, keys, tc.keys)
		}
	}
	for _, bad := range []string{"monitors: 3\n", "just a string\n", "key: [unclosed\n"} {
		if _, err := parseSpecs(strings.NewReader(bad), "bad.yaml"); err == nil {
			t.Errorf("parseSpecs(%q) = nil error", bad)
		}
	}
}

func TestCheckAPIURLAndExitCode(t *testing.T) {
	for u, ok := range map[string]bool{"https://uptime.example.com": true, "http://127.0.0.1:8080": true, "http://localhost:1": true,
		"http://[::1]:8080": true, "http://uptime.example.com": false, "ftp://x": false, "": false, "::": false} {
		if err := checkAPIURL(u); (err == nil) != ok {
			t.Errorf("checkAPIURL(%q) = %v", u, err)
		}
	}
	if ExitCode(nil) != 0 || ExitCode(errors.New("x")) != 1 || ExitCode(&ExitError{Code: 2, Err: errors.New("changes")}) != 2 {
		t.Error("ExitCode mapping")
	}
}

func TestApplyEnvtest(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Skip("KUBEBUILDER_ASSETS is not set")
	}
	RegisterFailHandler(Fail)
	RunSpecs(t, "apply against the API server (envtest)")
}

var _ = Describe("uptime-operator apply", Ordered, func() {
	var (
		env    *testenv.Env
		ctx    = context.Background()
		apiURL string
		apiKey string
		dir    string
	)
	BeforeAll(func() {
		logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
		var err error
		env, err = testenv.Start(manager.Options{APIListen: "127.0.0.1:0", Store: filepath.Join(GinkgoT().TempDir(), "uptime.db"),
			AllowPrivateTargets: true})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(env.Stop)
		Expect(env.Client.Create(ctx, &monv1.ProbeRegion{ObjectMeta: metav1.ObjectMeta{Name: "eu-1"}})).To(Succeed())
		actx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		addr, err := env.Manager.APIAddr(actx)
		Expect(err).NotTo(HaveOccurred())
		apiURL = "http://" + addr
		apiKey, _, err = apikeys.Create(ctx, env.Client, "default", "ci", apikeys.Standard)
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() int {
			req, _ := http.NewRequest(http.MethodGet, apiURL+"/automation/whoami", nil)
			req.Header.Set("Authorization", "Bearer "+apiKey)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return 0
			}
			resp.Body.Close()
			return resp.StatusCode
		}).WithTimeout(30 * time.Second).Should(Equal(http.StatusOK))
		dir = GinkgoT().TempDir()
	})

	// run runs apply with the API from the environment variables, as CI does.
	run := func(args ...string) (string, int) {
		var out, errOut bytes.Buffer
		env := map[string]string{"UPTIME_API_URL": apiURL, "UPTIME_API_KEY": apiKey}
		err := applyWithEnv(ctx, args, func(k string) string { return env[k] }, strings.NewReader(""), &out, &errOut)
		if err != nil {
			out.WriteString("ERROR: " + err.Error() + "\n")
		}
		GinkgoWriter.Printf("apply %v:\n%s%s", args, out.String(), errOut.String())
		return out.String(), ExitCode(err)
	}
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		Expect(os.WriteFile(p, []byte(content), 0o600)).To(Succeed())
		return p
	}
	keyed := func() map[string]*monv1.Monitor {
		var list monv1.MonitorList
		Expect(env.Client.List(ctx, &list, client.InNamespace("default"))).To(Succeed())
		out := map[string]*monv1.Monitor{}
		for i := range list.Items {
			if m := &list.Items[i]; m.Spec.Key != "" && m.DeletionTimestamp == nil {
				out[m.Spec.Key] = m
			}
		}
		return out
	}

	It("creates the monitors of a file", func() {
		f := write("monitors.yaml", `monitors:
- key: web
  name: Website
  url: https://93.184.216.34/
  interval_seconds: 60
  tags: [prod]
- key: api
  name: API
  url: https://93.184.216.34/api
`)
		out, code := run("-f", f)
		Expect(code).To(Equal(0), out)
		Expect(out).To(ContainSubstring(`+   web: http "Website"`))
		Expect(out).To(ContainSubstring("interval_seconds: 60"))
		Expect(out).To(ContainSubstring("2 to create, 0 to update, 0 to replace, 0 to delete, 0 unchanged."))
		Expect(out).To(ContainSubstring("Applied: 2 applied"))
		ms := keyed()
		Expect(ms).To(HaveKey("web"))
		Expect(ms).To(HaveKey("api"))
		Expect(ms["web"].Spec.IntervalSeconds).To(BeEquivalentTo(60))
	})

	It("reports everything unchanged on a second apply", func() {
		out, code := run("-f", filepath.Join(dir, "monitors.yaml"))
		Expect(code).To(Equal(0), out)
		Expect(out).To(ContainSubstring("0 to create, 0 to update, 0 to replace, 0 to delete, 2 unchanged."))
		Expect(out).To(ContainSubstring("Nothing to apply."))
	})

	It("previews an edit with --dry-run, exit code 2 with --exit-code, then updates", func() {
		Expect(os.Remove(filepath.Join(dir, "monitors.yaml"))).To(Succeed())
		specs := filepath.Join(dir, "specs")
		Expect(os.Mkdir(specs, 0o700)).To(Succeed())
		Expect(os.WriteFile(filepath.Join(specs, "web.yaml"), []byte(`key: web
name: Website
url: https://93.184.216.34/
interval_seconds: 120
tags: [prod, web]
---
key: api
name: API
url: https://93.184.216.34/api
`), 0o600)).To(Succeed())
		Expect(os.WriteFile(filepath.Join(specs, "README.md"), []byte("not a spec"), 0o600)).To(Succeed())

		out, code := run("-f", specs, "--dry-run", "--exit-code")
		Expect(code).To(Equal(2), out)
		Expect(out).To(ContainSubstring(`~   web: http "Website"`))
		Expect(out).To(ContainSubstring("interval_seconds: 60 -> 120"))
		Expect(out).To(ContainSubstring(`tags: ["prod"] -> ["prod","web"]`))
		Expect(out).To(ContainSubstring("1 unchanged."))
		Expect(keyed()["web"].Spec.IntervalSeconds).To(BeEquivalentTo(60))

		out, code = run("-f", specs, "--dry-run")
		Expect(code).To(Equal(0), out)

		out, code = run("-f", specs)
		Expect(code).To(Equal(0), out)
		Expect(out).To(ContainSubstring("Applied: 1 applied, 1 unchanged, 0 failed, 0 skipped."))
		Expect(keyed()["web"].Spec.IntervalSeconds).To(BeEquivalentTo(120))
	})

	It("deletes unlisted keyed monitors with --prune only after --yes", func() {
		f := write("only-web.json", `{"monitors": [{"key": "web", "name": "Website", "url": "https://93.184.216.34/", "interval_seconds": 120, "tags": ["prod", "web"]}]}`)
		out, code := run("-f", f)
		Expect(code).To(Equal(0), out)
		Expect(out).To(ContainSubstring("not in the list and are kept"))
		Expect(keyed()).To(HaveKey("api"))

		out, code = run("-f", f, "--prune")
		Expect(code).To(Equal(1), out)
		Expect(out).To(ContainSubstring(`-   api: http "API"`))
		Expect(out).To(ContainSubstring("--yes"))
		Expect(keyed()).To(HaveKey("api"))

		out, code = run("-f", f, "--prune", "--yes")
		Expect(code).To(Equal(0), out)
		Expect(out).To(ContainSubstring("Applied: 1 applied, 1 unchanged"))
		Expect(keyed()).NotTo(HaveKey("api"))
		Expect(keyed()).To(HaveKey("web"))
	})

	It("refuses with PLAN_CHANGED when the monitors change between plan and apply", func() {
		f := write("concurrent.yaml", "monitors:\n- key: web\n  name: Website\n  url: https://93.184.216.34/\n  interval_seconds: 300\n")
		target, err := url.Parse(apiURL)
		Expect(err).NotTo(HaveOccurred())
		rp := httputil.NewSingleHostReverseProxy(target)
		proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/automation/monitors/apply" {
				// Someone else edits the monitor after the plan was reviewed.
				m := keyed()["web"]
				patch := client.MergeFrom(m.DeepCopy())
				m.Spec.IntervalSeconds = 600
				Expect(env.Client.Patch(ctx, m, patch)).To(Succeed())
			}
			rp.ServeHTTP(w, r)
		}))
		defer proxy.Close()
		out, code := run("-f", f, "--api-url", proxy.URL)
		Expect(code).To(Equal(1), out)
		Expect(out).To(ContainSubstring("409"))
		Expect(out).To(ContainSubstring("PLAN_CHANGED"))
		Expect(keyed()["web"].Spec.IntervalSeconds).To(BeEquivalentTo(600))
	})

	It("fails with exit code 1 and names the file of an invalid spec", func() {
		f := write("bad.yaml", "monitors:\n- key: web\n  name: Website\n  interval_seconds: 5\n")
		out, code := run("-f", f)
		Expect(code).To(Equal(1), out)
		Expect(out).To(ContainSubstring("monitors[0].interval_seconds (" + f + ", item 1)"))
		Expect(keyed()["web"].Spec.IntervalSeconds).To(BeEquivalentTo(600))

		out, code = run("-f", f, "--api-key", "sk_wrong")
		Expect(code).To(Equal(1))
		Expect(out).To(ContainSubstring("401: Invalid API key"))
		_, code = run("-f", f, "--api-url", "http://uptime.example.com")
		Expect(code).To(Equal(1))
		_, code = run()
		Expect(code).To(Equal(1))
	})
})
