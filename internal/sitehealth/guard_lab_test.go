package sitehealth

import (
	"context"
	"testing"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/netguard"
	"github.com/uptime-operator/uptime-operator/internal/netguard/netguardtest"
)

// TestCrawlGuardTrickyTargets starts a crawl on every hostile target of the
// guard's lab: each start page is refused as blocked and never reached; the
// public addresses are crawled.
func TestCrawlGuardTrickyTargets(t *testing.T) {
	lab := netguardtest.Start(t)
	if lab == nil {
		return
	}
	lab.Check(t, func(url string) (bool, string) {
		_, err := Crawl(context.Background(), CrawlConfig{URL: url, MaxPages: 1, Timeout: 3 * time.Second})
		if err == nil {
			return false, "crawled"
		}
		return netguard.IsBlocked(err), err.Error()
	})
}
