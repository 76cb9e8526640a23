// Package apidoc builds the OpenAPI 3.1 document of the REST API and its
// Markdown reference from the routes as they are declared: the REST core's
// router keeps a table of every registered route with its Op (the
// documentation written next to the registration), and Build turns that
// table into the document. Request bodies and answers named by a Go value
// get their schemas by reflection (reflect.go); the rest are written with
// the small schema DSL of schemas.go (Obj, Str, Ref, …). Markdown renders
// docs/api-reference.md from the encoded document.
//
// The package knows the REST API's shared parts (error shapes, shared
// responses, path parameters, the monitor config) but imports nothing of
// the project, so the core router and every resource package can declare
// routes with it.
package apidoc
