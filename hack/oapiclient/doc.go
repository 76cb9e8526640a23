// Package oapiclient checks docs/openapi.json the way a client author uses
// it: hack/verify-oapiclient.sh generates a Go client from it with
// oapi-codegen (this module's `tool`, a standard generator, not ours) into a
// throw-away package of this module and type-checks it. A schema that a
// generator cannot turn into Go (two properties mapping to one Go name, a
// dangling $ref, a parameter named twice) fails `make verify` rather than
// the first client author.
//
// The module is separate so that the generator and its dependencies stay out
// of the operator's go.mod.
package oapiclient

// The runtime package every generated client imports.
import _ "github.com/oapi-codegen/runtime"
