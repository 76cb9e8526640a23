package alerting

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/netguard/netguardtest"
)

// TestWebhookGuardTrickyTargets sends a signed test event to a webhook
// channel on every hostile target of the guard's lab, with private targets
// not allowed: none is delivered or reached; the public addresses are.
func TestWebhookGuardTrickyTargets(t *testing.T) {
	lab := netguardtest.Start(t)
	if lab == nil {
		return
	}
	var objs []client.Object
	channels := map[string]*monv1.AlertChannel{}
	urls := []string{}
	for _, tg := range netguardtest.Targets {
		urls = append(urls, lab.URL(tg.Addr, "/"))
	}
	for _, a := range netguardtest.Allowed {
		urls = append(urls, lab.URL(a, "/"))
	}
	for i, u := range urls {
		ch, s := webhookChannel(fmt.Sprintf("target-%d", i), u)
		channels[u] = ch
		objs = append(objs, ch, s)
	}
	h := newHarness(t, objs...)
	w := h.worker("guard")
	w.AllowPrivateTargets = false
	lab.Check(t, func(url string) (bool, string) {
		res, err := w.SendTest(context.Background(), channels[url])
		if err != nil {
			t.Fatalf("SendTest %s: %v", url, err)
		}
		return !res.Delivered && strings.Contains(res.Error, "is blocked"), res.Message()
	})
}
