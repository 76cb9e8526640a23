package monitor

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

func ptr[T any](v T) *T { return &v }

// TestConfigRoundTrip checks that ConfigOf and ApplyConfig are inverse for
// every type's struct, and that the JSON is the REST config object.
func TestConfigRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name     string
		spec     monv1.MonitorSpec
		wantJSON string
	}{
		{"http", monv1.MonitorSpec{Type: monv1.MonitorAPI, HTTP: &monv1.HTTPConfig{Method: "POST", TimeoutMs: 5000,
			Headers:             []monv1.HTTPHeader{{Name: "A", Value: ptr("b")}, {Name: "T", ValueFrom: &monv1.SecretKeySelector{Name: "s", Key: "k"}}},
			ExpectedStatusCodes: []int32{200}, MaxRedirects: ptr[int32](0), MaxResponseBytes: ptr[int32](100),
			Assertions: []monv1.Assertion{{Source: "status_code", Operator: "equals", Target: "200"}}}},
			`{"timeout":5000,"method":"POST","headers":{"A":"b","T":{"secret_ref":{"name":"s","key":"k"}}},"expected_status_codes":[200],"max_redirects":0,"max_response_bytes":100,"assertions":[{"source":"status_code","operator":"equals","target":"200"}]}`},
		{"udp", monv1.MonitorSpec{Type: monv1.MonitorUDP, UDP: &monv1.UDPConfig{Host: "h", Port: 53, PayloadHex: "00ff", ExpectedResponse: "^ok", TimeoutSeconds: 2}},
			`{"timeout":2,"host":"h","port":53,"payload_hex":"00ff","expected_response":"^ok"}`},
		{"dns", monv1.MonitorSpec{Type: monv1.MonitorDNS, DNS: &monv1.DNSConfig{Name: "example.com", RecordType: "MX", MatchMode: "all", ExpectedValues: []string{"x"}, TimeoutSeconds: 3}},
			`{"timeout":3,"record_type":"MX","name":"example.com","expected_values":["x"],"match_mode":"all"}`},
		{"cron", monv1.MonitorSpec{Type: monv1.MonitorCron, Cron: &monv1.CronConfig{CronExpression: "@hourly", GraceSeconds: 60}},
			`{"cron_expression":"@hourly","grace_seconds":60}`},
		{"multistep", monv1.MonitorSpec{Type: monv1.MonitorMultistep, Multistep: &monv1.MultistepConfig{Steps: []monv1.MultistepStep{
			{URL: "https://a", Method: "GET", Extract: []monv1.Extraction{{Variable: "v", Source: "header", Property: "X"}}}}}},
			`{"steps":[{"name":"","method":"GET","url":"https://a","extract":[{"variable":"v","source":"header","property":"X"}]}]}`},
		{"mcp", monv1.MonitorSpec{Type: monv1.MonitorMCP, MCP: &monv1.MCPConfig{ExpectedTools: []string{"t"}, ToolCall: &monv1.MCPToolCall{Name: "t", ArgumentsJSON: `{"a":1}`}}},
			`{"expected_tools":["t"],"tool_call":{"name":"t","arguments":{"a":1}}}`},
	} {
		c := ConfigOf(&tc.spec)
		raw, _ := json.Marshal(c)
		if string(raw) != tc.wantJSON {
			t.Errorf("%s: config\n got %s\nwant %s", tc.name, raw, tc.wantJSON)
		}
		var back probeapi.Config
		if err := json.Unmarshal(raw, &back); err != nil {
			t.Fatalf("%s: decode: %v", tc.name, err)
		}
		got := monv1.MonitorSpec{Type: tc.spec.Type}
		if !ApplyConfig(&got, &back) {
			t.Fatalf("%s: type not applied", tc.name)
		}
		if !equality.Semantic.DeepEqual(got, tc.spec) {
			t.Errorf("%s: round trip\n got %+v\nwant %+v", tc.name, got, tc.spec)
		}
	}
}
