package alerting

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// TestChannelReadsOnlyItsOwnOrOptedInSecrets: an AlertChannel writer sets
// signingSecretRef to an application password (a Secret neither the
// channel's own nor opted in) and webhookURL to their server; on 6d85b7e
// every delivery carried an HMAC under that password. Now the delivery
// fails without a request, naming the rule, and so does one that names
// another channel's signing secret; the channel's own Secret and an
// opted-in one sign as before.
func TestChannelReadsOnlyItsOwnOrOptedInSecrets(t *testing.T) {
	rc := newReceiver(t, nil)
	appPassword := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "app-db"},
		Data: map[string][]byte{"password": []byte("hunter2")}}
	optedIn := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "shared-signing",
		Labels: map[string]string{monv1.CredentialsLabel: monv1.CredentialsLabelValue}},
		Data: map[string][]byte{"key": []byte(testSecret)}}
	own, ownSecret := webhookChannel("own", rc.URL+"/own")
	oracle := channel("oracle", monv1.ChannelWebhook, nil)
	oracle.Spec.WebhookURL = rc.URL + "/oracle"
	oracle.Spec.SigningSecretRef = &monv1.SecretKeySelector{Name: "app-db", Key: "password"}
	oracle.Status.SigningSecretName = "app-db" // as the controller reports a reference
	thief := channel("thief", monv1.ChannelWebhook, nil)
	thief.Spec.WebhookURL = rc.URL + "/thief"
	thief.Spec.SigningSecretRef = &monv1.SecretKeySelector{Name: ownSecret.Name, Key: monv1.SigningSecretKey}
	thief.Status.SigningSecretName = ownSecret.Name
	shared := channel("shared", monv1.ChannelWebhook, nil)
	shared.Spec.WebhookURL = rc.URL + "/shared"
	shared.Spec.SigningSecretRef = &monv1.SecretKeySelector{Name: "shared-signing", Key: "key"}
	shared.Status.SigningSecretName = "shared-signing"
	h := newHarness(t, appPassword, optedIn, own, ownSecret, oracle, thief, shared)

	ids := map[string]string{}
	for _, name := range []string{"own", "oracle", "thief", "shared"} {
		ids[name] = h.enqueue("uid-" + name)[0]
	}
	defer h.run(h.worker("a"))()
	for name, want := range map[string]store.DeliveryStatus{"own": store.DeliveryDelivered, "shared": store.DeliveryDelivered,
		"oracle": store.DeliveryFailed, "thief": store.DeliveryFailed} {
		d := h.wait(ids[name])[0]
		if d.Status != want {
			t.Errorf("%s: delivery %s (%s), want %s", name, d.Status, d.LastError, want)
		}
		if want == store.DeliveryFailed && !strings.Contains(d.LastError, "may not be used by this channel") {
			t.Errorf("%s: the failure does not name the rule: %q", name, d.LastError)
		}
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, r := range rc.reqs {
		if r.path == "/oracle" || r.path == "/thief" {
			t.Errorf("a request reached %s signed with a Secret the channel may not read", r.path)
		}
	}
}
