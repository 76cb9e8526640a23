package monitors

import (
	"bytes"
	"context"
	"net/http"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apikeys"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// TestCheckScreenshot: the screenshot of a failed browser check is served
// as a JPEG to a read-only key of its workspace, and is not found through
// another workspace, another monitor or a check without one.
func TestCheckScreenshot(t *testing.T) {
	shop := &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "shop", UID: types.UID("uid-shop")},
		Spec: monv1.MonitorSpec{Type: monv1.MonitorBrowser, URL: "https://shop.example.com"}}
	blog := &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "blog", UID: types.UID("uid-blog")},
		Spec: monv1.MonitorSpec{Type: monv1.MonitorHTTP, URL: "https://blog.example.com"}}
	f := newRouteFixture(t, shop, blog)
	img := []byte("\xff\xd8\xff\xe0 a jpeg")
	checks := []store.Check{
		{ID: "c1", MonitorID: "uid-shop", Namespace: "team", Region: "eu", CheckedAt: f.clk.Now().Add(-time.Minute), Status: store.StatusDown, Screenshot: img},
		{ID: "c2", MonitorID: "uid-shop", Namespace: "team", Region: "eu", CheckedAt: f.clk.Now(), Status: store.StatusUp},
	}
	if _, err := f.st.InsertChecks(context.Background(), checks); err != nil {
		t.Fatal(err)
	}
	rec := f.call("team", apikeys.ReadOnly, http.MethodGet, "/monitors/uid-shop/checks/c1/screenshot", nil)
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "image/jpeg" || !bytes.Equal(rec.Body.Bytes(), img) {
		t.Fatalf("screenshot: %d %s %q", rec.Code, rec.Header().Get("Content-Type"), rec.Body.String())
	}
	for _, c := range []struct{ ns, path string }{
		{"other", "/monitors/uid-shop/checks/c1/screenshot"},
		{"team", "/monitors/uid-blog/checks/c1/screenshot"},
		{"team", "/monitors/uid-shop/checks/c2/screenshot"},
	} {
		if rec := f.call(c.ns, apikeys.ReadOnly, http.MethodGet, c.path, nil); rec.Code != http.StatusNotFound {
			t.Errorf("%s %s: %d, want 404", c.ns, c.path, rec.Code)
		}
	}
}
