package monitors

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"testing"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

// TestOpenAPIConfigKeys holds the published MonitorConfig schema to the one
// config shape: every key of probeapi.Config, plus notification_emails.
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
	want := append(probeapi.ConfigKeys(), core.ConfigNotificationEmails)
	slices.Sort(want)
	if !slices.Equal(published, want) {
		t.Fatalf("MonitorConfig schema keys %v, config keys %v: add the key to internal/apidoc/schemas.go and run make manifests", published, want)
	}
}

// TestUpdatedConfig covers the typed merge of a REST config update: sent
// keys replace their field, null clears it, unsent keys keep the stored
// value, and a [REDACTED] credential keeps the stored header value.
func TestUpdatedConfig(t *testing.T) {
	ref := func(key string) probeapi.HeaderValue {
		return probeapi.HeaderValue{SecretRef: &probeapi.SecretKeyRef{Name: "shop-credentials", Key: key}}
	}
	maxRedirects := int32(2)
	stored := probeapi.Config{Timeout: 5000, HTTPConfig: probeapi.HTTPConfig{Method: "GET", Keyword: "ok", MaxRedirects: &maxRedirects,
		Headers: probeapi.Headers{"Authorization": ref("http.authorization"), "Accept": {Value: "text/html"}}}}
	steps := probeapi.Config{MultistepConfig: probeapi.MultistepConfig{Steps: []probeapi.Step{
		{Name: "login", URL: "https://shop.example.com/login", Headers: probeapi.Headers{"Cookie": ref("step0.cookie")}}}}}
	for _, c := range []struct {
		name    string
		typ     monv1.MonitorType
		cur     *probeapi.Config
		sent    string
		want    probeapi.Config
		errPath string // the field of the validation error, "" for none
		errMsg  string
		moved   bool     // the update moves the monitor's url to another origin
		dropped []string // the credentials the update drops
	}{{
		name: "a sent key replaces its field, the others stay",
		cur:  &stored, sent: `{"method":"HEAD","timeout":7000}`,
		want: probeapi.Config{Timeout: 7000, HTTPConfig: probeapi.HTTPConfig{Method: "HEAD", Keyword: "ok", MaxRedirects: &maxRedirects, Headers: stored.Headers}},
	}, {
		name: "null clears a key",
		cur:  &stored, sent: `{"keyword":null,"max_redirects":null}`,
		want: probeapi.Config{Timeout: 5000, HTTPConfig: probeapi.HTTPConfig{Method: "GET", Headers: stored.Headers}},
	}, {
		name: "headers are replaced as a whole",
		cur:  &stored, sent: `{"headers":{"X-New":"1"}}`,
		want: probeapi.Config{Timeout: 5000, HTTPConfig: probeapi.HTTPConfig{Method: "GET", Keyword: "ok", MaxRedirects: &maxRedirects,
			Headers: probeapi.Headers{"X-New": {Value: "1"}}}},
	}, {
		name: "[REDACTED] keeps the stored header value, names compare case-insensitively",
		cur:  &stored, sent: `{"headers":{"authorization":"[REDACTED]","Accept":"application/json"}}`,
		want: probeapi.Config{Timeout: 5000, HTTPConfig: probeapi.HTTPConfig{Method: "GET", Keyword: "ok", MaxRedirects: &maxRedirects,
			Headers: probeapi.Headers{"authorization": ref("http.authorization"), "Accept": {Value: "application/json"}}}},
	}, {
		name: "[REDACTED] of a multi-step step keeps that step's stored header",
		typ:  monv1.MonitorMultistep, cur: &steps,
		sent: `{"steps":[{"name":"login","url":"https://shop.example.com/login","headers":{"Cookie":"[REDACTED]"}}],"timeout":9000}`,
		want: probeapi.Config{Timeout: 9000, MultistepConfig: steps.MultistepConfig},
	}, {
		name: "[REDACTED] outside a credential field is a value like any other",
		cur:  &stored, sent: `{"body":"[REDACTED]"}`,
		want: probeapi.Config{Timeout: 5000, HTTPConfig: probeapi.HTTPConfig{Method: "GET", Keyword: "ok", MaxRedirects: &maxRedirects,
			Headers: stored.Headers, Body: "[REDACTED]"}},
	}, {
		name: "[REDACTED] with nothing stored under that name",
		cur:  &stored, sent: `{"headers":{"X-Other":"[REDACTED]"}}`,
		errPath: "config", errMsg: "config.headers.X-Other is [REDACTED] but there is no stored value to keep; send the real value",
	}, {
		name: "[REDACTED] on create",
		sent: `{"headers":{"Authorization":"[REDACTED]"}}`, errPath: "config",
		errMsg: "config.headers.Authorization is [REDACTED] but there is no stored value to keep; send the real value",
	}, {
		name: "a url moved to another origin drops the stored headers not sent again",
		cur:  &stored, sent: `{"timeout":7000}`, moved: true,
		want:    probeapi.Config{Timeout: 7000, HTTPConfig: probeapi.HTTPConfig{Method: "GET", Keyword: "ok", MaxRedirects: &maxRedirects}},
		dropped: []string{"config.headers.Accept", "config.headers.Authorization"},
	}, {
		name: "a url moved to another origin drops a [REDACTED] header and keeps a sent one",
		cur:  &stored, sent: `{"headers":{"Authorization":"[REDACTED]","X-Key":"fresh"}}`, moved: true,
		want: probeapi.Config{Timeout: 5000, HTTPConfig: probeapi.HTTPConfig{Method: "GET", Keyword: "ok", MaxRedirects: &maxRedirects,
			Headers: probeapi.Headers{"X-Key": {Value: "fresh"}}}},
		dropped: []string{"config.headers.Authorization"},
	}, {
		name: "a step moved to another origin drops its [REDACTED] header",
		typ:  monv1.MonitorMultistep, cur: &steps,
		sent:    `{"steps":[{"name":"login","url":"https://collector.example.net/login","headers":{"Cookie":"[REDACTED]"}}]}`,
		want:    probeapi.Config{Timeout: steps.Timeout, MultistepConfig: probeapi.MultistepConfig{Steps: []probeapi.Step{{Name: "login", URL: "https://collector.example.net/login", Headers: probeapi.Headers{}}}}},
		dropped: []string{"config.steps[0].headers.Cookie"},
	}, {
		name: "create takes the sent keys alone",
		sent: `{"method":"POST","body":"{}"}`,
		want: probeapi.Config{HTTPConfig: probeapi.HTTPConfig{Method: "POST", Body: "{}"}},
	}, {
		name: "a key of another type", cur: &stored, sent: `{"host":"example.com"}`,
		errPath: "config.host", errMsg: "unknown config key for http monitors",
	}, {
		name: "null for a key of another type is ignored", cur: &stored, sent: `{"host":null}`,
		want: stored,
	}, {
		name: "a value of the wrong type", cur: &stored, sent: `{"timeout":"soon"}`,
		errPath: "config.timeout", errMsg: "must be a number in range",
	}, {
		name: "an unknown key inside a step", typ: monv1.MonitorMultistep, cur: &steps,
		sent:    `{"steps":[{"name":"a","url":"https://shop.example.com/","colour":"red"}]}`,
		errPath: "config.colour", errMsg: "unknown config key for multistep monitors",
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
			before, _ := json.Marshal(c.cur)
			got, dropped, err := updatedConfig(typ, c.cur, sent, c.moved)
			if after, _ := json.Marshal(c.cur); string(after) != string(before) {
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
			if !reflect.DeepEqual(got, c.want) {
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(c.want)
				t.Fatalf("merged config\n got %s\nwant %s", g, w)
			}
		})
	}
}
