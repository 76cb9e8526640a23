package sitehealth

import (
	"math"

	"github.com/uptime-operator/uptime-operator/internal/store"
)

// Counts are the issues of a run by kind.
type Counts struct {
	BrokenLinks    int `json:"broken_links"`
	BrokenExternal int `json:"broken_external_links"`
	MixedContent   int `json:"mixed_content"`
	RedirectChains int `json:"redirect_chains"`
	SlowPages      int `json:"slow_pages"`
}

// CountIssues counts issues by kind.
func CountIssues(issues []store.HealthIssue) Counts {
	var c Counts
	for _, is := range issues {
		switch is.Kind {
		case KindBrokenLink:
			c.BrokenLinks++
		case KindBrokenExternal:
			c.BrokenExternal++
		case KindMixedContent:
			c.MixedContent++
		case KindRedirectChain:
			c.RedirectChains++
		case KindSlowPage:
			c.SlowPages++
		}
	}
	return c
}

// CrawlScore is the site's crawl score, 100 minus capped penalties: 5 per
// broken internal link (at most 40), 2 per broken external link (at most
// 20), 3 per mixed-content resource (at most 20), 1 per redirect chain (at
// most 10) and 2 per slow page (at most 10).
func CrawlScore(c Counts) int {
	penalty := min(5*c.BrokenLinks, 40) + min(2*c.BrokenExternal, 20) + min(3*c.MixedContent, 20) +
		min(c.RedirectChains, 10) + min(2*c.SlowPages, 10)
	return max(100-penalty, 0)
}

// IsError reports whether issues of kind count as errors (new ones are
// notified); redirect chains and slow pages are warnings.
func IsError(kind string) bool {
	return kind == KindBrokenLink || kind == KindBrokenExternal || kind == KindMixedContent
}

// metricThreshold is the good and poor bound of one performance metric:
// a value at or below good scores 100, at poor 50, at twice poor 0, linear
// in between.
type metricThreshold struct {
	name       string
	weight     float64
	good, poor float64
}

// performanceThresholds are the metrics of the performance score, with the
// Core Web Vitals bounds where there are some (TTFB 0.8/1.8 s, FCP 1.8/3 s,
// LCP 2.5/4 s, CLS 0.1/0.25) and 1.6/4 MB for the page weight.
var performanceThresholds = []metricThreshold{
	{"ttfb_ms", 15, 800, 1800},
	{"fcp_ms", 15, 1800, 3000},
	{"lcp_ms", 30, 2500, 4000},
	{"cls", 25, 0.1, 0.25},
	{"total_bytes", 15, 1.6e6, 4e6},
}

// metricScore scores one value against its thresholds.
func metricScore(v float64, t metricThreshold) float64 {
	switch {
	case v <= t.good:
		return 100
	case v <= t.poor:
		return 100 - 50*(v-t.good)/(t.poor-t.good)
	case v <= 2*t.poor:
		return 50 - 50*(v-t.poor)/t.poor
	}
	return 0
}

// Metrics are what the browser measured on one page.
type Metrics struct {
	TTFBMs     float64 `json:"ttfb_ms"`
	FCPMs      float64 `json:"fcp_ms"`
	LCPMs      float64 `json:"lcp_ms"`
	CLS        float64 `json:"cls"`
	TotalBytes int64   `json:"total_bytes"`
	Requests   int     `json:"requests"`
}

// PerformanceScore is the weighted mean of the metric scores, rounded.
func PerformanceScore(m Metrics) int {
	vals := map[string]float64{"ttfb_ms": m.TTFBMs, "fcp_ms": m.FCPMs, "lcp_ms": m.LCPMs, "cls": m.CLS, "total_bytes": float64(m.TotalBytes)}
	var sum, weights float64
	for _, t := range performanceThresholds {
		sum += t.weight * metricScore(vals[t.name], t)
		weights += t.weight
	}
	return int(math.Round(sum / weights))
}

// Check is one pass/fail check of an audit category, with the share of
// the category it weighs (Passed may be fractional for counted checks).
type Check struct {
	ID     string  `json:"id"`
	Passed float64 `json:"passed"`
	Detail string  `json:"detail,omitempty"`
}

// CategoryScore is the mean of the checks' pass fractions, 0-100.
func CategoryScore(checks []Check) int {
	if len(checks) == 0 {
		return 0
	}
	var sum float64
	for _, c := range checks {
		sum += c.Passed
	}
	return int(math.Round(100 * sum / float64(len(checks))))
}

// fraction is ok/total as a pass fraction; no items pass.
func fraction(ok, total int) float64 {
	if total == 0 {
		return 1
	}
	return float64(ok) / float64(total)
}

func pass(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
