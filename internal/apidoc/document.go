package apidoc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"strings"
)

// API is what the document is built from: the routes as the REST core
// declared them, and the wire types to describe even when no route names
// them directly (those reached only from hand-written schemas).
type API struct {
	// Base is the document's fixed part: openapi, info, servers, security,
	// tags and the components that are written, not derived (responses,
	// headers, parameters, security schemes and schemas). Build adds the
	// paths and the derived schemas.
	Base M
	Ops  []Op
	// Types are further wire types (values) whose schemas become components.
	Types []any
	// Names name the components of Go types whose own names say too little
	// in the API's one namespace of schemas.
	Names map[reflect.Type]string
	// Enums are the value lists an `openapi:"enum=@name"` tag names.
	Enums map[string][]string
	// PathParams describe the path parameters by name (a string when not
	// listed).
	PathParams map[string]Param
}

// Build returns the OpenAPI 3.1 document of api, encoded deterministically
// (sorted keys, two-space indentation), so a stale copy shows up as a diff.
// The doc comments of the wire types are read from the module's sources,
// found from the working directory up.
func Build(api API) ([]byte, error) {
	doc, err := document(api)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// document assembles the OpenAPI object.
func document(api API) (M, error) {
	r := newComponents(api.Names, api.Enums)
	// The listed types first: of two types of the same name, the first
	// reached keeps the bare name.
	for _, v := range api.Types {
		if _, err := r.schema(v); err != nil {
			return nil, err
		}
	}
	paths := map[string]M{}
	ids := map[string]bool{}
	for _, o := range api.Ops {
		if o.Summary == "" || o.Tag == "" {
			return nil, fmt.Errorf("%s %s is not documented: declare its tag and summary where it is registered", o.Method, o.Path)
		}
		if paths[o.Path] == nil {
			paths[o.Path] = M{}
		}
		item := paths[o.Path]
		m := strings.ToLower(o.Method)
		if _, dup := item[m]; dup {
			return nil, fmt.Errorf("%s %s described twice", o.Method, o.Path)
		}
		op, err := r.build(o, api.PathParams)
		if err != nil {
			return nil, err
		}
		id := op["operationId"].(string)
		if ids[id] {
			return nil, fmt.Errorf("operationId %s used twice", id)
		}
		ids[id] = true
		item[m] = op
	}
	schemas, err := r.schemas()
	if err != nil {
		return nil, err
	}
	doc, components := M{}, M{}
	maps.Copy(doc, api.Base)
	if c, ok := doc["components"].(M); ok {
		maps.Copy(components, c)
	}
	written, _ := components["schemas"].(M)
	for name, s := range written {
		if _, dup := schemas[name]; dup {
			return nil, fmt.Errorf("schema %s is both derived from a Go type and written", name)
		}
		schemas[name] = s
	}
	components["schemas"] = schemas
	doc["components"], doc["paths"] = components, paths
	return doc, nil
}
