package main

// markdown.go renders docs/api-reference.md, a human-readable reference of
// the REST API, from the encoded OpenAPI document (the bytes written to
// docs/openapi.json), so the two cannot drift apart. The output is
// deterministic: operations are grouped by tag in the document's tag order
// (tags used but not declared follow, by name), then sorted by path and
// method; fields are listed required first, then by name.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// The subset of OpenAPI 3.1 the reference reads.
type mdDoc struct {
	OpenAPI string `json:"openapi"`
	Info    struct {
		Title       string `json:"title"`
		Version     string `json:"version"`
		Description string `json:"description"`
	} `json:"info"`
	Servers []struct {
		URL         string `json:"url"`
		Description string `json:"description"`
	} `json:"servers"`
	Tags []struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	} `json:"tags"`
	Paths      map[string]map[string]*mdOperation `json:"paths"`
	Components struct {
		SecuritySchemes map[string]struct {
			Description string `json:"description"`
		} `json:"securitySchemes"`
		Schemas    map[string]*mdSchema    `json:"schemas"`
		Responses  map[string]*mdResponse  `json:"responses"`
		Parameters map[string]*mdParameter `json:"parameters"`
		Headers    map[string]*mdHeader    `json:"headers"`
	} `json:"components"`
}

type mdOperation struct {
	OperationID string                 `json:"operationId"`
	Summary     string                 `json:"summary"`
	Description string                 `json:"description"`
	Tags        []string               `json:"tags"`
	Access      string                 `json:"x-access"`
	PlanFeature string                 `json:"x-plan-feature"`
	RateLimit   string                 `json:"x-rate-limit"`
	Security    *[]map[string][]string `json:"security"` // nil: the document's default
	Parameters  []*mdParameter         `json:"parameters"`
	RequestBody *mdRequestBody         `json:"requestBody"`
	Responses   map[string]*mdResponse `json:"responses"`

	method, path string
}

type mdParameter struct {
	Ref         string    `json:"$ref"`
	Name        string    `json:"name"`
	In          string    `json:"in"`
	Description string    `json:"description"`
	Required    bool      `json:"required"`
	Schema      *mdSchema `json:"schema"`
}

type mdRequestBody struct {
	Required    bool                `json:"required"`
	Description string              `json:"description"`
	Content     map[string]*mdMedia `json:"content"`
}

type mdMedia struct {
	Schema *mdSchema `json:"schema"`
}

type mdResponse struct {
	Ref         string               `json:"$ref"`
	Description string               `json:"description"`
	Content     map[string]*mdMedia  `json:"content"`
	Headers     map[string]*mdHeader `json:"headers"`
}

type mdHeader struct {
	Ref         string    `json:"$ref"`
	Description string    `json:"description"`
	Schema      *mdSchema `json:"schema"`
}

type mdSchema struct {
	Ref                  string               `json:"$ref"`
	Type                 mdTypes              `json:"type"`
	Format               string               `json:"format"`
	Description          string               `json:"description"`
	Pattern              string               `json:"pattern"`
	ContentMediaType     string               `json:"contentMediaType"`
	Enum                 []any                `json:"enum"`
	Const                json.RawMessage      `json:"const"`
	Default              json.RawMessage      `json:"default"`
	Minimum              *json.Number         `json:"minimum"`
	Maximum              *json.Number         `json:"maximum"`
	MinLength            *json.Number         `json:"minLength"`
	MaxLength            *json.Number         `json:"maxLength"`
	MinItems             *json.Number         `json:"minItems"`
	MaxItems             *json.Number         `json:"maxItems"`
	MaxProperties        *json.Number         `json:"maxProperties"`
	Items                *mdSchema            `json:"items"`
	Properties           map[string]*mdSchema `json:"properties"`
	Required             []string             `json:"required"`
	AdditionalProperties json.RawMessage      `json:"additionalProperties"`
	AnyOf                []*mdSchema          `json:"anyOf"`
	AllOf                []*mdSchema          `json:"allOf"`
	OneOf                []*mdSchema          `json:"oneOf"`
}

// mdTypes is a JSON Schema type: one name or a list of names.
type mdTypes []string

func (t *mdTypes) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*t = mdTypes{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return err
	}
	*t = many
	return nil
}

// accessLevels explains the x-access values, in the order they are listed.
var accessLevels = []struct{ value, read, write string }{
	{"public", "No API key.", "No API key."},
	{"any-key", "Every API key, read-only included.", "Standard or Automation key; read-only keys get 403 `READ_ONLY_ACCESS`."},
	{"read-only-write", "Every API key, read-only included.", "Every API key, read-only included, whatever the method."},
	{"automation", "Automation key; other keys get 403 `AUTOMATION_KEY_REQUIRED` (read-only keys 403 `READ_ONLY_ACCESS`).", ""},
	{"owner", "Workspace owner only; every API key gets 403 `WORKSPACE_OWNER_REQUIRED`.", ""},
	{"session", "Dashboard session of the human account only; API keys always get 403 `SESSION_AUTH_REQUIRED`.", ""},
}

// accessText is the access line of one operation.
func accessText(access, method string) string {
	for _, a := range accessLevels {
		if a.value != access {
			continue
		}
		if a.write != "" && method != "GET" && method != "HEAD" {
			return a.write
		}
		return a.read
	}
	return ""
}

var methodOrder = []string{"get", "head", "post", "put", "patch", "delete", "options", "trace"}

// Markdown renders the API reference from the encoded document.
func Markdown(encoded []byte) ([]byte, error) {
	var doc mdDoc
	if err := json.Unmarshal(encoded, &doc); err != nil {
		return nil, fmt.Errorf("decode document: %w", err)
	}
	r := &mdRenderer{doc: &doc}
	r.render()
	return r.buf.Bytes(), nil
}

type mdRenderer struct {
	doc *mdDoc
	buf bytes.Buffer
}

func (r *mdRenderer) p(format string, args ...any) { fmt.Fprintf(&r.buf, format, args...) }

// tagGroup is one tag with its operations.
type tagGroup struct {
	name, desc string
	ops        []*mdOperation
}

// groups returns the operations grouped by their first tag, in the
// document's tag order, then undeclared tags by name.
func (r *mdRenderer) groups() []*tagGroup {
	var out []*tagGroup
	byName := map[string]*tagGroup{}
	for _, t := range r.doc.Tags {
		g := &tagGroup{name: t.Name, desc: t.Description}
		byName[t.Name] = g
		out = append(out, g)
	}
	var undeclared []*tagGroup
	paths := make([]string, 0, len(r.doc.Paths))
	for p := range r.doc.Paths {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		item := r.doc.Paths[p]
		methods := make([]string, 0, len(item))
		for m := range item {
			methods = append(methods, m)
		}
		slices.SortFunc(methods, func(a, b string) int {
			ia, ib := slices.Index(methodOrder, a), slices.Index(methodOrder, b)
			if ia != ib {
				return ia - ib
			}
			return strings.Compare(a, b)
		})
		for _, m := range methods {
			o := item[m]
			o.method, o.path = strings.ToUpper(m), p
			tag := "Other"
			if len(o.Tags) > 0 {
				tag = o.Tags[0]
			}
			g := byName[tag]
			if g == nil {
				g = &tagGroup{name: tag}
				byName[tag] = g
				undeclared = append(undeclared, g)
			}
			g.ops = append(g.ops, o)
		}
	}
	slices.SortFunc(undeclared, func(a, b *tagGroup) int { return strings.Compare(a.name, b.name) })
	out = append(out, undeclared...)
	return slices.DeleteFunc(out, func(g *tagGroup) bool { return len(g.ops) == 0 })
}

func (r *mdRenderer) render() {
	d := r.doc
	groups := r.groups()
	n := 0
	for _, g := range groups {
		n += len(g.ops)
	}

	r.p("# %s reference\n\n", d.Info.Title)
	r.p("<!-- Generated by `go run ./hack/gen-openapi` from the OpenAPI document; do not edit. `make verify` fails when it is stale. -->\n\n")
	r.p("Every operation of the REST API (%d operations, API version %s), generated from the OpenAPI %s document [openapi.json](openapi.json) ", n, d.Info.Version, d.OpenAPI)
	r.p("(also served at `GET /openapi.json`). How the server implements it, and where it deviates, is in [rest-api.md](rest-api.md).\n\n")

	r.p("## Authentication\n\n")
	r.p("The same routes are served by two front doors:\n\n")
	r.p("- **Direct listener** — send an API key: `Authorization: Bearer sk_…`, e.g. `GET /monitors`.\n")
	r.p("- **Through kube-apiserver** — the aggregated API serves every path below under `/apis/api.uptime-operator.io/v1/namespaces/<ns>/…` ")
	r.p("(e.g. `GET /apis/api.uptime-operator.io/v1/namespaces/<ns>/monitors`); the namespace is the workspace, and the Kubernetes user's RBAC ")
	r.p("(ClusterRoles `uptime-operator-viewer`, `-editor`, `-automation`, `-owner`) gives the access level instead of a key.\n\n")
	if len(d.Servers) > 0 {
		r.p("| Server URL | Description |\n|---|---|\n")
		for _, s := range d.Servers {
			r.p("| `%s` | %s |\n", cell(s.URL), cell(text(s.Description)))
		}
		r.p("\n")
	}
	schemes := sortedKeys(d.Components.SecuritySchemes)
	for _, k := range schemes {
		if desc := d.Components.SecuritySchemes[k].Description; desc != "" {
			r.p("%s\n\n", text(desc))
		}
	}

	r.p("### Access levels\n\n")
	r.p("Every operation records who may call it in the extension field `x-access`, shown as **Access** below. ")
	r.p("`x-plan-feature` (**Plan feature**) names the plan feature it needs (else 403 `FEATURE_NOT_AVAILABLE`) and ")
	r.p("`x-rate-limit` (**Rate limit**) its own rate limit on top of the per-key limit.\n\n")
	r.p("| `x-access` | Reads (GET, HEAD) | Writes |\n|---|---|---|\n")
	for _, a := range accessLevels {
		w := a.write
		if w == "" {
			w = "Same."
		}
		r.p("| `%s` | %s | %s |\n", a.value, cell(a.read), cell(w))
	}
	r.p("\n")

	if d.Info.Description != "" {
		r.p("## Overview\n\n%s\n\n", text(d.Info.Description))
	}

	r.p("## Contents\n\n")
	for _, g := range groups {
		r.p("- [%s](#%s) (%d)\n", text(g.name), tagAnchor(g.name), len(g.ops))
		for _, o := range g.ops {
			r.p("  - [`%s %s`](#%s) — %s\n", o.method, o.path, opAnchor(o), text(o.Summary))
		}
	}
	r.p("- [Schemas](#schemas)\n\n")

	for _, g := range groups {
		r.p("## <a id=\"%s\"></a>%s\n\n", tagAnchor(g.name), text(g.name))
		if g.desc != "" {
			r.p("%s\n\n", text(g.desc))
		}
		for _, o := range g.ops {
			r.operation(o)
		}
	}

	r.p("## <a id=\"schemas\"></a>Schemas\n\n")
	r.p("The component schemas that operations refer to (`#/components/schemas/…`). Request bodies above are shown with these expanded; ")
	r.p("responses link here instead.\n\n")
	for _, name := range sortedKeys(d.Components.Schemas) {
		s := d.Components.Schemas[name]
		r.p("### <a id=\"%s\"></a>%s\n\n", schemaAnchor(name), name)
		base := r.flat(s)
		if base.s.Description != "" {
			r.p("%s\n\n", text(base.s.Description))
		}
		if ap := apBool(base.s); ap != nil && !*ap && len(base.s.Properties) > 0 {
			r.p("Unknown fields are rejected.\n\n")
		}
		rows := r.rootRows(s, false)
		if len(rows) == 0 {
			r.p("Type: %s", r.typeLabel(s, true))
			if c := r.constraints(s); c != "" {
				r.p("; %s", c)
			}
			r.p(".\n\n")
			continue
		}
		writeFieldTable(&r.buf, rows)
	}
}

// operation renders one operation.
func (r *mdRenderer) operation(o *mdOperation) {
	r.p("### <a id=\"%s\"></a>`%s %s`\n\n", opAnchor(o), o.method, o.path)
	if o.Summary != "" {
		r.p("**%s**\n\n", text(strings.TrimSuffix(o.Summary, ".")))
	}
	if o.Description != "" {
		r.p("%s\n\n", text(o.Description))
	}
	if o.Access != "" {
		line := "`" + o.Access + "`"
		if t := accessText(o.Access, o.method); t != "" {
			line += " — " + t
		}
		r.p("- **Access:** %s\n", line)
	}
	if o.Security != nil && len(*o.Security) == 0 {
		r.p("- **Authentication:** none\n")
	}
	if o.PlanFeature != "" {
		r.p("- **Plan feature:** `%s`\n", o.PlanFeature)
	}
	if o.RateLimit != "" {
		r.p("- **Rate limit:** %s\n", text(o.RateLimit))
	}
	r.p("- **Operation ID:** `%s`\n\n", o.OperationID)

	if len(o.Parameters) > 0 {
		r.p("**Parameters**\n\n")
		r.p("| Name | In | Required | Type | Constraints | Description |\n|---|---|---|---|---|---|\n")
		for _, prm := range o.Parameters {
			prm = r.param(prm)
			desc := prm.Description
			if desc == "" && prm.Schema != nil {
				desc = r.flat(prm.Schema).s.Description
			}
			r.p("| `%s` | %s | %s | %s | %s | %s |\n", cell(prm.Name), prm.In, yesNo(prm.Required),
				cell(r.typeLabel(prm.Schema, true)), cell(r.constraints(prm.Schema)), cell(text(desc)))
		}
		r.p("\n")
	}

	if rb := o.RequestBody; rb != nil {
		for _, ct := range sortedKeys(rb.Content) {
			s := rb.Content[ct].Schema
			req := "optional"
			if rb.Required {
				req = "required"
			}
			r.p("**Request body** (`%s`, %s): %s", ct, req, r.typeLabel(s, true))
			base := r.flat(s)
			if base.s.Description != "" {
				r.p(" — %s", text(base.s.Description))
			}
			if ap := apBool(base.s); ap != nil && !*ap && len(base.s.Properties) > 0 {
				r.p(" Unknown fields are rejected.")
			}
			r.p("\n\n")
			if rows := r.rootRows(s, true); len(rows) > 0 {
				writeFieldTable(&r.buf, rows)
			} else if isFreeform(base.s) {
				r.p("Any JSON object.\n\n")
			}
		}
	}

	if len(o.Responses) > 0 {
		r.p("**Responses**\n\n| Status | Description | Content |\n|---|---|---|\n")
		codes := sortedKeys(o.Responses)
		for _, code := range codes {
			resp := r.response(o.Responses[code])
			r.p("| %s | %s | %s |\n", code, cell(text(resp.Description)), cell(r.contentSummary(resp)))
		}
		r.p("\n")
		for _, code := range codes {
			if !strings.HasPrefix(code, "2") {
				continue
			}
			resp := r.response(o.Responses[code])
			for _, name := range sortedKeys(resp.Headers) {
				h := r.header(resp.Headers[name])
				r.p("Response header `%s` (%s): %s\n\n", name, r.typeLabel(h.Schema, true), text(h.Description))
			}
			for _, ct := range sortedKeys(resp.Content) {
				s := resp.Content[ct].Schema
				if s == nil {
					continue
				}
				rows := r.rootRows(s, false)
				if len(rows) == 0 {
					continue
				}
				r.p("Response `%s` (`%s`): %s\n\n", code, ct, r.typeLabel(s, true))
				writeFieldTable(&r.buf, rows)
			}
		}
	}
}

// contentSummary names the content types of a response and their schemas.
func (r *mdRenderer) contentSummary(resp *mdResponse) string {
	var parts []string
	for _, ct := range sortedKeys(resp.Content) {
		s := resp.Content[ct].Schema
		if s == nil {
			parts = append(parts, "`"+ct+"`")
			continue
		}
		parts = append(parts, "`"+ct+"`: "+r.typeLabel(s, true))
	}
	if len(parts) == 0 {
		return "—"
	}
	return strings.Join(parts, "; ")
}

// Resolution of $refs.

func refName(Ref, prefix string) string { return strings.TrimPrefix(Ref, prefix) }

// follow follows the $ref chain of v through table (components of one kind,
// named after prefix), at most 10 hops; a dangling reference stops it.
func follow[T any](v *T, Ref func(*T) string, table map[string]*T, prefix string) *T {
	for i := 0; Ref(v) != "" && i < 10; i++ {
		t := table[refName(Ref(v), prefix)]
		if t == nil {
			break
		}
		v = t
	}
	return v
}

func (r *mdRenderer) param(p *mdParameter) *mdParameter {
	return follow(p, func(p *mdParameter) string { return p.Ref }, r.doc.Components.Parameters, "#/components/parameters/")
}

func (r *mdRenderer) response(p *mdResponse) *mdResponse {
	return follow(p, func(p *mdResponse) string { return p.Ref }, r.doc.Components.Responses, "#/components/responses/")
}

func (r *mdRenderer) header(h *mdHeader) *mdHeader {
	return follow(h, func(h *mdHeader) string { return h.Ref }, r.doc.Components.Headers, "#/components/headers/")
}

// flatSchema is a schema with $refs followed, allOf merged and null split off.
type flatSchema struct {
	s        *mdSchema
	name     string      // component name when reached through a $ref
	nullable bool        // null is also accepted
	alts     []*mdSchema // two or more non-null anyOf/oneOf alternatives
}

// flat follows s's $refs, merges allOf and removes null from the type. A
// description next to a $ref (or on a nullable wrapper) wins over the
// target's.
func (r *mdRenderer) flat(s *mdSchema) flatSchema {
	var f flatSchema
	desc := ""
	for i := 0; s != nil && i < 20; i++ {
		if desc == "" {
			desc = s.Description
		}
		if s.Ref != "" {
			name := refName(s.Ref, "#/components/schemas/")
			t := r.doc.Components.Schemas[name]
			if t == nil {
				break
			}
			if f.name == "" {
				f.name = name
			}
			s = t
			continue
		}
		alts := s.AnyOf
		if len(alts) == 0 {
			alts = s.OneOf
		}
		if len(alts) > 0 {
			var rest []*mdSchema
			for _, a := range alts {
				if len(a.Type) == 1 && a.Type[0] == "null" && a.Ref == "" {
					f.nullable = true
					continue
				}
				rest = append(rest, a)
			}
			if len(rest) == 1 {
				s = rest[0]
				continue
			}
			f.alts = rest
		}
		break
	}
	if s == nil {
		s = &mdSchema{}
	}
	c := *s
	if slices.Contains(c.Type, "null") {
		f.nullable = true
		c.Type = slices.DeleteFunc(slices.Clone(c.Type), func(t string) bool { return t == "null" })
	}
	if len(c.AllOf) > 0 {
		c.Properties = cloneProps(c.Properties)
		c.Required = slices.Clone(c.Required)
		for _, part := range c.AllOf {
			pf := r.flat(part)
			for k, v := range pf.s.Properties {
				c.Properties[k] = v
			}
			c.Required = append(c.Required, pf.s.Required...)
			if len(c.Type) == 0 {
				c.Type = pf.s.Type
			}
		}
		c.AllOf = nil
	}
	if desc != "" {
		c.Description = desc
	}
	f.s = &c
	return f
}

func cloneProps(m map[string]*mdSchema) map[string]*mdSchema {
	c := make(map[string]*mdSchema, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// apBool is additionalProperties when it is a boolean.
func apBool(s *mdSchema) *bool {
	var b bool
	if len(s.AdditionalProperties) == 0 || json.Unmarshal(s.AdditionalProperties, &b) != nil {
		return nil
	}
	return &b
}

// apSchema is additionalProperties when it is a schema.
func apSchema(s *mdSchema) *mdSchema {
	if len(s.AdditionalProperties) == 0 || apBool(s) != nil {
		return nil
	}
	var m mdSchema
	if json.Unmarshal(s.AdditionalProperties, &m) != nil {
		return nil
	}
	return &m
}

func isObject(s *mdSchema) bool {
	return slices.Contains(s.Type, "object") || len(s.Properties) > 0
}

// isFreeform is an object without fixed properties.
func isFreeform(s *mdSchema) bool {
	return isObject(s) && len(s.Properties) == 0 && apSchema(s) == nil
}

// linkable is a component worth linking to rather than inlining: an object
// with properties, a composition, or a free-form object with a description.
func (f flatSchema) linkable() bool {
	return f.name != "" && (isObject(f.s) || len(f.alts) > 0)
}

// typeLabel is the type of s in words; link makes object components links.
func (r *mdRenderer) typeLabel(s *mdSchema, link bool) string {
	if s == nil {
		return "any"
	}
	f := r.flat(s)
	if f.linkable() {
		if link {
			return fmt.Sprintf("[%s](#%s)", f.name, schemaAnchor(f.name))
		}
		return f.name
	}
	if len(f.alts) > 0 {
		var parts []string
		for _, a := range f.alts {
			parts = append(parts, r.typeLabel(a, link))
		}
		return strings.Join(parts, " or ")
	}
	b := f.s
	switch {
	case slices.Contains(b.Type, "array"):
		if b.Items == nil {
			return "array"
		}
		return "array of " + r.typeLabel(b.Items, link)
	case isObject(b):
		if ap := apSchema(b); ap != nil && len(b.Properties) == 0 {
			return "map of " + r.typeLabel(ap, link)
		}
		if len(b.Properties) == 0 {
			return "object (any fields)"
		}
		return "object"
	case len(b.Type) > 0:
		return strings.Join(b.Type, " or ")
	case len(b.Const) > 0:
		return "constant"
	}
	return "any"
}

// constraints lists the validation of s: format, enum, bounds, pattern,
// default, nullability.
func (r *mdRenderer) constraints(s *mdSchema) string {
	if s == nil {
		return ""
	}
	f := r.flat(s)
	if f.linkable() {
		if f.nullable {
			return "nullable"
		}
		return ""
	}
	b := f.s
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	for _, a := range f.alts {
		if c := r.constraints(a); c != "" {
			add("as %s: %s", r.typeLabel(a, false), c)
		}
	}
	if b.Format != "" {
		add("format: %s", b.Format)
	}
	if b.ContentMediaType != "" {
		add("media type: `%s`", b.ContentMediaType)
	}
	if len(b.Enum) > 0 {
		var vals []string
		for _, v := range b.Enum {
			if v == nil {
				continue
			}
			vals = append(vals, "`"+jsonText(v)+"`")
		}
		add("one of %s", strings.Join(vals, ", "))
	}
	if len(b.Const) > 0 {
		add("always `%s`", rawText(b.Const))
	}
	rangeOf := func(min, max *json.Number, prefix, suffix string) {
		switch {
		case min != nil && max != nil:
			add("%s%s–%s%s", prefix, min, max, suffix)
		case min != nil:
			add("%s≥ %s%s", prefix, min, suffix)
		case max != nil:
			add("%s≤ %s%s", prefix, max, suffix)
		}
	}
	rangeOf(b.Minimum, b.Maximum, "", "")
	rangeOf(b.MinLength, b.MaxLength, "length ", "")
	rangeOf(b.MinItems, b.MaxItems, "", " items")
	rangeOf(nil, b.MaxProperties, "", " keys")
	if b.Pattern != "" {
		add("pattern `%s`", b.Pattern)
	}
	if len(b.Default) > 0 {
		add("default `%s`", rawText(b.Default))
	}
	if ap := apBool(b); ap != nil && !*ap && len(b.Properties) > 0 {
		add("no other fields")
	}
	if f.nullable {
		add("nullable")
	}
	return strings.Join(out, "; ")
}

// Field tables.

type fieldRow struct{ name, typ, required, constraints, desc string }

func writeFieldTable(w *bytes.Buffer, rows []fieldRow) {
	w.WriteString("| Field | Type | Required | Constraints | Description |\n|---|---|---|---|---|\n")
	for _, row := range rows {
		fmt.Fprintf(w, "| `%s` | %s | %s | %s | %s |\n", cell(row.name), cell(row.typ), row.required, cell(row.constraints), cell(text(row.desc)))
	}
	w.WriteString("\n")
}

// rootRows are the field rows of a body: the root object's fields, or its
// items' fields (`[].name`) when the root is an array. expand also expands
// the object components the fields refer to; without it they are links.
func (r *mdRenderer) rootRows(s *mdSchema, expand bool) []fieldRow {
	var rows []fieldRow
	f := r.flat(s)
	seen := map[string]bool{}
	if f.name != "" {
		seen[f.name] = true
	}
	if slices.Contains(f.s.Type, "array") && f.s.Items != nil {
		it := r.flat(f.s.Items)
		if isObject(it.s) || len(it.alts) > 0 {
			if it.name != "" {
				seen[it.name] = true
			}
			r.objectRows(&rows, "[].", f.s.Items, expand, seen)
		}
		return rows
	}
	r.objectRows(&rows, "", s, expand, seen)
	return rows
}

// objectRows appends one row per property of s (and of its object
// alternatives), each followed by the rows of what it contains.
func (r *mdRenderer) objectRows(rows *[]fieldRow, prefix string, s *mdSchema, expand bool, seen map[string]bool) {
	f := r.flat(s)
	objs := []*mdSchema{f.s}
	for _, a := range f.alts {
		if af := r.flat(a); isObject(af.s) {
			objs = append(objs, af.s)
		}
	}
	done := map[string]bool{}
	for _, o := range objs {
		names := sortedKeys(o.Properties)
		slices.SortStableFunc(names, func(a, b string) int {
			ra, rb := slices.Contains(o.Required, a), slices.Contains(o.Required, b)
			switch {
			case ra && !rb:
				return -1
			case rb && !ra:
				return 1
			}
			return 0
		})
		for _, name := range names {
			if done[name] {
				continue
			}
			done[name] = true
			p := o.Properties[name]
			path := prefix + name
			*rows = append(*rows, fieldRow{
				name: path, typ: r.typeLabel(p, true), required: yesNo(slices.Contains(o.Required, name)),
				constraints: r.constraints(p), desc: r.flat(p).s.Description,
			})
			r.childRows(rows, path, p, expand, seen)
		}
	}
}

// childRows appends the rows inside the field at path: the fields of an
// object, the items of an array (path[]), the values of a map (path.<key>).
func (r *mdRenderer) childRows(rows *[]fieldRow, path string, s *mdSchema, expand bool, seen map[string]bool) {
	f := r.flat(s)
	if f.name != "" && f.linkable() {
		if !expand || seen[f.name] {
			return
		}
		seen = plusName(seen, f.name)
	}
	b := f.s
	switch {
	case slices.Contains(b.Type, "array") && b.Items != nil:
		it := r.flat(b.Items)
		itemPath := path + "[]"
		switch {
		case isObject(it.s) && len(it.s.Properties) > 0 || len(it.alts) > 0:
			if it.name != "" && it.linkable() {
				if !expand || seen[it.name] {
					return
				}
				seen = plusName(seen, it.name)
			}
			r.objectRows(rows, itemPath+".", b.Items, expand, seen)
		case slices.Contains(it.s.Type, "array"):
			*rows = append(*rows, fieldRow{name: itemPath, typ: r.typeLabel(b.Items, true), constraints: r.constraints(b.Items), desc: it.s.Description})
			r.childRows(rows, itemPath, b.Items, expand, seen)
		default:
			if c := r.constraints(b.Items); c != "" || it.s.Description != "" {
				*rows = append(*rows, fieldRow{name: itemPath, typ: r.typeLabel(b.Items, true), constraints: c, desc: it.s.Description})
			}
		}
	case len(b.Properties) > 0:
		r.objectRows(rows, path+".", s, expand, seen)
	case isObject(b) && apSchema(b) != nil:
		ap := apSchema(b)
		keyPath := path + ".<key>"
		*rows = append(*rows, fieldRow{name: keyPath, typ: r.typeLabel(ap, true), constraints: r.constraints(ap), desc: r.flat(ap).s.Description})
		r.childRows(rows, keyPath, ap, expand, seen)
	case len(f.alts) > 0:
		for _, a := range f.alts {
			if af := r.flat(a); isObject(af.s) && len(af.s.Properties) > 0 {
				if af.name != "" && (!expand || seen[af.name]) {
					continue
				}
				r.objectRows(rows, path+".", a, expand, plusName(seen, af.name))
			}
		}
	}
}

// plusName is seen plus name, leaving seen unchanged.
func plusName(seen map[string]bool, name string) map[string]bool {
	c := make(map[string]bool, len(seen)+1)
	for k, v := range seen {
		c[k] = v
	}
	if name != "" {
		c[name] = true
	}
	return c
}

// Text helpers.

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// text escapes < outside code spans so that text like `sha256:<hex>` is
// not taken for HTML.
func text(s string) string {
	var b strings.Builder
	code := false
	for _, c := range s {
		switch {
		case c == '`':
			code = !code
			b.WriteRune(c)
		case c == '<' && !code:
			b.WriteString("&lt;")
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}

// cell makes s fit in one table cell.
func cell(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	return strings.ReplaceAll(s, "|", `\|`)
}

func jsonText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func rawText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// Anchors: explicit ids, stable across renderings and free of collisions
// between tags, operations and schemas.

func tagAnchor(name string) string { return "tag-" + slug(name) }
func schemaAnchor(name string) string {
	return "schema-" + slug(name)
}
func opAnchor(o *mdOperation) string {
	if o.OperationID != "" {
		return "op-" + slug(o.OperationID)
	}
	return "op-" + slug(o.method+" "+o.path)
}

func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, c := range strings.ToLower(s) {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			b.WriteRune(c)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}
