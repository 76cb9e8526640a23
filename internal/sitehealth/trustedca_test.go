package sitehealth

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/netguard"
	"github.com/uptime-operator/uptime-operator/internal/testutil"
	"github.com/uptime-operator/uptime-operator/internal/trust"
)

// TestCrawlPrivateCASite checks that the crawler reaches an internal site
// whose certificate a private CA signed once the trusted CA bundle holds
// the CA, and refuses it on the system roots alone.
func TestCrawlPrivateCASite(t *testing.T) {
	srv, caPEM := testutil.PrivateCAServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<!doctype html><html><head><title>Intranet</title></head><body>hello</body></html>`))
	}))
	cfg := CrawlConfig{URL: srv.URL + "/", MaxPages: 5, MaxDepth: 1, Guard: netguard.Guard{AllowPrivate: true},
		SlowAfter: time.Second, Timeout: 5 * time.Second}
	var se *StartError
	if _, err := Crawl(context.Background(), cfg); !errors.As(err, &se) {
		t.Fatalf("without the bundle: err = %v, want the start page refused", err)
	}
	pool, err := trust.Pool(caPEM)
	if err != nil {
		t.Fatal(err)
	}
	defer trust.Use(pool)()
	res, err := Crawl(context.Background(), cfg)
	if err != nil {
		t.Fatalf("with the bundle: %v", err)
	}
	if res.Pages < 1 {
		t.Errorf("pages = %d", res.Pages)
	}
}
