// Package mcpserver is the tool server for AI assistants (spec/mcp.md): an
// MCP server, built on the official go-sdk, whose 26 tools call the
// documented REST API with the caller's own credential, so an assistant can
// do exactly what its API key can do.
//
// It runs over stdio (`uptime-operator mcp`, key from SERVICE_API_KEY) or as
// a stateless Streamable HTTP endpoint answering JSON (`POST /mcp`, key per
// request), self-run or mounted by the manager as the hosted endpoint.
// Tool modes (default, read-only, destructive) decide which tools are
// offered; hidden tools are not listed at all. Writes are limited per
// session, and monitor config is shown with stored credentials redacted.
package mcpserver
