package monitors

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"testing"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/monitorconfig"
)

// TestOpenAPIConfigKeys holds the published MonitorConfig schema to the one
// config shape: every config key of every monitor type (monitorconfig),
// plus notification_emails.
func TestOpenAPIConfigKeys(t *testing.T) {
	raw, err := os.ReadFile("../openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var published []string
	for k := range doc.Components.Schemas["MonitorConfig"].Properties {
		published = append(published, k)
	}
	slices.Sort(published)
	want := []string{core.ConfigNotificationEmails}
	for _, typ := range monv1.MonitorTypes {
		for _, k := range monitorconfig.Keys(typ) {
			if !slices.Contains(want, k) {
				want = append(want, k)
			}
		}
	}
	slices.Sort(want)
	if !slices.Equal(published, want) {
		t.Fatalf("MonitorConfig schema keys %v, config keys %v: run make generate manifests", published, want)
	}
}

// TestUpdatedConfig covers the merge of a REST config update: sent keys
// replace their field, null clears it, unsent keys keep the stored value,
// and a [REDACTED] credential keeps the stored header value. Configs are
// written in their wire form.
func TestUpdatedConfig(t *testing.T) {
	const headers = `{"Authorization":{"secret_ref":{"name":"shop-credentials","key":"http.authorization"}},"Accept":"text/html"}`
	const stored = `{"timeout":5000,"method":"GET","keyword":"ok","max_redirects":2,"headers":` + headers + `}`
	const steps = `{"steps":[{"name":"login","url":"https://shop.example.com/login","headers":{"Cookie":{"secret_ref":{"name":"shop-credentials","key":"step0.cookie"}}}}]}`
	for _, c := range []struct {
		name    string
		typ     monv1.MonitorType
		cur     string // the stored config; "" on create
		sent    string
		want    string
		errPath string // the field of the validation error, "" for none
		errMsg  string
		moved   bool     // the update moves the monitor's url to another origin
		dropped []string // the credentials the update drops
	}{{
		name: "a sent key replaces its field, the others stay",
		cur:  stored, sent: `{"method":"HEAD","timeout":7000}`,
		want: `{"timeout":7000,"method":"HEAD","keyword":"ok","max_redirects":2,"headers":` + headers + `}`,
	}, {
		name: "null clears a key",
		cur:  stored, sent: `{"keyword":null,"max_redirects":null}`,
		want: `{"timeout":5000,"method":"GET","headers":` + headers + `}`,
	}, {
		name: "headers are replaced as a whole",
		cur:  stored, sent: `{"headers":{"X-New":"1"}}`,
		want: `{"timeout":5000,"method":"GET","keyword":"ok","max_redirects":2,"headers":{"X-New":"1"}}`,
	}, {
		name: "[REDACTED] keeps the stored header value, names compare case-insensitively",
		cur:  stored, sent: `{"headers":{"authorization":"[REDACTED]","Accept":"application/json"}}`,
		want: `{"timeout":5000,"method":"GET","keyword":"ok","max_redirects":2,"headers":{"authorization":{"secret_ref":{"name":"shop-credentials","key":"http.authorization"}},"Accept":"application/json"}}`,
	}, {
		name: "[REDACTED] of a multi-step step keeps that step's stored header",
		typ:  monv1.MonitorMultistep, cur: steps,
		sent: `{"steps":[{"name":"login","url":"https://shop.example.com/login","headers":{"Cookie":"[REDACTED]"}}],"timeout":9000}`,
		want: `{"timeout":9000,"steps":[{"name":"login","url":"https://shop.example.com/login","headers":{"Cookie":{"secret_ref":{"name":"shop-credentials","key":"step0.cookie"}}}}]}`,
	}, {
		name: "[REDACTED] outside a credential field is a value like any other",
		cur:  stored, sent: `{"body":"[REDACTED]"}`,
		want: `{"timeout":5000,"method":"GET","keyword":"ok","max_redirects":2,"headers":` + headers + `,"body":"[REDACTED]"}`,
	}, {
		name: "[REDACTED] with nothing stored under that name",
		cur:  stored, sent: `{"headers":{"X-Other":"[REDACTED]"}}`,
		errPath: "config", errMsg: "config.headers.X-Other is [REDACTED] but there is no stored value to keep; send the real value",
	}, {
		name: "[REDACTED] on create",
		sent: `{"headers":{"Authorization":"[REDACTED]"}}`, errPath: "config",
		errMsg: "config.headers.Authorization is [REDACTED] but there is no stored value to keep; send the real value",
	}, {
		name: "a url moved to another origin drops the stored headers not sent again",
		cur:  stored, sent: `{"timeout":7000}`, moved: true,
		want:    `{"timeout":7000,"method":"GET","keyword":"ok","max_redirects":2}`,
		dropped: []string{"config.headers.Accept", "config.headers.Authorization"},
	}, {
		name: "a url moved to another origin drops a [REDACTED] header and keeps a sent one",
		cur:  stored, sent: `{"headers":{"Authorization":"[REDACTED]","X-Key":"fresh"}}`, moved: true,
		want:    `{"timeout":5000,"method":"GET","keyword":"ok","max_redirects":2,"headers":{"X-Key":"fresh"}}`,
		dropped: []string{"config.headers.Authorization"},
	}, {
		name: "a step moved to another origin drops its [REDACTED] header",
		typ:  monv1.MonitorMultistep, cur: steps,
		sent:    `{"steps":[{"name":"login","url":"https://collector.example.net/login","headers":{"Cookie":"[REDACTED]"}}]}`,
		want:    `{"steps":[{"name":"login","url":"https://collector.example.net/login"}]}`,
		dropped: []string{"config.steps[0].headers.Cookie"},
	}, {
		name: "create takes the sent keys alone",
		sent: `{"method":"POST","body":"{}"}`,
		want: `{"method":"POST","body":"{}"}`,
	}, {
		name: "a key of another type", cur: stored, sent: `{"host":"example.com"}`,
		errPath: "config.host", errMsg: "unknown config key for http monitors",
	}, {
		name: "null for a key of another type is ignored", cur: stored, sent: `{"host":null}`,
		want: stored,
	}, {
		name: "a value of the wrong type", cur: stored, sent: `{"timeout":"soon"}`,
		errPath: "config.timeout", errMsg: "must be a number in range",
	}, {
		name: "an unknown key inside a step", typ: monv1.MonitorMultistep, cur: steps,
		sent:    `{"steps":[{"name":"a","url":"https://shop.example.com/","colour":"red"}]}`,
		errPath: "config.steps[0].colour", errMsg: "unknown config key for multistep monitors",
	}, {
		name: "tool call arguments that are not an object", typ: monv1.MonitorMCP,
		sent:    `{"tool_call":{"name":"search","arguments":[1]}}`,
		errPath: "config.tool_call.arguments", errMsg: "must be a JSON object",
	}} {
		t.Run(c.name, func(t *testing.T) {
			typ := c.typ
			if typ == "" {
				typ = monv1.MonitorHTTP
			}
			var sent map[string]json.RawMessage
			if err := json.Unmarshal([]byte(c.sent), &sent); err != nil {
				t.Fatal(err)
			}
			var cur *monv1.MonitorSpec
			if c.cur != "" {
				cur = &monv1.MonitorSpec{Type: typ}
				if err := monitorconfig.Unmarshal(cur, []byte(c.cur)); err != nil {
					t.Fatal(err)
				}
			}
			before, _ := json.Marshal(cur)
			spec := &monv1.MonitorSpec{Type: typ}
			if cur != nil {
				spec = cur.DeepCopy()
			}
			dropped, err := updatedConfig(spec, cur, sent, c.moved)
			if after, _ := json.Marshal(cur); string(after) != string(before) {
				t.Fatalf("the stored config changed: %s, was %s", after, before)
			}
			if c.errPath != "" {
				ae, ok := err.(*core.Error)
				if !ok || ae.Status != 400 || ae.Body.Code != core.CodeValidation || len(ae.Body.Errors) != 1 {
					t.Fatalf("err = %#v, want one validation error", err)
				}
				if fe := ae.Body.Errors[0]; fe.Field != c.errPath || fe.Message != c.errMsg {
					t.Fatalf("error %s: %q, want %s: %q", fe.Field, fe.Message, c.errPath, c.errMsg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(dropped, c.dropped) {
				t.Fatalf("dropped %q, want %q", dropped, c.dropped)
			}
			var got, want any
			_ = json.Unmarshal(monitorconfig.Marshal(spec), &got)
			_ = json.Unmarshal([]byte(c.want), &want)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("merged config\n got %s\nwant %s", monitorconfig.Marshal(spec), c.want)
			}
		})
	}
}
