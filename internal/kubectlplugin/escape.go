package kubectlplugin

import (
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// EscapeControl returns s with every control character (C0 but tab and
// newline, DEL, C1) and every bidirectional override written as a visible
// Go escape (\x1b, \u009b, \u202e). Monitor names, incident notes and
// errors come from whoever may write them; printed raw, ESC and BEL
// sequences would rewrite the terminal of the admin who reads them (set
// its title, move the cursor, hide lines, or worse on old terminals).
func EscapeControl(s string) string {
	if !strings.ContainsFunc(s, unsafeRune) && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x80 && unsafeRune(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// unsafeRune reports whether r may not reach a terminal as it is.
func unsafeRune(r rune) bool {
	if r == '\n' || r == '\t' {
		return false
	}
	return unicode.IsControl(r) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

// safeWriter escapes control characters of everything written to w
// (EscapeControl), so no command can print one by forgetting to.
type safeWriter struct{ w io.Writer }

func (s safeWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(s.w, EscapeControl(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
