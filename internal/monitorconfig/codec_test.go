package monitorconfig_test

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/monitorconfig"
	"github.com/uptime-operator/uptime-operator/internal/monitorconfig/configtest"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

func ptr[T any](v T) *T { return &v }

// TestWireForm pins the wire form of each type's config (the REST API's
// config object, the agent's assignment config) and its decoding back.
func TestWireForm(t *testing.T) {
	for _, tc := range []struct {
		name     string
		spec     monv1.MonitorSpec
		wantJSON string
	}{
		{"http", monv1.MonitorSpec{Type: monv1.MonitorAPI, HTTP: &monv1.HTTPConfig{Method: "POST", TimeoutMs: 5000,
			Headers:             []monv1.HTTPHeader{{Name: "A", Value: ptr("b")}, {Name: "T", ValueFrom: &monv1.SecretKeySelector{Name: "s", Key: "k"}}},
			ExpectedStatusCodes: []int32{200}, MaxRedirects: ptr[int32](0), MaxResponseBytes: ptr[int32](100),
			Assertions: []monv1.Assertion{{Source: "status_code", Operator: "equals", Target: "200"}}}},
			`{"assertions":[{"operator":"equals","source":"status_code","target":"200"}],"expected_status_codes":[200],"headers":{"A":"b","T":{"secret_ref":{"key":"k","name":"s"}}},"max_redirects":0,"max_response_bytes":100,"method":"POST","timeout":5000}`},
		{"udp", monv1.MonitorSpec{Type: monv1.MonitorUDP, UDP: &monv1.UDPConfig{Host: "h", Port: 53, PayloadHex: "00ff", ExpectedResponse: "^ok", TimeoutSeconds: 2}},
			`{"expected_response":"^ok","host":"h","payload_hex":"00ff","port":53,"timeout":2}`},
		{"dns", monv1.MonitorSpec{Type: monv1.MonitorDNS, DNS: &monv1.DNSConfig{Name: "example.com", RecordType: "MX", MatchMode: "all", ExpectedValues: []string{"x"}, TimeoutSeconds: 3}},
			`{"expected_values":["x"],"match_mode":"all","name":"example.com","record_type":"MX","timeout":3}`},
		{"cron", monv1.MonitorSpec{Type: monv1.MonitorCron, Cron: &monv1.CronConfig{CronExpression: "@hourly", GraceSeconds: 60}},
			`{"cron_expression":"@hourly","grace_seconds":60}`},
		{"multistep", monv1.MonitorSpec{Type: monv1.MonitorMultistep, Multistep: &monv1.MultistepConfig{Steps: []monv1.MultistepStep{
			{URL: "https://a", Method: "GET", Extract: []monv1.Extraction{{Variable: "v", Source: "header", Property: "X"}}}}}},
			`{"steps":[{"extract":[{"property":"X","source":"header","variable":"v"}],"method":"GET","name":"","url":"https://a"}]}`},
		{"mcp", monv1.MonitorSpec{Type: monv1.MonitorMCP, MCP: &monv1.MCPConfig{ExpectedTools: []string{"t"}, ToolCall: &monv1.MCPToolCall{Name: "t", ArgumentsJSON: `{"a":1}`}}},
			`{"expected_tools":["t"],"tool_call":{"arguments":{"a":1},"name":"t"}}`},
	} {
		raw := monitorconfig.Marshal(&tc.spec)
		if string(raw) != tc.wantJSON {
			t.Errorf("%s: config\n got %s\nwant %s", tc.name, raw, tc.wantJSON)
		}
		got := monv1.MonitorSpec{Type: tc.spec.Type}
		if err := monitorconfig.Unmarshal(&got, raw); err != nil {
			t.Fatalf("%s: decode: %v", tc.name, err)
		}
		if !equality.Semantic.DeepEqual(got, tc.spec) {
			t.Errorf("%s: round trip\n got %+v\nwant %+v", tc.name, got, tc.spec)
		}
	}
}

// TestDecodeNormalizes: methods and record types are upper-cased, an
// assertion target may be a JSON number or boolean.
func TestDecodeNormalizes(t *testing.T) {
	spec := monv1.MonitorSpec{Type: monv1.MonitorAPI}
	err := monitorconfig.Unmarshal(&spec, []byte(`{"method":"post","assertions":[{"source":"json_body","property":"$.n","operator":"equals","target":5},{"source":"json_body","property":"$.b","operator":"equals","target":true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if spec.HTTP.Method != "POST" || spec.HTTP.Assertions[0].Target != "5" || spec.HTTP.Assertions[1].Target != "true" {
		t.Fatalf("decoded %+v", spec.HTTP)
	}
	dns := monv1.MonitorSpec{Type: monv1.MonitorDNS}
	if err := monitorconfig.Unmarshal(&dns, []byte(`{"name":"a.example","record_type":"aaaa"}`)); err != nil || dns.DNS.RecordType != "AAAA" {
		t.Fatalf("dns: %v %+v", err, dns.DNS)
	}
}

// fullSpec is a spec of type typ whose config struct has every field set.
func fullSpec(t *testing.T, typ monv1.MonitorType) monv1.MonitorSpec {
	spec, err := configtest.Full(typ)
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

// TestEveryKeyRoundTrips walks every key of every type: a config struct
// with every field set goes REST → CR → agent → REST (the REST config
// object decoded into the Monitor's struct, the assignment built from it
// encoded for the agent and decoded there, the agent's struct rendered as
// a REST config object again) and comes back whole, with exactly the keys
// the struct declares.
func TestEveryKeyRoundTrips(t *testing.T) {
	for _, typ := range monv1.MonitorTypes {
		spec := fullSpec(t, typ)
		rest := monitorconfig.Marshal(&spec)

		// REST → CR.
		cr := monv1.MonitorSpec{Type: typ}
		if err := monitorconfig.Unmarshal(&cr, rest); err != nil {
			t.Fatalf("%s: REST → CR: %v", typ, err)
		}
		// CR → agent.
		raw, err := json.Marshal(probeapi.Assignment{Type: string(typ), Config: monitorconfig.Only(&cr)})
		if err != nil {
			t.Fatalf("%s: encode assignment: %v", typ, err)
		}
		var a probeapi.Assignment
		if err := json.Unmarshal(raw, &a); err != nil {
			t.Fatalf("%s: decode assignment: %v", typ, err)
		}
		if !equality.Semantic.DeepEqual(a.Config, spec) {
			t.Errorf("%s: a field is lost between REST, the CR and the agent:\n got %+v\nwant %+v", typ, monitorconfig.Config(&a.Config), monitorconfig.Config(&spec))
		}
		// Agent → REST.
		if back := monitorconfig.Marshal(&a.Config); string(back) != string(rest) {
			t.Errorf("%s: REST → CR → agent → REST\n got %s\nwant %s", typ, back, rest)
		}
		var keys map[string]json.RawMessage
		_ = json.Unmarshal(rest, &keys)
		want := monitorconfig.Keys(typ)
		if len(keys) != len(want) {
			t.Errorf("%s: wire keys %v, the struct declares %v", typ, slices.Sorted(mapKeys(keys)), want)
		}
		for _, k := range want {
			if _, ok := keys[k]; !ok || !monitorconfig.KeyAllowed(typ, k) {
				t.Errorf("%s: key %q of the struct is not on the wire", typ, k)
			}
		}
	}
}

func mapKeys(m map[string]json.RawMessage) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// readers are where config fields are read when a check runs: the probes
// and, for cron monitors, whose heartbeats the manager judges, the engine
// and the monitor model.
var readers = []string{"../../probes", "../engine", "../monitor"}

// selectors returns the field and method names selected (x.Name) in the
// non-test Go files of dirs.
func selectors(t *testing.T, dirs []string) map[string]bool {
	out := map[string]bool{}
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if s, ok := n.(*ast.SelectorExpr); ok {
					out[s.Sel.Name] = true
				}
				return true
			})
		}
	}
	return out
}

// TestEveryConfigFieldIsRead fails when a field of a config struct is read
// by no check: the key would be stored and shown but change nothing. The
// timeout key is read for every type by probeapi.EffectiveTimeout.
func TestEveryConfigFieldIsRead(t *testing.T) {
	read := selectors(t, readers)
	for _, typ := range monv1.MonitorTypes {
		ct := monitorconfig.ConfigType(typ)
		for i := range ct.NumField() {
			f := ct.Field(i)
			if tag := f.Tag.Get("wire"); strings.HasPrefix(tag, monitorconfig.TimeoutKey) {
				continue
			}
			if !read[f.Name] {
				t.Errorf("%s.%s is read nowhere in %v", ct.Name(), f.Name, readers)
			}
		}
	}
}
