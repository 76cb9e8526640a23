// Package textutil holds the small text helpers several packages need.
package textutil

import "unicode/utf8"

// Truncate cuts s to at most n characters (runes), never splitting one. The
// limits it enforces are character limits: Kubernetes maxLength, the
// providers' message sizes (Twilio, Slack, Opsgenie, Telegram…) and the
// specification's field lengths. Invalid UTF-8 sequences count as one
// character each and are kept as they are.
func Truncate(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s // at most n bytes is at most n runes
	}
	i, count := 0, 0
	for i < len(s) && count < n {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		count++
	}
	return s[:i]
}
