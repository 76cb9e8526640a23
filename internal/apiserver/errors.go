package apiserver

import (
	"encoding/json"
	"net/http"
)

// Error codes of the specification.
const (
	CodeValidation          = "VALIDATION_ERROR"
	CodeBadRequest          = "BAD_REQUEST"
	CodePayloadTooLarge     = "PAYLOAD_TOO_LARGE"
	CodeNotFound            = "NOT_FOUND"
	CodeAPIKeyDisabled      = "API_KEY_DISABLED"
	CodeWorkspaceOwner      = "WORKSPACE_OWNER_REQUIRED"
	CodeReadOnly            = "READ_ONLY_ACCESS"
	CodeAutomationRequired  = "AUTOMATION_KEY_REQUIRED"
	CodeWorkspaceDenied     = "WORKSPACE_ACCESS_DENIED"
	CodeFeatureNotAvailable = "FEATURE_NOT_AVAILABLE"
	CodeCORSRejected        = "CORS_REJECTED"
	CodeRateLimited         = "RATE_LIMITED"
	CodeInternal            = "INTERNAL_ERROR"
)

// ErrorBody is the JSON error shape of the specification.
type ErrorBody struct {
	Error   string       `json:"error"`
	Code    string       `json:"code,omitempty"`
	Details any          `json:"details,omitempty"`
	Errors  []FieldError `json:"errors,omitempty"`
}

// FieldError is one entry of a validation error's errors array.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// writeJSON writes v with status code.
func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError writes an error body; code may be empty (missing or invalid key).
func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, ErrorBody{Error: msg, Code: code})
}
