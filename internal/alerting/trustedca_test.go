package alerting

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/testutil"
	"github.com/uptime-operator/uptime-operator/internal/trust"
)

// TestDeliveryToPrivateCAReceiver checks a webhook delivery to a receiver
// whose certificate a private CA signed (an internal service): it fails on
// the system roots with a certificate error and is delivered once the
// trusted CA bundle holds the CA. Chat channels use the same transport.
func TestDeliveryToPrivateCAReceiver(t *testing.T) {
	var hits atomic.Int32
	srv, caPEM := testutil.PrivateCAServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusOK)
	}))
	deliver := func() store.Delivery {
		ch, s := webhookChannel("internal", srv.URL+"/hook")
		h := newHarness(t, ch, s)
		ids := h.enqueue("uid-internal")
		defer h.run(h.worker("a"))()
		return h.wait(ids...)[0]
	}
	if d := deliver(); d.Status != store.DeliveryFailed || !strings.Contains(d.LastError, "certificate") || hits.Load() != 0 {
		t.Fatalf("without the bundle: status %s, last error %q, %d hits; want failed on the certificate", d.Status, d.LastError, hits.Load())
	}
	pool, err := trust.Pool(caPEM)
	if err != nil {
		t.Fatal(err)
	}
	defer trust.Use(pool)()
	if d := deliver(); d.Status != store.DeliveryDelivered || hits.Load() != 1 {
		t.Fatalf("with the bundle: status %s, last error %q, %d hits", d.Status, d.LastError, hits.Load())
	}
}
