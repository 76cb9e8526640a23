package restapi

import "encoding/json"

// Nullable is a request field that tells absent, null and a value apart:
// a body that changes only the fields sent decodes into it. The OpenAPI
// document describes it as a T that may be absent, and null unless the
// field is tagged nonnull.
type Nullable[T any] struct {
	Set  bool
	Null bool
	V    T
}

// UnmarshalJSON records that the field was sent.
func (n *Nullable[T]) UnmarshalJSON(b []byte) error {
	n.Set = true
	if string(b) == "null" {
		n.Null = true
		return nil
	}
	return json.Unmarshal(b, &n.V)
}

// Value returns the sent value, or the zero value for null.
func (n Nullable[T]) Value() T { return n.V }

// OptionalValue is a zero T: it tells the OpenAPI document the type of
// the value.
func (Nullable[T]) OptionalValue() any {
	var v T
	return v
}

// FieldDecodeError is returned by a custom decoder (UnmarshalJSON) of a
// request type for a bad value: the REST API answers it as a field error
// of the field.
type FieldDecodeError struct{ Field, Msg string }

func (e *FieldDecodeError) Error() string { return e.Field + ": " + e.Msg }
