package core

import (
	"regexp"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Values as every response shows them.

// ISOTime formats a timestamp the way every response does: UTC with
// microseconds, never rounded (the store keeps microseconds).
func ISOTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000Z") }

// ISOTimePtr is ISOTime of t, or nil.
func ISOTimePtr(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := ISOTime(*t)
	return &s
}

// MetaTimePtr is ISOTime of t, or nil.
func MetaTimePtr(t *metav1.Time) *string {
	if t == nil {
		return nil
	}
	return ISOTimePtr(&t.Time)
}

// StrPtr is &s, or nil for "" (JSON null).
func StrPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// NonNil is v, or an empty slice for nil, so JSON shows [] and not null.
func NonNil[T any](v []T) []T {
	if v == nil {
		return []T{}
	}
	return v
}

var slugRE = regexp.MustCompile(`[^a-z0-9]+`)

// ObjectNamePrefix is a generateName prefix made from a display name.
func ObjectNamePrefix(name, fallback string) string {
	slug := strings.Trim(slugRE.ReplaceAllString(strings.ToLower(name), "-"), "-")
	if len(slug) > 40 {
		slug = strings.TrimRight(slug[:40], "-")
	}
	if slug == "" || slug[0] < 'a' || slug[0] > 'z' {
		slug = strings.Trim(fallback+"-"+slug, "-")
	}
	return slug + "-"
}

// Dedupe trims values and drops empty and repeated ones, keeping the
// first of each.
func Dedupe(vs []string) []string {
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		if v = strings.TrimSpace(v); v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// MaxJobDurationMs bounds the duration a heartbeat ping reports: 7 days.
const MaxJobDurationMs = 7 * 24 * 3600 * 1000
