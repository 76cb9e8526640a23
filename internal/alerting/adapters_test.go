package alerting

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/alertevent"
)

func TestSLOEventsFollowTheMonitorsRouting(t *testing.T) {
	m := monitor("api", "")
	hook := channel("hook", monv1.ChannelWebhook, nil)
	chat := channel("chat", monv1.ChannelSlack, &monv1.AlertRouting{Scope: "monitors", Monitors: []monv1.LocalObjectReference{{Name: "api"}}})
	other := channel("other", monv1.ChannelSlack, &monv1.AlertRouting{Scope: "monitors", Monitors: []monv1.LocalObjectReference{{Name: "web"}}})
	pager := channel("pager", monv1.ChannelPagerDuty, nil)
	a := EngineAlerts{Router: &Router{Reader: fakeClient(m, hook, chat, other, pager), BaseURL: "https://uptime.example.com"}}
	sli, left := 99.1, -12.5
	slo := &monv1.SLO{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "api-availability", UID: "slo-1"},
		Spec:   monv1.SLOSpec{TargetPercentage: 99.5},
		Status: monv1.SLOStatus{CurrentSLI: &sli, ErrorBudgetRemainingPercent: &left, BurnRates: []monv1.BurnRate{{Window: "1h", Rate: 20}}}}
	evs, err := a.SLOEvents(context.Background(), alertevent.SLOBudgetExhausted, slo, m)
	if err != nil || len(evs) != 1 {
		t.Fatalf("SLOEvents = %v, %v", evs, err)
	}
	got := slices.Clone(evs[0].Channels)
	slices.Sort(got)
	// Webhooks and chat channels covering the monitor; not a chat routed
	// elsewhere, not an incident-only channel.
	if !slices.Equal(got, []string{"uid-chat", "uid-hook"}) {
		t.Fatalf("channels = %v", got)
	}
	var p alertevent.SLOPayload
	if err := json.Unmarshal(evs[0].Payload, &p); err != nil {
		t.Fatal(err)
	}
	if p.Event != alertevent.SLOBudgetExhausted || p.Title != "SLO api-availability of api has exhausted its error budget" ||
		*p.BudgetRemainingPercent != -12.5 || p.BurnRates["1h"] != 20 {
		t.Fatalf("payload = %+v", p)
	}
}
