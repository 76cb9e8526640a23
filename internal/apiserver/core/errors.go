package core

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/uptime-operator/uptime-operator/internal/monitor"
	"github.com/uptime-operator/uptime-operator/internal/plans"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/uptime-operator/uptime-operator/internal/httpjson"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
)

// Error codes of the specification.
const (
	CodeValidation          = "VALIDATION_ERROR"
	CodeBadRequest          = "BAD_REQUEST"
	CodePayloadTooLarge     = "PAYLOAD_TOO_LARGE"
	CodeNotFound            = "NOT_FOUND"
	CodeUnauthorized        = "UNAUTHORIZED"
	CodeAPIKeyDisabled      = "API_KEY_DISABLED"
	CodeSessionRequired     = "SESSION_AUTH_REQUIRED"
	CodeWorkspaceOwner      = "WORKSPACE_OWNER_REQUIRED"
	CodeReadOnly            = "READ_ONLY_ACCESS"
	CodeAutomationRequired  = "AUTOMATION_KEY_REQUIRED"
	CodeAlertRouting        = "ALERT_ROUTING_NOT_ALLOWED"
	CodeWorkspaceDenied     = "WORKSPACE_ACCESS_DENIED"
	CodeFeatureNotAvailable = "FEATURE_NOT_AVAILABLE"
	CodeWhiteLabel          = "WHITE_LABEL_NOT_ENTITLED"
	CodeEntitlementLimit    = plans.CodeLimitReached
	CodeCORSRejected        = "CORS_REJECTED"
	CodeIncidentResolved    = "INCIDENT_RESOLVED"
	CodeConflict            = "CONFLICT"
	CodePlanChanged         = "PLAN_CHANGED"
	CodeConnectionLimit     = "CONNECTION_LIMIT_REACHED"
	CodePruneConfirmation   = "PRUNE_CONFIRMATION_REQUIRED"
	CodeSignedDeployHook    = "USE_SIGNED_DEPLOY_HOOK"
	CodeRateLimited         = "RATE_LIMITED"
	CodeChannelUnavailable  = "CHANNEL_UNAVAILABLE"
	// CodeRegionUnavailable answers a run-check when no probe agent of the
	// monitor's regions is online (503, like CHANNEL_UNAVAILABLE; not a
	// code of the specification's table).
	CodeRegionUnavailable = "REGION_UNAVAILABLE"
	CodeInternal          = "INTERNAL_ERROR"
	// CodeNotImplemented answers an owner's call of an owner-only endpoint
	// that is not modelled yet (not a code of the specification).
	CodeNotImplemented = "NOT_IMPLEMENTED"
)

// ErrorBody is the JSON error shape of the specification, declared with the
// other wire types.
type ErrorBody = restapi.ErrorBody

// FieldError is one entry of a validation error's errors array.
type FieldError = restapi.FieldError

// WriteError writes an error body; code may be empty (missing or invalid key).
func WriteError(w http.ResponseWriter, status int, code, msg string) {
	httpjson.Write(w, status, ErrorBody{Error: msg, Code: code})
}

// WriteNotFound writes the 404 of a resource absent from the workspace.
func WriteNotFound(w http.ResponseWriter, what string) {
	WriteError(w, http.StatusNotFound, CodeNotFound, what+" not found")
}

// WriteValidation writes the specification's validation error shape.
func WriteValidation(w http.ResponseWriter, errs ...FieldError) {
	httpjson.Write(w, http.StatusBadRequest, ErrorBody{Error: "Validation failed", Code: CodeValidation, Errors: errs})
}

// FieldErr builds one FieldError.
func FieldErr(f, format string, args ...any) FieldError {
	return FieldError{Field: f, Message: fmt.Sprintf(format, args...)}
}

// Error is an error with its HTTP answer, returned by helpers so handlers
// can write it with WriteErr.
type Error struct {
	Status int
	Body   ErrorBody
}

func (e *Error) Error() string { return e.Body.Error }

// NewError is an *Error with a message and code.
func NewError(status int, code, msg string) *Error {
	return &Error{Status: status, Body: ErrorBody{Error: msg, Code: code}}
}

// ValidationError is the 400 VALIDATION_ERROR of errs.
func ValidationError(errs ...FieldError) *Error {
	return &Error{Status: http.StatusBadRequest, Body: ErrorBody{Error: "Validation failed", Code: CodeValidation, Errors: errs}}
}

// ErrNotFound is what lookups return for an object absent from the
// workspace; WriteErr answers it 404.
var ErrNotFound = errors.New("not found")

// WriteErr writes err: an *Error as itself, ErrNotFound as 404, anything
// else as 500 (logged by the recover middleware's logger).
func WriteErr(w http.ResponseWriter, r *http.Request, err error) {
	var ae *Error
	switch {
	case errors.As(err, &ae):
		httpjson.Write(w, ae.Status, ae.Body)
	case errors.Is(err, ErrNotFound):
		WriteNotFound(w, "resource")
	default:
		Log(r).Error(err, "request failed", "method", r.Method, "path", r.URL.Path)
		WriteError(w, http.StatusInternalServerError, CodeInternal, "internal error")
	}
}

// FieldPathMap maps a field path of a CR (as admission reports it) to the
// REST name; the default maps camelCase segments to snake_case.
type FieldPathMap func(path string) string

// FromFieldErrors converts a field.ErrorList into the REST error shape.
func FromFieldErrors(errs field.ErrorList, mapPath FieldPathMap) []FieldError {
	out := make([]FieldError, 0, len(errs))
	for _, e := range errs {
		msg := e.Detail
		if msg == "" || e.Type == field.ErrorTypeNotSupported || e.Type == field.ErrorTypeNotFound || e.Type == field.ErrorTypeDuplicate {
			msg = StripCauseType(e.ErrorBody())
		}
		out = append(out, FieldError{Field: mapPath(e.Field), Message: msg})
	}
	return out
}

var (
	causeTypeRE  = regexp.MustCompile(`^(Invalid value|Unsupported value|Duplicate value|Not found|Required value|Forbidden|Too long|Too many|Internal error)(: )?`)
	causeValueRE = regexp.MustCompile(`^("(?:[^"\\]|\\.)*"|[-0-9.]+|true|false|null|\{.*?\}|\[.*?\]): `)
)

// StripCauseType removes the "Invalid value: <v>: " prefix of an admission
// cause so the message reads like the specification's.
func StripCauseType(msg string) string {
	m := causeTypeRE.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	rest := msg[len(m[0]):]
	switch m[1] {
	case "Invalid value", "Unsupported value", "Duplicate value", "Not found":
		if v := causeValueRE.FindString(rest); v != "" && len(v) < len(rest) {
			rest = rest[len(v):]
		}
	}
	if rest == "" {
		return strings.ToLower(m[1])
	}
	return rest
}

// FromAdmission maps an API server refusal to the REST error: plan limits to
// 403 ENTITLEMENT_LIMIT_REACHED, missing features to 403, connection limits to
// 409 and everything else to 400 VALIDATION_ERROR. It returns nil for errors
// that are not refusals.
func FromAdmission(err error, plan string, mapPath FieldPathMap) *Error {
	if !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err) && !apierrors.IsBadRequest(err) {
		return nil
	}
	var causes []FieldError
	var raw []metav1.StatusCause
	var status *apierrors.StatusError
	if errors.As(err, &status) && status.ErrStatus.Details != nil {
		raw = status.ErrStatus.Details.Causes
		for _, c := range raw {
			causes = append(causes, FieldError{Field: mapPath(c.Field), Message: StripCauseType(c.Message)})
		}
	}
	if len(causes) == 0 {
		causes = append(causes, FieldError{Field: "", Message: err.Error()})
	}
	for i, c := range causes {
		switch {
		case strings.Contains(c.Message, "("+plans.CodeLimitReached+")"):
			// The limit's numbers come from the typed error admission
			// refused with; a refusal without causes has none.
			details := map[string]any{}
			if i < len(raw) {
				if le, ok := plans.LimitErrorFromCause(raw[i]); ok {
					details = map[string]any{"resource": le.Key(), "current": le.Current, "limit": le.Limit}
				}
			}
			return &Error{Status: http.StatusForbidden, Body: ErrorBody{
				Error: strings.TrimSuffix(c.Message, " ("+plans.CodeLimitReached+")"), Code: CodeEntitlementLimit, Details: details}}
		case strings.Contains(c.Message, "("+monitor.CodeFeatureNotAvail+")"):
			return &Error{Status: http.StatusForbidden, Body: ErrorBody{
				Error: strings.TrimSuffix(c.Message, " ("+monitor.CodeFeatureNotAvail+")"), Code: CodeFeatureNotAvailable, Plan: plan}}
		case strings.Contains(c.Message, "("+monitor.CodeWhiteLabel+")"):
			return NewError(http.StatusForbidden, CodeWhiteLabel, strings.TrimSuffix(c.Message, " ("+monitor.CodeWhiteLabel+")"))
		case strings.Contains(c.Message, "("+monitor.CodeConnectionLimit+")"):
			return NewError(http.StatusConflict, CodeConnectionLimit, strings.TrimSuffix(c.Message, " ("+monitor.CodeConnectionLimit+")"))
		}
	}
	return ValidationError(causes...)
}

// CamelToSnake turns intervalSeconds into interval_seconds.
func CamelToSnake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if r >= 'A' && r <= 'Z' {
			if i > 0 && !(s[i-1] >= 'A' && s[i-1] <= 'Z') {
				b.WriteByte('_')
			}
			b.WriteRune(r + ('a' - 'A'))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// SnakePath maps every segment of a CR field path to snake_case and drops the
// leading "spec.".
func SnakePath(path string) string {
	path = strings.TrimPrefix(strings.TrimPrefix(path, "spec"), ".")
	parts := strings.Split(path, ".")
	for i, p := range parts {
		parts[i] = CamelToSnake(p)
	}
	return strings.Join(parts, ".")
}
