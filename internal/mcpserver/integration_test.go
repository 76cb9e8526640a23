package mcpserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apikeys"
	"github.com/uptime-operator/uptime-operator/internal/credentials"
	"github.com/uptime-operator/uptime-operator/internal/manager"
	"github.com/uptime-operator/uptime-operator/internal/mcpserver"
	"github.com/uptime-operator/uptime-operator/internal/testenv"
)

// The integration suite runs the real manager (envtest + SQLite), the MCP
// HTTP server against its REST listener, and drives it with the go-sdk
// client.

var (
	ctx       = context.Background()
	env       *testenv.Env
	apiURL    string
	mcpURL    string
	stdKey    string
	roKey     string
	target    *httptest.Server
	mcpServer *httptest.Server
)

func TestIntegration(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		home, _ := os.UserHomeDir()
		dir := filepath.Join(home, ".local/share/kubebuilder-envtest/k8s/1.37.2-linux-amd64")
		if _, err := os.Stat(filepath.Join(dir, "kube-apiserver")); err != nil {
			t.Skip("KUBEBUILDER_ASSETS is not set and no envtest binaries are installed")
		}
		t.Setenv("KUBEBUILDER_ASSETS", dir)
	}
	RegisterFailHandler(Fail)
	RunSpecs(t, "MCP server against the real manager (envtest + SQLite)")
}

var _ = BeforeSuite(func() {
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	var err error
	env, err = testenv.Start(manager.Options{APIListen: "127.0.0.1:0", Store: filepath.Join(GinkgoT().TempDir(), "mcp.db"), AllowPrivateTargets: true})
	Expect(err).NotTo(HaveOccurred())
	addr, err := env.Manager.APIAddr(ctx)
	Expect(err).NotTo(HaveOccurred())
	apiURL = "http://" + addr
	stdKey, _, err = apikeys.Create(ctx, env.Client, "default", "t", apikeys.Standard)
	Expect(err).NotTo(HaveOccurred())
	roKey, _, err = apikeys.Create(ctx, env.Client, "default", "ro", apikeys.ReadOnly)
	Expect(err).NotTo(HaveOccurred())

	target = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }))
	srv, err := mcpserver.New(mcpserver.Options{APIURL: apiURL, AllowDestructiveHeader: true, Version: "test"})
	Expect(err).NotTo(HaveOccurred())
	mcpServer = httptest.NewServer(srv.HTTPHandler())
	mcpURL = mcpServer.URL + "/mcp"
	// The API key cache of the manager may take a moment to see new keys.
	Eventually(func() int {
		req, _ := http.NewRequest(http.MethodGet, apiURL+"/automation/whoami", nil)
		req.Header.Set("Authorization", "Bearer "+stdKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}, 30*time.Second, 200*time.Millisecond).Should(Equal(http.StatusOK))
})

var _ = AfterSuite(func() {
	if mcpServer != nil {
		mcpServer.Close()
	}
	if target != nil {
		target.Close()
	}
	if env != nil {
		env.Stop()
	}
})

type headers http.Header

func (h headers) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, vs := range h {
		r.Header[k] = vs
	}
	return http.DefaultTransport.RoundTrip(r)
}

func session(key string, kv ...string) *mcp.ClientSession {
	h := http.Header{"Authorization": {"Bearer " + key}}
	for i := 0; i < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	tr := &mcp.StreamableClientTransport{Endpoint: mcpURL, DisableStandaloneSSE: true, HTTPClient: &http.Client{Transport: headers(h)}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "integration", Version: "1"}, nil).Connect(ctx, tr, nil)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(cs.Close)
	return cs
}

func call(cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	Expect(err).NotTo(HaveOccurred())
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// callJSON calls a tool with response_format json and decodes the answer.
func callJSON(cs *mcp.ClientSession, name string, args map[string]any, out any) {
	if args == nil {
		args = map[string]any{}
	}
	args["response_format"] = "json"
	text, isErr := call(cs, name, args)
	Expect(isErr).To(BeFalse(), text)
	Expect(json.Unmarshal([]byte(text), out)).To(Succeed(), text)
}

func toolCount(cs *mcp.ClientSession) int {
	res, err := cs.ListTools(ctx, nil)
	Expect(err).NotTo(HaveOccurred())
	return len(res.Tools)
}

type monitorJSON struct {
	ID            string         `json:"id"`
	Name          string         `json:"name"`
	IsActive      bool           `json:"is_active"`
	CurrentStatus string         `json:"current_status"`
	Config        map[string]any `json:"config"`
}

func monitorNamed(cs *mcp.ClientSession, name string) monitorJSON {
	var page struct {
		Items []monitorJSON `json:"items"`
	}
	callJSON(cs, "service_list_monitors", map[string]any{"search": name}, &page)
	i := slices.IndexFunc(page.Items, func(m monitorJSON) bool { return m.Name == name })
	Expect(i).To(BeNumerically(">=", 0), "monitor %q not listed", name)
	return page.Items[i]
}

var _ = Describe("MCP tools over the real REST API", Ordered, func() {
	It("offers the tools of each mode", func() {
		Expect(toolCount(session(stdKey))).To(Equal(23))
		Expect(toolCount(session(stdKey, mcpserver.HeaderReadOnly, "true"))).To(Equal(13))
		Expect(toolCount(session(stdKey, mcpserver.HeaderAllowDestructive, "true"))).To(Equal(26))
	})

	It("refuses requests without a valid key", func() {
		req, _ := http.NewRequest(http.MethodPost, mcpURL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer sk_not_a_key")
		resp, err := http.DefaultClient.Do(req)
		Expect(err).NotTo(HaveOccurred())
		resp.Body.Close()
		Expect(resp.StatusCode).To(Equal(http.StatusUnauthorized))
		Expect(resp.Header.Get("WWW-Authenticate")).To(HavePrefix("Bearer"))
	})

	It("reports the workspace and key", func() {
		var who map[string]any
		callJSON(session(stdKey), "service_whoami", nil, &who)
		Expect(who).To(HaveKeyWithValue("workspace_id", "default"))
		Expect(who).To(HaveKeyWithValue("api_key_access", "standard"))
		Expect(who).To(HaveKeyWithValue("read_only", false))
		text, isErr := call(session(stdKey), "service_whoami", nil)
		Expect(isErr).To(BeFalse())
		Expect(text).To(ContainSubstring("standard"))
	})

	It("creates, lists, gets, pauses and resumes a monitor with redacted config", func() {
		cs := session(stdKey)
		text, isErr := call(cs, "service_create_monitor", map[string]any{
			"name": "MCP shop", "url": target.URL + "/health", "interval_seconds": 60, "tags": []any{"Shop"},
			"config": map[string]any{"method": "GET", "headers": map[string]any{"Authorization": "Bearer topsecret"}},
		})
		Expect(isErr).To(BeFalse(), text)
		Expect(text).NotTo(ContainSubstring("topsecret"))

		m := monitorNamed(cs, "MCP shop")
		var got map[string]any
		callJSON(cs, "service_get_monitor", map[string]any{"monitor_id": m.ID}, &got)
		raw, _ := json.Marshal(got)
		Expect(string(raw)).NotTo(ContainSubstring("topsecret"))
		Expect(got["config"].(map[string]any)["headers"]).To(HaveKeyWithValue("Authorization", mcpserver.Redacted))

		// [REDACTED] sent back keeps the stored value.
		text, isErr = call(cs, "service_update_monitor", map[string]any{"monitor_id": m.ID,
			"config": map[string]any{"method": "HEAD", "headers": map[string]any{"Authorization": mcpserver.Redacted}}})
		Expect(isErr).To(BeFalse(), text)
		req, _ := http.NewRequest(http.MethodGet, apiURL+"/monitors/"+m.ID, nil)
		req.Header.Set("Authorization", "Bearer "+stdKey)
		resp, err := http.DefaultClient.Do(req)
		Expect(err).NotTo(HaveOccurred())
		var stored monitorJSON
		Expect(json.NewDecoder(resp.Body).Decode(&stored)).To(Succeed())
		resp.Body.Close()
		Expect(stored.Config).To(HaveKeyWithValue("method", "HEAD"))
		Expect(stored.Config["headers"]).To(HaveKeyWithValue("Authorization", mcpserver.Redacted), "REST redacts too")
		var mons monv1.MonitorList
		Expect(env.Client.List(ctx, &mons, client.InNamespace("default"))).To(Succeed())
		var cr *monv1.Monitor
		for i := range mons.Items {
			if string(mons.Items[i].UID) == m.ID {
				cr = &mons.Items[i]
			}
		}
		Expect(cr).NotTo(BeNil())
		var sec corev1.Secret
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: credentials.SecretName(cr.Name)}, &sec)).To(Succeed())
		Expect(string(sec.Data["http.authorization"])).To(Equal("Bearer topsecret"), "the stored value was kept")

		text, isErr = call(cs, "service_pause_monitor", map[string]any{"monitor_id": m.ID})
		Expect(isErr).To(BeFalse(), text)
		Expect(monitorNamed(cs, "MCP shop").CurrentStatus).To(Equal("paused"))
		text, isErr = call(cs, "service_run_check", map[string]any{"monitor_id": m.ID})
		Expect(isErr).To(BeTrue())
		Expect(text).To(ContainSubstring("paused"))
		text, isErr = call(cs, "service_resume_monitor", map[string]any{"monitor_id": m.ID})
		Expect(isErr).To(BeFalse(), text)
		Expect(monitorNamed(cs, "MCP shop").IsActive).To(BeTrue())
	})

	// Issue 27, rows 1 and 2 through MCP: a Standard key's tools neither
	// name a Secret nor move a stored credential to a server of its own.
	It("drops a stored credential when an update moves the URL to another origin, and refuses secret_ref", func() {
		var mu sync.Mutex
		var seen []string
		own := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			seen = append(seen, r.Header.Get("Authorization"))
			mu.Unlock()
		}))
		DeferCleanup(own.Close)
		cs := session(stdKey)
		text, isErr := call(cs, "service_create_monitor", map[string]any{
			"name": "MCP billing", "url": target.URL + "/billing", "interval_seconds": 60,
			"config": map[string]any{"headers": map[string]any{"Authorization": "Bearer prod-billing-token"}},
		})
		Expect(isErr).To(BeFalse(), text)
		m := monitorNamed(cs, "MCP billing")
		text, isErr = call(cs, "service_update_monitor", map[string]any{"monitor_id": m.ID, "url": own.URL + "/collect"})
		Expect(isErr).To(BeFalse(), text)
		Expect(text).To(ContainSubstring("Warnings:"))
		Expect(text).To(ContainSubstring("config.headers.Authorization: the stored credential was dropped"))
		// This suite runs no probe agent, so a run-check is refused
		// (REGION_UNAVAILABLE); what a check would send is what is stored,
		// and the stored credential is gone. (internal/engine's trust test
		// runs the check end to end.)
		stored := monitorNamed(cs, "MCP billing")
		headers, _ := stored.Config["headers"].(map[string]any)
		Expect(headers).NotTo(HaveKey("Authorization"), "the credential did not follow the URL")
		var sec corev1.Secret
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: credentials.SecretName(crName(m.ID))}, &sec)
		if err == nil {
			Expect(sec.Data).NotTo(HaveKey("http.authorization"), "the stored value was dropped")
		} else {
			Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%v", err)
		}
		mu.Lock()
		for _, a := range seen {
			Expect(a).To(BeEmpty(), "no credential reached the new URL")
		}
		mu.Unlock()

		text, isErr = call(cs, "service_update_monitor", map[string]any{"monitor_id": m.ID,
			"config": map[string]any{"headers": map[string]any{"X-Db": map[string]any{"secret_ref": map[string]any{"name": "app-db", "key": "password"}}}}})
		Expect(isErr).To(BeTrue(), text)
		Expect(text).To(ContainSubstring("config.headers.X-Db"))
	})

	It("explains a monitor, and lists candidates when several match", func() {
		cs := session(stdKey)
		var res mcpserver.Explained
		callJSON(cs, "service_explain_incident", map[string]any{"monitor": "MCP shop"}, &res)
		Expect(res.Outcome).To(BeElementOf(mcpserver.OutcomeNoData, mcpserver.OutcomeHealthy, mcpserver.OutcomeFailingUnconfirmed))
		Expect(res.IncidentsTotal).To(Equal(0))
		Expect(res.Monitor).NotTo(BeNil())

		text, isErr := call(cs, "service_create_monitor", map[string]any{"name": "MCP shop two", "url": target.URL + "/two"})
		Expect(isErr).To(BeFalse(), text)
		callJSON(cs, "service_explain_incident", map[string]any{"monitor": "mcp sho"}, &res)
		Expect(res.Outcome).To(Equal(mcpserver.OutcomeAmbiguous))
		Expect(res.Candidates).To(HaveLen(2))

		m := monitorNamed(cs, "MCP shop two")
		_, isErr = call(cs, "service_pause_monitor", map[string]any{"monitor_id": m.ID})
		Expect(isErr).To(BeFalse())
		callJSON(cs, "service_explain_incident", map[string]any{"monitor_id": m.ID}, &res)
		Expect(res.Outcome).To(Equal(mcpserver.OutcomePaused))
	})

	It("lists incidents and builds an uptime report", func() {
		cs := session(stdKey)
		var page struct {
			Items []any `json:"items"`
			Total int   `json:"total"`
		}
		callJSON(cs, "service_list_incidents", map[string]any{"status": "all"}, &page)
		Expect(page.Items).NotTo(BeNil())
		text, isErr := call(cs, "service_list_incidents", nil)
		Expect(isErr).To(BeFalse(), text)
		text, isErr = call(cs, "service_uptime_report", map[string]any{"days": 7})
		Expect(isErr).To(BeFalse(), text)
		Expect(text).To(ContainSubstring("MCP shop"))
	})

	It("explains, acknowledges and resolves an incident", func() {
		cs := session(stdKey)
		m := monitorNamed(cs, "MCP shop")
		body := strings.NewReader(`{"monitor_id":"` + m.ID + `"}`)
		req, _ := http.NewRequest(http.MethodPost, apiURL+"/incidents", body)
		req.Header.Set("Authorization", "Bearer "+stdKey)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		Expect(err).NotTo(HaveOccurred())
		var created struct {
			ID string `json:"id"`
		}
		Expect(json.NewDecoder(resp.Body).Decode(&created)).To(Succeed())
		resp.Body.Close()
		Expect(resp.StatusCode).To(Equal(http.StatusCreated))

		var res mcpserver.Explained
		callJSON(cs, "service_explain_incident", map[string]any{"incident_id": created.ID}, &res)
		Expect(res.Outcome).To(Equal(mcpserver.OutcomeOngoing))
		Expect(res.IncidentsTotal).To(Equal(1))
		Expect(res.Fault).To(BeElementOf("yours", "external", "checker", "unknown"))
		Expect(res.AbstainingRegions).NotTo(BeNil())

		var page struct {
			Items []struct {
				ID string `json:"id"`
			} `json:"items"`
		}
		callJSON(cs, "service_list_incidents", map[string]any{"status": "ongoing", "monitor_id": m.ID}, &page)
		Expect(page.Items).To(HaveLen(1))
		Expect(page.Items[0].ID).To(Equal(created.ID))

		// The tools pass on every field of the REST incident: MCP decodes the
		// REST wire type itself, so none is lost on the way (region names and
		// the code-host issue link once were).
		var raw struct {
			Items []map[string]any `json:"items"`
		}
		callJSON(cs, "service_list_incidents", map[string]any{"status": "ongoing", "monitor_id": m.ID}, &raw)
		Expect(raw.Items).To(HaveLen(1))
		Expect(raw.Items[0]).To(HaveKey("confirming_region_names"))
		Expect(raw.Items[0]).To(HaveKeyWithValue("code_host_issue_url", BeNil()))
		var explained map[string]any
		callJSON(cs, "service_explain_incident", map[string]any{"incident_id": created.ID}, &explained)
		Expect(explained["incident"]).To(And(HaveKey("confirming_region_names"), HaveKey("code_host_issue_url")))

		text, isErr := call(cs, "service_acknowledge_incident", map[string]any{"incident_id": created.ID})
		Expect(isErr).To(BeFalse(), text)
		text, isErr = call(cs, "service_resolve_incident", map[string]any{"incident_id": created.ID, "note": "fixed by hand"})
		Expect(isErr).To(BeFalse(), text)
		callJSON(cs, "service_explain_incident", map[string]any{"incident_id": created.ID}, &res)
		Expect(res.Outcome).To(Equal(mcpserver.OutcomeResolved))

		// Without an open incident the monitor's state is explained, with its
		// latest incident.
		callJSON(cs, "service_explain_incident", map[string]any{"monitor_id": m.ID}, &res)
		Expect(res.Outcome).To(BeElementOf(mcpserver.OutcomeNoData, mcpserver.OutcomeHealthy, mcpserver.OutcomeFailingUnconfirmed))
		Expect(res.IncidentsTotal).To(Equal(1))
		Expect(res.LastIncident).NotTo(BeNil())
		Expect(res.LastIncident.Incident.ID).To(Equal(created.ID))
		var noLast mcpserver.Explained
		callJSON(cs, "service_explain_incident", map[string]any{"monitor_id": m.ID, "include_last_incident": false}, &noLast)
		Expect(noLast.LastIncident).To(BeNil())
		Expect(noLast.IncidentsTotal).To(Equal(1))
	})

	// Every tool that shows a REST object decodes the REST wire type of
	// package restapi, so no field the REST API sends is lost on the way
	// (probe regions once lost name, ISP and agents, maintenance windows
	// their current occurrence). The comparison is by key path, nested
	// objects and list elements included.
	It("passes on every field of the REST responses", func() {
		cs := session(stdKey)
		m := monitorNamed(cs, "MCP shop")
		var mons monv1.MonitorList
		Expect(env.Client.List(ctx, &mons, client.InNamespace("default"))).To(Succeed())
		i := slices.IndexFunc(mons.Items, func(x monv1.Monitor) bool { return string(x.UID) == m.ID })
		Expect(i).To(BeNumerically(">=", 0))
		crName := mons.Items[i].Name

		region := &monv1.ProbeRegion{ObjectMeta: metav1.ObjectMeta{Name: "mcp-fields"},
			Spec: monv1.ProbeRegionSpec{DisplayName: "Fields", City: "Lisbon", Country: "PT", Continent: "europe", ISP: "Example"}}
		Expect(env.Client.Create(ctx, region)).To(Succeed())
		DeferCleanup(func() { _ = env.Client.Delete(ctx, region) })
		start := time.Now().Add(-time.Hour).Truncate(time.Second)
		mw := &monv1.MaintenanceWindow{ObjectMeta: metav1.ObjectMeta{Name: "mcp-fields", Namespace: "default"},
			Spec: monv1.MaintenanceWindowSpec{Title: "Fields", Description: "all of them", StartsAt: metav1.NewTime(start),
				EndsAt: metav1.NewTime(start.Add(3 * time.Hour)), Scope: "monitors", Monitors: []monv1.LocalObjectReference{{Name: crName}}}}
		Expect(env.Client.Create(ctx, mw)).To(Succeed())
		DeferCleanup(func() { _ = env.Client.Delete(ctx, mw) })
		page := &monv1.StatusPage{ObjectMeta: metav1.ObjectMeta{Name: "mcp-fields", Namespace: "default"},
			Spec: monv1.StatusPageSpec{Title: "Fields", Description: "every one", Slug: "mcp-fields", CustomDomain: "status.example.com",
				LogoURL: "https://example.com/logo.png", AccentColor: "#123456",
				Monitors: []monv1.StatusPageMonitor{{MonitorRef: monv1.LocalObjectReference{Name: crName}, Section: "Shop"}}}}
		Expect(env.Client.Create(ctx, page)).To(Succeed())
		DeferCleanup(func() { _ = env.Client.Delete(ctx, page) })
		// The REST API reads through the manager's cache.
		Eventually(func() []any { return restGet("/maintenance").([]any) }, 10*time.Second, 100*time.Millisecond).ShouldNot(BeEmpty())
		Eventually(func() []any { return restGet("/status/pages/me").([]any) }, 10*time.Second, 100*time.Millisecond).ShouldNot(BeEmpty())
		pageID := string(page.UID)

		for _, c := range []struct {
			rest, tool string
			args       map[string]any
			unwrap     string // the key of the tool's answer that holds the REST value
		}{
			{"/automation/whoami", "service_whoami", nil, ""},
			{"/regions", "service_list_regions", nil, ""},
			{"/monitors/summary", "service_monitor_summary", nil, ""},
			{"/monitors", "service_list_monitors", map[string]any{"limit": 200}, "items"},
			{"/monitors/" + m.ID, "service_get_monitor", map[string]any{"monitor_id": m.ID}, ""},
			{"/monitors/" + m.ID + "/checks", "service_get_check_results", map[string]any{"monitor_id": m.ID}, ""},
			{"/status/pages/me", "service_list_status_pages", nil, ""},
			{"/status/pages/" + pageID, "service_get_status_page", map[string]any{"status_page_id": pageID}, ""},
			{"/maintenance", "service_list_maintenance_windows", nil, ""},
			{"/incidents", "service_list_incidents", map[string]any{"status": "all"}, ""},
		} {
			rest := restGet(c.rest)
			var got any
			callJSON(cs, c.tool, c.args, &got)
			if c.unwrap != "" {
				got = got.(map[string]any)[c.unwrap]
			}
			have := keyPaths(got, "", map[string]bool{})
			for p := range keyPaths(rest, "", map[string]bool{}) {
				Expect(have).To(HaveKey(p), "%s drops %s of GET %s", c.tool, p, c.rest)
			}
		}
		var shown map[string]any
		callJSON(cs, "service_get_status_page", map[string]any{"status_page_id": pageID}, &shown)
		Expect(shown).To(HaveKeyWithValue("custom_domain", "status.example.com"))
	})

	It("passes the API's refusal of a read-only key through", func() {
		text, isErr := call(session(roKey), "service_create_monitor", map[string]any{"name": "nope", "url": target.URL})
		Expect(isErr).To(BeTrue())
		Expect(text).To(ContainSubstring("READ_ONLY_ACCESS"))
	})

	It("deletes a monitor only in destructive mode", func() {
		cs := session(stdKey, mcpserver.HeaderAllowDestructive, "true")
		m := monitorNamed(cs, "MCP shop two")
		text, isErr := call(cs, "service_delete_monitor", map[string]any{"monitor_id": m.ID})
		Expect(isErr).To(BeFalse(), text)
		_, err := session(stdKey).CallTool(ctx, &mcp.CallToolParams{Name: "service_delete_monitor", Arguments: map[string]any{"monitor_id": m.ID}})
		Expect(err).To(HaveOccurred(), "a hidden tool cannot be called")
	})
})

// restGet answers a GET of the REST API with the standard key as generic
// JSON.
func restGet(path string) any {
	req, _ := http.NewRequest(http.MethodGet, apiURL+path, nil)
	req.Header.Set("Authorization", "Bearer "+stdKey)
	resp, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	Expect(resp.StatusCode).To(Equal(http.StatusOK), path)
	var out any
	Expect(json.NewDecoder(resp.Body).Decode(&out)).To(Succeed())
	return out
}

// keyPaths adds the key path of every object key in v to into: "a.b" for
// nested objects, "a[].b" for the keys of list elements.
func keyPaths(v any, prefix string, into map[string]bool) map[string]bool {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			into[prefix+"."+k] = true
			keyPaths(x, prefix+"."+k, into)
		}
	case []any:
		for _, x := range t {
			keyPaths(x, prefix+"[]", into)
		}
	}
	return into
}

// crName is the name of the Monitor whose REST id (its UID) is id.
func crName(id string) string {
	GinkgoHelper()
	var mons monv1.MonitorList
	Expect(env.Client.List(ctx, &mons, client.InNamespace("default"))).To(Succeed())
	for i := range mons.Items {
		if string(mons.Items[i].UID) == id {
			return mons.Items[i].Name
		}
	}
	Fail("no Monitor has id " + id)
	return ""
}
