package core

import (
	"net/http"
	"regexp"
	"strconv"
	"time"
)

// cursorRE is the specification's cursor format:
// YYYY-MM-DDTHH:MM:SS[.ffffff][Z], always UTC.
var cursorRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z?$`)

// ParseCursor reads a `before` cursor exactly, without rounding.
func ParseCursor(v string) (time.Time, bool) {
	if !cursorRE.MatchString(v) {
		return time.Time{}, false
	}
	if v[len(v)-1] != 'Z' {
		v += "Z"
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, false
	}
	return t.UTC(), true
}

// ParseISO reads an ISO 8601 bound (RFC 3339, or a date).
func ParseISO(v string) (time.Time, bool) {
	if t, ok := ParseCursor(v); ok {
		return t, true
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// IntParam reads an integer query parameter within [lo, hi].
func IntParam(r *http.Request, name string, def, lo, hi int) (int, *FieldError) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		fe := FieldErr(name, "must be an integer between %d and %d", lo, hi)
		return 0, &fe
	}
	return n, nil
}
