package alerting

import (
	"context"
	"testing"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/alertevent"
)

// TestEveryChannelTypeHasASender fails when a channel type of the API has
// no sender, or the registry names a type the API does not have.
func TestEveryChannelTypeHasASender(t *testing.T) {
	for _, typ := range monv1.AlertChannelTypes {
		if _, ok := senders[typ]; !ok {
			t.Errorf("channel type %s has no sender in senders", typ)
		}
	}
	if len(senders) != len(monv1.AlertChannelTypes) {
		t.Errorf("senders has %d types, the API %d", len(senders), len(monv1.AlertChannelTypes))
	}
	if Accepts("carrier-pigeon", alertevent.MonitorDown) {
		t.Error("a type without a sender accepts events")
	}
	b := &requestBuilder{}
	ch := &monv1.AlertChannel{Spec: monv1.AlertChannelSpec{Type: "carrier-pigeon"}}
	if _, err := b.build(context.Background(), ch, "d1", alertevent.MonitorDown, []byte(`{}`)); err == nil || !isPermanent(err) {
		t.Errorf("build for an unknown type: %v, want a permanent error", err)
	}
}
