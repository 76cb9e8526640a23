// Package jsonpath is the small JSON path dialect of HTTP assertions and
// multistep extraction. It is a leaf: the probes evaluate paths with it and
// the model (internal/monitor) validates them at admission with the same
// parser, so the model need not import the probe runtime.
package jsonpath

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// maxPathSegments bounds the length of a JSON path.
const maxPathSegments = 64

// pathSegment is one step of a JSON path: a key, an index or a wildcard.
type pathSegment struct {
	key   string
	index int
	isKey bool
	// all selects every member of an object or element of an array.
	all bool
}

// parse parses the small JSON path dialect of assertions and
// extraction: $ (optional), .key, ['key'] or ["key"], [index] with
// negative indexes counting from the end, and the wildcards [*] and .*
// (every element or member), for example $.data.items[0].id or
// $.services[*].status.
func parse(path string) ([]pathSegment, error) {
	p := strings.TrimSpace(path)
	p = strings.TrimPrefix(p, "$")
	var segs []pathSegment
	for p != "" {
		if len(segs) >= maxPathSegments {
			return nil, fmt.Errorf("json path %q has more than %d segments", truncateString(path, 64), maxPathSegments)
		}
		switch p[0] {
		case '.':
			p = p[1:]
			end := strings.IndexAny(p, ".[")
			if end < 0 {
				end = len(p)
			}
			if end == 0 {
				return nil, fmt.Errorf("json path %q has an empty key", truncateString(path, 64))
			}
			if p[:end] == "*" {
				segs = append(segs, pathSegment{all: true})
			} else {
				segs = append(segs, pathSegment{key: p[:end], isKey: true})
			}
			p = p[end:]
		case '[':
			end := strings.IndexByte(p, ']')
			if end < 0 {
				return nil, fmt.Errorf("json path %q has an unclosed bracket", truncateString(path, 64))
			}
			inner := strings.TrimSpace(p[1:end])
			if n := len(inner); n >= 2 && (inner[0] == '\'' || inner[0] == '"') && inner[n-1] == inner[0] {
				key := inner[1 : n-1]
				// Quotes inside a quoted key are not supported.
				if strings.IndexByte(key, inner[0]) >= 0 {
					return nil, fmt.Errorf("json path %q has a malformed quoted key", truncateString(path, 64))
				}
				segs = append(segs, pathSegment{key: key, isKey: true})
			} else if inner == "*" {
				segs = append(segs, pathSegment{all: true})
			} else {
				i, err := strconv.Atoi(inner)
				if err != nil {
					return nil, fmt.Errorf("json path %q has a bad index %q", truncateString(path, 64), truncateString(inner, 32))
				}
				segs = append(segs, pathSegment{index: i})
			}
			p = p[end+1:]
		default:
			if len(segs) == 0 {
				p = "." + p // "data.id" is accepted as "$.data.id"
				continue
			}
			return nil, fmt.Errorf("json path %q: unexpected %q", truncateString(path, 64), p[0])
		}
	}
	return segs, nil
}

// Validate returns why path is not a JSON path of the dialect of
// assertions and extraction, nil when it is. Admission uses it, so a path
// is refused when written rather than failing every check.
func Validate(path string) error {
	if strings.TrimSpace(path) == "" {
		return fmt.Errorf("json path is empty")
	}
	_, err := parse(path)
	return err
}

// Decode decodes a document keeping numbers in their text form.
func Decode(body []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("decode json body: %w", err)
	}
	return v, nil
}

// maxPathMatches bounds what a wildcard path collects.
const maxPathMatches = 10000

// Eval returns the value at path in doc (decoded with Decode)
// and whether it exists. A path with a wildcard returns the array of every
// value it reaches (array elements in order, object members sorted by key),
// and exists
// when it reaches at least one: "$.services[*].status" not_contains "down"
// asserts that no service is down.
func Eval(doc any, path string) (any, bool, error) {
	segs, err := parse(path)
	if err != nil {
		return nil, false, err
	}
	wild := false
	cur := []any{doc}
	for _, s := range segs {
		wild = wild || s.all
		var next []any
		for _, v := range cur {
			next = step(next, v, s)
			if len(next) > maxPathMatches {
				return nil, false, fmt.Errorf("json path %q reaches more than %d values", truncateString(path, 64), maxPathMatches)
			}
		}
		cur = next
	}
	switch {
	case wild:
		return cur, len(cur) > 0, nil
	case len(cur) == 1:
		return cur[0], true, nil
	}
	return nil, false, nil
}

// step appends to out what segment s selects in v.
func step(out []any, v any, s pathSegment) []any {
	switch x := v.(type) {
	case map[string]any:
		switch {
		case s.all:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				out = append(out, x[k])
			}
		case s.isKey:
			if next, ok := x[s.key]; ok {
				out = append(out, next)
			}
		}
	case []any:
		switch {
		case s.all:
			out = append(out, x...)
		case !s.isKey:
			i := s.index
			if i < 0 {
				i += len(x)
			}
			if i >= 0 && i < len(x) {
				out = append(out, x[i])
			}
		}
	}
	return out
}

// Text renders a decoded JSON value for comparison: strings as is,
// numbers and booleans in their JSON form, null as "null", objects and
// arrays as compact JSON.
func Text(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		return strconv.FormatBool(x)
	case nil:
		return "null"
	default:
		// Without HTML escaping: an assertion on "<" must see "<", not
		// "\u003c".
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(x)
		return strings.TrimSuffix(b.String(), "\n")
	}
}

// truncateString cuts s to n bytes and marks the cut, for error messages
// that quote a path.
func truncateString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
