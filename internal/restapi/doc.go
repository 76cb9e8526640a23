// Package restapi holds the wire types of REST API responses: one Go type
// per JSON shape of spec/rest-api.md that more than one package reads. The
// REST server (internal/apiserver) writes them and the MCP tool server
// (internal/mcpserver), a client of the same API, decodes them, so a field
// added to a response reaches the assistant without a second declaration.
//
// The package has no behaviour and imports only the record types that
// responses embed unchanged: the store's and the probe API's.
//
// The types are also the declaration of the answers and request bodies in
// the OpenAPI document (docs/openapi.json): a route names them in its
// core.Doc and internal/apidoc derives their schemas with jsonschema-go. A field
// is a required property unless omitempty, nullable when a pointer (unless
// tagged nonnull); its doc comment (or the comment at the end of its line)
// is its description, and its `openapi` tag adds what Go types do not say:
// format=uuid, enum=a|b, min=, max=, ref=Schema, nonnull; a blank field
// `_ struct{}` tagged `openapi:"strict"` refuses unknown properties.
// So a comment here is read by API users: write it for them. The REST test
// suite validates every answer against the document, so a field added here
// and not sent (or sent null where the type says it cannot be) fails.
package restapi
