package probes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// maxPathSegments bounds the length of a JSON path.
const maxPathSegments = 64

// pathSegment is one step of a JSON path: a key or an index.
type pathSegment struct {
	key   string
	index int
	isKey bool
}

// parseJSONPath parses the small JSON path dialect of assertions and
// extraction: $ (optional), .key, ['key'] or ["key"], and [index] with
// negative indexes counting from the end, for example $.data.items[0].id.
func parseJSONPath(path string) ([]pathSegment, error) {
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
			segs = append(segs, pathSegment{key: p[:end], isKey: true})
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

// decodeJSON decodes a document keeping numbers in their text form.
func decodeJSON(body []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("decode json body: %w", err)
	}
	return v, nil
}

// evalJSONPath returns the value at path in doc (decoded with decodeJSON)
// and whether it exists.
func evalJSONPath(doc any, path string) (any, bool, error) {
	segs, err := parseJSONPath(path)
	if err != nil {
		return nil, false, err
	}
	cur := doc
	for _, s := range segs {
		switch v := cur.(type) {
		case map[string]any:
			if !s.isKey {
				return nil, false, nil
			}
			next, ok := v[s.key]
			if !ok {
				return nil, false, nil
			}
			cur = next
		case []any:
			if s.isKey {
				return nil, false, nil
			}
			i := s.index
			if i < 0 {
				i += len(v)
			}
			if i < 0 || i >= len(v) {
				return nil, false, nil
			}
			cur = v[i]
		default:
			return nil, false, nil
		}
	}
	return cur, true, nil
}

// jsonText renders a decoded JSON value for comparison: strings as is,
// numbers and booleans in their JSON form, null as "null", objects and
// arrays as compact JSON.
func jsonText(v any) string {
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
		b, _ := json.Marshal(x)
		return string(b)
	}
}

func truncateString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
