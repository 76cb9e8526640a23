package textutil

import "testing"

func TestTruncate(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"", 5, ""},
		{"short", 5, "short"},
		{"longer text", 6, "longer"},
		{"héllo wörld", 5, "héllo"}, // runes, not bytes
		{"日本語テキスト", 3, "日本語"},       // never splits a character
		{"ab\xffcd", 3, "ab\xff"},   // an invalid byte counts as one
		{"anything", 0, ""},
		{"anything", -1, ""},
	}
	for _, tt := range tests {
		if got := Truncate(tt.s, tt.n); got != tt.want {
			t.Errorf("Truncate(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}
