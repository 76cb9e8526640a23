// Package apidoc builds the OpenAPI 3.1 document of the REST API from the
// routes as they are declared: the REST core's router keeps a table of every
// registered route with its Op (the documentation written next to the
// registration, core.Doc), and Build turns that table into the document.
// Bodies and answers named by a Go value get their schemas from
// google/jsonschema-go (reflect.go), with the doc comments as descriptions
// (comments.go); the rest are written with the small schema DSL of
// schemas.go (Obj, Str, Ref, …). What the API says of itself (info, tags,
// error shapes, shared responses) is internal/apiserver's (openapi_base.go);
// hack/gen-openapi writes the document and renders docs/api-reference.md.
package apidoc
