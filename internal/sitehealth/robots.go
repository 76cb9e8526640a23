package sitehealth

import (
	"bufio"
	"io"
	"strings"
)

// RobotsAgent is the product token matched against robots.txt user-agent
// lines.
const RobotsAgent = "uptime-operator"

// robotsRule is one Allow or Disallow line.
type robotsRule struct {
	allow   bool
	pattern string
}

// Robots is the part of a robots.txt that applies to the crawler.
type Robots struct {
	rules []robotsRule
}

// ParseRobots reads a robots.txt and keeps the rules of the most specific
// group for agent: the groups naming it (a user-agent value that is a
// case-insensitive prefix of the agent token), else the "*" groups.
func ParseRobots(r io.Reader, agent string) *Robots {
	agent = strings.ToLower(agent)
	var named, star []robotsRule
	var groupAgents []string
	inRules, hasNamed := false, false
	sc := bufio.NewScanner(io.LimitReader(r, 512<<10))
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		key, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		key, value = strings.ToLower(strings.TrimSpace(key)), strings.TrimSpace(value)
		switch key {
		case "user-agent":
			if inRules {
				// A user-agent line after rules starts a new group.
				groupAgents, inRules = nil, false
			}
			a := strings.ToLower(value)
			groupAgents = append(groupAgents, a)
			if a != "*" && a != "" && strings.HasPrefix(agent, a) {
				hasNamed = true
			}
		case "allow", "disallow":
			inRules = true
			if value == "" {
				// "Disallow:" allows everything; an empty Allow means nothing.
				continue
			}
			rule := robotsRule{allow: key == "allow", pattern: value}
			for _, a := range groupAgents {
				switch {
				case a == "*":
					star = append(star, rule)
				case a != "" && strings.HasPrefix(agent, a):
					named = append(named, rule)
				}
			}
		}
	}
	if hasNamed {
		return &Robots{rules: named}
	}
	return &Robots{rules: star}
}

// Allowed reports whether path (with its query) may be fetched: the longest
// matching rule decides, Allow winning a tie; no match allows.
func (rb *Robots) Allowed(path string) bool {
	if rb == nil {
		return true
	}
	if path == "" {
		path = "/"
	}
	best, allowed := -1, true
	for _, r := range rb.rules {
		if !robotsMatch(r.pattern, path) {
			continue
		}
		n := len(r.pattern)
		if n > best || (n == best && r.allow) {
			best, allowed = n, r.allow
		}
	}
	return allowed
}

// robotsMatch matches a robots.txt path pattern: a prefix match where "*"
// matches any run of characters and a final "$" anchors the end.
func robotsMatch(pattern, path string) bool {
	anchored := strings.HasSuffix(pattern, "$")
	pattern = strings.TrimSuffix(pattern, "$")
	parts := strings.Split(pattern, "*")
	if !strings.HasPrefix(path, parts[0]) {
		return false
	}
	pos := len(parts[0])
	for i, part := range parts[1:] {
		last := i == len(parts)-2
		if last && anchored {
			return strings.HasSuffix(path[pos:], part)
		}
		j := strings.Index(path[pos:], part)
		if j < 0 {
			return false
		}
		pos += j + len(part)
	}
	return !anchored || pos == len(path)
}
