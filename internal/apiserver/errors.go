package apiserver

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/uptime-operator/uptime-operator/internal/monitor"
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
	CodeEntitlementLimit    = "ENTITLEMENT_LIMIT_REACHED"
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

// writeError writes an error body; code may be empty (missing or invalid key).
func writeError(w http.ResponseWriter, status int, code, msg string) {
	httpjson.Write(w, status, ErrorBody{Error: msg, Code: code})
}

// writeNotFound writes the 404 of a resource absent from the workspace.
func writeNotFound(w http.ResponseWriter, what string) {
	writeError(w, http.StatusNotFound, CodeNotFound, what+" not found")
}

// writeValidation writes the specification's validation error shape.
func writeValidation(w http.ResponseWriter, errs ...FieldError) {
	httpjson.Write(w, http.StatusBadRequest, ErrorBody{Error: "Validation failed", Code: CodeValidation, Errors: errs})
}

// fieldErr builds one FieldError.
func fieldErr(f, format string, args ...any) FieldError {
	return FieldError{Field: f, Message: fmt.Sprintf(format, args...)}
}

// apiError is an error with its HTTP answer, returned by helpers so handlers
// can write it with writeErr.
type apiError struct {
	Status int
	Body   ErrorBody
}

func (e *apiError) Error() string { return e.Body.Error }

func newAPIError(status int, code, msg string) *apiError {
	return &apiError{Status: status, Body: ErrorBody{Error: msg, Code: code}}
}

func validationError(errs ...FieldError) *apiError {
	return &apiError{Status: http.StatusBadRequest, Body: ErrorBody{Error: "Validation failed", Code: CodeValidation, Errors: errs}}
}

var errNotFound = errors.New("not found")

// writeErr writes err: an *apiError as itself, errNotFound as 404, anything
// else as 500 (logged by the recover middleware's logger).
func (s *Server) writeErr(w http.ResponseWriter, r *http.Request, err error) {
	var ae *apiError
	switch {
	case errors.As(err, &ae):
		httpjson.Write(w, ae.Status, ae.Body)
	case errors.Is(err, errNotFound):
		writeNotFound(w, "resource")
	default:
		s.log(r).Error(err, "request failed", "method", r.Method, "path", r.URL.Path)
		writeError(w, http.StatusInternalServerError, CodeInternal, "internal error")
	}
}

// fieldPathMap maps a field path of a CR (as admission reports it) to the
// REST name; the default maps camelCase segments to snake_case.
type fieldPathMap func(path string) string

// fromFieldErrors converts a field.ErrorList into the REST error shape.
func fromFieldErrors(errs field.ErrorList, mapPath fieldPathMap) []FieldError {
	out := make([]FieldError, 0, len(errs))
	for _, e := range errs {
		msg := e.Detail
		if msg == "" || e.Type == field.ErrorTypeNotSupported || e.Type == field.ErrorTypeNotFound || e.Type == field.ErrorTypeDuplicate {
			msg = stripCauseType(e.ErrorBody())
		}
		out = append(out, FieldError{Field: mapPath(e.Field), Message: msg})
	}
	return out
}

var (
	causeTypeRE  = regexp.MustCompile(`^(Invalid value|Unsupported value|Duplicate value|Not found|Required value|Forbidden|Too long|Too many|Internal error)(: )?`)
	causeValueRE = regexp.MustCompile(`^("(?:[^"\\]|\\.)*"|[-0-9.]+|true|false|null|\{.*?\}|\[.*?\]): `)
)

// stripCauseType removes the "Invalid value: <v>: " prefix of an admission
// cause so the message reads like the specification's.
func stripCauseType(msg string) string {
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

var limitRE = regexp.MustCompile(`plan limit reached: (\d+) of (\d+) ([a-z ]+) \(` + monitor.CodeEntitlementLimit + `\)`)

// fromAdmission maps an API server refusal to the REST error: plan limits to
// 403 ENTITLEMENT_LIMIT_REACHED, missing features to 403, connection limits to
// 409 and everything else to 400 VALIDATION_ERROR. It returns nil for errors
// that are not refusals.
func (s *Server) fromAdmission(err error, plan string, mapPath fieldPathMap) *apiError {
	if !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err) && !apierrors.IsBadRequest(err) {
		return nil
	}
	var causes []FieldError
	var status *apierrors.StatusError
	if errors.As(err, &status) && status.ErrStatus.Details != nil {
		for _, c := range status.ErrStatus.Details.Causes {
			causes = append(causes, FieldError{Field: mapPath(c.Field), Message: stripCauseType(c.Message)})
		}
	}
	if len(causes) == 0 {
		causes = append(causes, FieldError{Field: "", Message: err.Error()})
	}
	for _, c := range causes {
		switch {
		case strings.Contains(c.Message, "("+monitor.CodeEntitlementLimit+")"):
			details := map[string]any{}
			if m := limitRE.FindStringSubmatch(c.Message); m != nil {
				cur, _ := strconv.Atoi(m[1])
				lim, _ := strconv.Atoi(m[2])
				details = map[string]any{"resource": strings.ReplaceAll(m[3], " ", "_"), "current": cur, "limit": lim}
			}
			return &apiError{Status: http.StatusForbidden, Body: ErrorBody{
				Error: strings.TrimSuffix(c.Message, " ("+monitor.CodeEntitlementLimit+")"), Code: CodeEntitlementLimit, Details: details}}
		case strings.Contains(c.Message, "("+monitor.CodeFeatureNotAvail+")"):
			return &apiError{Status: http.StatusForbidden, Body: ErrorBody{
				Error: strings.TrimSuffix(c.Message, " ("+monitor.CodeFeatureNotAvail+")"), Code: CodeFeatureNotAvailable, Plan: plan}}
		case strings.Contains(c.Message, "("+monitor.CodeWhiteLabel+")"):
			return newAPIError(http.StatusForbidden, CodeWhiteLabel, strings.TrimSuffix(c.Message, " ("+monitor.CodeWhiteLabel+")"))
		case strings.Contains(c.Message, "("+monitor.CodeConnectionLimit+")"):
			return newAPIError(http.StatusConflict, CodeConnectionLimit, strings.TrimSuffix(c.Message, " ("+monitor.CodeConnectionLimit+")"))
		}
	}
	return validationError(causes...)
}

// camelToSnake turns intervalSeconds into interval_seconds.
func camelToSnake(s string) string {
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

// snakePath maps every segment of a CR field path to snake_case and drops the
// leading "spec.".
func snakePath(path string) string {
	path = strings.TrimPrefix(strings.TrimPrefix(path, "spec"), ".")
	parts := strings.Split(path, ".")
	for i, p := range parts {
		parts[i] = camelToSnake(p)
	}
	return strings.Join(parts, ".")
}
