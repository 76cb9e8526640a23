// Package httpjson writes JSON responses the same way for every HTTP server
// of the operator: the REST API, the MCP server, the public status pages,
// the probe API and the aggregated API door.
package httpjson

import (
	"encoding/json"
	"mime"
	"net/http"
	"strings"
)

// ContentType is the media type of every JSON response.
const ContentType = "application/json; charset=utf-8"

// Write sends v as JSON with status code. Responses are never sniffed as
// another type (a JSON body echoing user input must not render as HTML).
// An encoding error is dropped: the status line is already out, and the
// values written are plain structs and maps that always encode.
func Write(w http.ResponseWriter, code int, v any) {
	h := w.Header()
	h.Set("Content-Type", ContentType)
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// Wanted reports whether a request to an endpoint that serves browsers too
// (confirmation links, status page forms) should be answered in JSON rather
// than HTML: it sends a JSON body or accepts application/json.
func Wanted(r *http.Request) bool {
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct == "application/json" {
		return true
	}
	return strings.Contains(r.Header.Get("Accept"), "application/json")
}
