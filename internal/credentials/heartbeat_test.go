package credentials

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

// TestHeartbeatTokenInSecret covers where a cron monitor's token lives:
// in its own credentials Secret, shown only when the Secret is the
// monitor's (by UID) and the token matches the hash in the object.
func TestHeartbeatTokenInSecret(t *testing.T) {
	m := &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Name: "backup", Namespace: "team", UID: "uid-1"},
		Spec: monv1.MonitorSpec{Type: monv1.MonitorCron}}
	tok := monv1.NewHeartbeatToken()
	var sec corev1.Secret
	if err := KeepHeartbeatToken(&sec, m, tok); err != nil {
		t.Fatal(err)
	}
	if sec.Name != SecretName("backup") || sec.Labels[monv1.CredentialsOfLabel] != "backup" || !IsOwn(&sec, m) {
		t.Fatalf("not the monitor's own credentials Secret: %+v", sec.ObjectMeta)
	}
	if got := HeartbeatToken(&sec, m); got != "" {
		t.Fatalf("token shown before the object holds its hash: %q", got)
	}
	monv1.SetHeartbeatToken(m, tok)
	if got := HeartbeatToken(&sec, m); got != tok {
		t.Fatalf("HeartbeatToken = %q, want %q", got, tok)
	}
	if m.Annotations[monv1.HeartbeatTokenHashAnnotation] == tok || monv1.HeartbeatTokenHash(m) != monv1.HashHeartbeatToken(tok) {
		t.Fatal("the object must hold the hash, never the token")
	}

	// A re-created Monitor of the name (another UID) gets nothing from the
	// Secret its predecessor left, nor may it write into it.
	again := m.DeepCopy()
	again.UID = "uid-2"
	if got := HeartbeatToken(&sec, again); got != "" {
		t.Fatalf("an earlier monitor's token shown: %q", got)
	}
	if err := KeepHeartbeatToken(sec.DeepCopy(), again, monv1.NewHeartbeatToken()); err == nil {
		t.Fatal("an earlier monitor's Secret was written")
	}

	// A hash set by hand that matches no kept token shows no URL.
	m.Annotations[monv1.HeartbeatTokenHashAnnotation] = monv1.HashHeartbeatToken(monv1.NewHeartbeatToken())
	if got := HeartbeatToken(&sec, m); got != "" {
		t.Fatalf("a token that does not work was shown: %q", got)
	}

	// Writing the header credentials again keeps the token.
	data := Externalize(&monv1.MonitorSpec{}, "backup", sec.Data)
	if string(data[monv1.HeartbeatTokenKey]) != tok {
		t.Fatal("Externalize dropped the heartbeat token")
	}

	if err := KeyReferable(monv1.SecretKeySelector{Name: SecretName("backup"), Key: monv1.HeartbeatTokenKey}, m); err == nil {
		t.Fatal("a header may not send the heartbeat token")
	}
	if err := KeyReferable(monv1.SecretKeySelector{Name: SecretName("backup"), Key: "http.authorization"}, m); err != nil {
		t.Fatal(err)
	}
}
