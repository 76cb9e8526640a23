// Package restapi holds the wire types of REST API responses: one Go type
// per JSON shape of spec/rest-api.md that more than one package reads. The
// REST server (internal/apiserver) writes them and the MCP tool server
// (internal/mcpserver), a client of the same API, decodes them, so a field
// added to a response reaches the assistant without a second declaration.
//
// The package has no behaviour and imports only the record types that
// responses embed unchanged: the store's and the probe API's.
package restapi
