// Package credentials is the one place that knows which values of a
// Monitor are credentials (request header values, which carry basic-auth
// passwords, bearer tokens and API keys, in http, multistep and mcp
// checks), how they are shown ([REDACTED]), how a [REDACTED] sent back
// keeps the stored value, and how values written through the REST API are
// kept out of the Monitor's spec: in a Secret owned by the Monitor (see
// SecretName), referenced from the spec like any user-made Secret.
//
// It sits just above the API types: the REST API, the MCP server and the
// admission webhook import it, and it imports none of them.
package credentials
