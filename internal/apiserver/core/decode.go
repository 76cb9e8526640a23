package core

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/uptime-operator/uptime-operator/internal/monitorconfig"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
)

// DecodeJSON reads a JSON request body into v. An empty body decodes as {}.
// Bodies over the route's limit are 413 PAYLOAD_TOO_LARGE, malformed JSON 400
// BAD_REQUEST, values of the wrong type 400 VALIDATION_ERROR, and with strict
// unknown fields are VALIDATION_ERROR too.
func DecodeJSON(r *http.Request, v any, strict bool) error {
	var raw []byte
	if r.Body != nil {
		var err error
		raw, err = io.ReadAll(r.Body)
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				return NewError(http.StatusRequestEntityTooLarge, CodePayloadTooLarge, fmt.Sprintf("request body is larger than %d KB", mbe.Limit>>10))
			}
			return NewError(http.StatusBadRequest, CodeBadRequest, "could not read the request body")
		}
	}
	if len(strings.TrimSpace(string(raw))) == 0 {
		raw = []byte("{}")
	}
	return DecodeBytes(raw, v, strict, "")
}

// DecodeBytes decodes raw into v, mapping errors as DecodeJSON does; field
// names in errors are prefixed with prefix.
func DecodeBytes(raw []byte, v any, strict bool, prefix string) error {
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	if strict {
		dec.DisallowUnknownFields()
	}
	err := dec.Decode(v)
	if err == nil {
		if dec.More() {
			return NewError(http.StatusBadRequest, CodeBadRequest, "Invalid JSON: trailing data after the body")
		}
		return nil
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var ae *Error
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &syn), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return NewError(http.StatusBadRequest, CodeBadRequest, "Invalid JSON in the request body")
	case errors.As(err, &typ):
		f := typ.Field
		if f == "" {
			if prefix == "" {
				return NewError(http.StatusBadRequest, CodeBadRequest, "the request body must be a JSON object")
			}
			return ValidationError(FieldErr(strings.TrimSuffix(prefix, "."), "must be a JSON %s", jsonKind(typ.Type.Kind().String())))
		}
		return ValidationError(FieldErr(prefix+f, "must be a %s", jsonKind(typ.Type.Kind().String())))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return ValidationError(FieldErr(prefix+name, "unknown field"))
	}
	var fe *FieldDecodeError
	if errors.As(err, &fe) {
		return ValidationError(FieldErr(prefix+fe.Field, "%s", fe.Msg))
	}
	var ke *monitorconfig.KeyError
	if errors.As(err, &ke) {
		return ValidationError(FieldErr(prefix+ke.Key, "%s", ke.Msg))
	}
	return ValidationError(FieldErr(strings.TrimSuffix(prefix, "."), "%s", strings.TrimPrefix(err.Error(), "json: ")))
}

// FieldDecodeError is returned by custom decoders for a bad value (the
// request types of restapi declare it).
type FieldDecodeError = restapi.FieldDecodeError

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "slice", "array":
		return "array"
	case "map", "struct", "ptr":
		return "object"
	}
	return "number in range"
}

// Nullable is a JSON field that tells absent, null and a value apart. It
// is declared with the request bodies in restapi, whose schemas the
// OpenAPI document derives from their Go types.
type Nullable[T any] = restapi.Nullable[T]
