package apidoc

import (
	"encoding/json"
	"strings"
	"testing"
)

// answer is a wire type of the test.
type answer struct {
	// ID of the thing.
	ID   string `json:"id" openapi:"format=uuid"`
	Note string `json:"note,omitempty"`
}

func TestBuild(t *testing.T) {
	b, err := Build(API{Ops: []Op{
		{Method: "GET", Path: "/things", Tag: "Things", Summary: "All things", Access: AnyKey, Resp: []answer{}},
		{Method: "POST", Path: "/things", Tag: "Things", Summary: "Add a thing", Access: AnyKey, Body: Strict(Obj("", M{"note": Str("")})), Status: 201, Resp: answer{}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths      map[string]map[string]map[string]any
		Components struct{ Schemas map[string]map[string]any }
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	s := doc.Components.Schemas["answer"]
	if s == nil || s["required"].([]any)[0] != "id" {
		t.Fatalf("schema of answer = %v", s)
	}
	list := doc.Paths["/things"]["get"]["responses"].(map[string]any)["200"]
	if got, _ := json.Marshal(list); !strings.Contains(string(got), `"items":{"$ref":"#/components/schemas/answer"}`) {
		t.Errorf("GET /things answer = %s, want an array of answer", got)
	}
	if _, ok := doc.Paths["/things"]["post"]["responses"].(map[string]any)["201"]; !ok {
		t.Errorf("POST /things has no 201")
	}
}

func TestBuildRefusesUndocumentedAndUntyped(t *testing.T) {
	if _, err := Build(API{Ops: []Op{{Method: "GET", Path: "/x", Access: AnyKey}}}); err == nil || !strings.Contains(err.Error(), "not documented") {
		t.Errorf("undocumented route: err = %v", err)
	}
	if _, err := Build(API{Ops: []Op{{Method: "GET", Path: "/x", Tag: "T", Summary: "S", Access: AnyKey, Resp: 3}}}); err == nil {
		t.Error("an int answer was accepted")
	}
}

// opt is a field that may be absent or null, as restapi.Nullable.
type opt[T any] struct{ V T }

func (opt[T]) OptionalValue() any {
	var v T
	return v
}

// body is a request body of the test.
type body struct {
	_      struct{}      `openapi:"strict"`
	Name   opt[string]   `json:"name" openapi:"nonnull,max=10"`
	Note   opt[string]   `json:"note"`
	Emails opt[[]string] `json:"emails" openapi:"nonnull,itemformat=email"`
	Phase  *string       `json:"phase,omitempty" openapi:"nonnull,enum=a|b"`
	Count  int           `json:"count"`
}

// derive returns the component schemas of v's type and the types it reaches.
func derive(t *testing.T, v any) M {
	t.Helper()
	c := newComponents(nil, nil)
	if _, err := c.schema(v); err != nil {
		t.Fatal(err)
	}
	schemas, err := c.schemas()
	if err != nil {
		t.Fatal(err)
	}
	return schemas
}

func TestRequestBodySchema(t *testing.T) {
	schemas := derive(t, body{})
	got, _ := json.Marshal(schemas["body"])
	want := `{"additionalProperties":false,"properties":{"count":{"type":"integer"},` +
		`"emails":{"items":{"format":"email","type":"string"},"type":"array"},` +
		`"name":{"maxLength":10,"type":"string"},"note":{"type":["string","null"]},` +
		`"phase":{"enum":["a","b"],"type":"string"}},"required":["count"],"type":"object"}`
	if string(got) != want {
		t.Errorf("schema of body =\n%s\nwant\n%s", got, want)
	}
}

// Shared are the fields two bodies of the test share.
type Shared struct {
	Name opt[string]   `json:"name" openapi:"nonnull"`
	Tags opt[[]string] `json:"tags" openapi:"nonnull,max=3,itemmin=1,itemmax=8"`
}

// create shares Shared (its fields become create's own, as encoding/json
// flattens them), requires its name and decodes a field it does not
// document.
type create struct {
	_ struct{} `openapi:"requires=name"`
	Shared
	Hidden opt[bool] `json:"hidden" openapi:"-"`
}

func TestSharedBodySchema(t *testing.T) {
	schemas := derive(t, create{})
	got, _ := json.Marshal(schemas["create"])
	want := `{"properties":{"name":{"type":"string"},` +
		`"tags":{"items":{"maxLength":8,"minLength":1,"type":"string"},"maxItems":3,"type":"array"}},` +
		`"required":["name"],"type":"object"}`
	if string(got) != want {
		t.Errorf("schema of create =\n%s\nwant\n%s", got, want)
	}
	if _, ok := schemas["Shared"]; ok {
		t.Error("an embedded struct became a component")
	}
}

// Keys are config keys of the test, each for some monitor types.
type Keys struct {
	Host string `json:"host,omitempty"`
	Inner
}

// Inner is embedded in Keys.
type Inner struct {
	Target string `json:"target,omitempty" openapi:"any"`
}

// config embeds Keys: one strict object with one more key.
type config struct {
	_ struct{} `openapi:"strict,maxprops=5"`
	Keys
	Emails []string `json:"emails,omitempty"`
}

func TestInlineConfigSchema(t *testing.T) {
	schemas := derive(t, config{})
	got, _ := json.Marshal(schemas["config"])
	want := `{"additionalProperties":false,"maxProperties":5,"properties":{` +
		`"emails":{"items":{"type":"string"},"type":"array"},` +
		`"host":{"type":"string"},` +
		`"target":{"anyOf":[{},{"type":"null"}]}},"type":"object"}`
	if string(got) != want {
		t.Errorf("schema of config =\n%s\nwant\n%s", got, want)
	}
	if _, ok := schemas["Keys"]; ok {
		t.Error("an inlined struct became a component")
	}
}

// Rec decodes from an object or a string.
type Rec struct {
	Every int `json:"every"`
}

// withRec has a field that is a Rec or one of two strings, or null.
type withRec struct {
	Rec opt[Rec] `json:"rec" openapi:"orstring=a|b"`
}

func TestOrStringSchema(t *testing.T) {
	schemas := derive(t, withRec{})
	got, _ := json.Marshal(schemas["withRec"].(M)["properties"].(M)["rec"])
	want := `{"anyOf":[{"$ref":"#/components/schemas/Rec"},{"enum":["a","b"],"type":"string"},{"type":"null"}]}`
	if string(got) != want {
		t.Errorf("schema of withRec.rec = %s, want %s", got, want)
	}
}
