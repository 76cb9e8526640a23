package mcpserver

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// clean makes untrusted text (names, errors, notes) safe to embed in a
// markdown line: one line, no table separators, bounded length.
func clean(s string) string {
	return cleanN(s, 300)
}

func cleanN(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	s = strings.ReplaceAll(s, "|", "¦")
	if r := []rune(s); len(r) > n {
		s = string(r[:n]) + "…"
	}
	return s
}

func str(p *string) string {
	if p == nil || *p == "" {
		return "-"
	}
	return *p
}

func pct(p *float64) string {
	if p == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.3f%%", *p)
}

func ms(p *int64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%d ms", *p)
}

// duration renders seconds as a short human duration.
func duration(sec float64) string {
	d := time.Duration(sec * float64(time.Second)).Round(time.Second)
	switch {
	case d < time.Minute:
		return d.String()
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	default:
		return fmt.Sprintf("%.1fd", d.Hours()/24)
	}
}

// jsonBlock renders v as a fenced JSON block.
func jsonBlock(v any) string {
	raw, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return ""
	}
	return "```json\n" + string(raw) + "\n```\n"
}
