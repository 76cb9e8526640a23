package mcpserver

import (
	"net/url"
	"strings"

	"github.com/uptime-operator/uptime-operator/internal/credentials"
)

// Redacted stands for a stored credential (see package credentials, which
// redacts monitors for REST and MCP alike).
const Redacted = credentials.Redacted

// RedactConfig is credentials.RedactConfig.
func RedactConfig(cfg map[string]any) map[string]any { return credentials.RedactConfig(cfg) }

// RestoreRedacted is credentials.RestoreRedacted.
func RestoreRedacted(sent, cur map[string]any) (map[string]any, error) {
	return credentials.RestoreRedacted(sent, cur)
}

// containsRedacted reports whether v holds a [REDACTED] string anywhere.
func containsRedacted(v any) bool {
	switch t := v.(type) {
	case string:
		return t == Redacted
	case map[string]any:
		for _, x := range t {
			if containsRedacted(x) {
				return true
			}
		}
	case []any:
		for _, x := range t {
			if containsRedacted(x) {
				return true
			}
		}
	}
	return false
}

// redactURL hides the password of a URL's user info.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	if _, ok := u.User.Password(); !ok {
		return raw
	}
	// Build by hand: url.UserPassword would percent-encode the brackets.
	return strings.Replace(raw, u.User.String()+"@", url.User(u.User.Username()).String()+":"+Redacted+"@", 1)
}
