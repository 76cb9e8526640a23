package credentials

import (
	"crypto/subtle"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

// A cron Monitor's heartbeat token is a credential like a header value, so
// it is kept where they are: in the Monitor's own credentials Secret (key
// monv1.HeartbeatTokenKey), owned by the Monitor's UID, while the object
// holds only the token's hash (monv1.HeartbeatTokenHashAnnotation; see
// api/v1alpha1/monitor_heartbeat.go for why).

// HeartbeatToken returns the heartbeat token of m that sec keeps, or ""
// when sec is not m's own credentials Secret (IsOwn), holds no token, or
// holds one whose hash is not the one m's pings are matched by (a hash set
// by hand, a rotation half done): a URL shown must be one that works.
func HeartbeatToken(sec *corev1.Secret, m *monv1.Monitor) string {
	if sec == nil || !IsOwn(sec, m) {
		return ""
	}
	tok := string(sec.Data[monv1.HeartbeatTokenKey])
	want := monv1.HeartbeatTokenHash(m)
	if tok == "" || want == "" || subtle.ConstantTimeCompare([]byte(monv1.HashHeartbeatToken(tok)), []byte(want)) != 1 {
		return ""
	}
	return tok
}

// StoredHeartbeatToken returns the token sec keeps for m whatever m's
// hash says ("" when sec is not m's own): the controller reuses it when a
// write of the hash was lost after the Secret's.
func StoredHeartbeatToken(sec *corev1.Secret, m *monv1.Monitor) string {
	if sec == nil || !IsOwn(sec, m) {
		return ""
	}
	return string(sec.Data[monv1.HeartbeatTokenKey])
}

// KeepHeartbeatToken makes sec, m's credentials Secret as read (or a zero
// Secret when there is none yet), keep tok as m's heartbeat token: named
// and labelled as m's own, owned by m's UID (m must exist). It refuses a
// Secret of that name that is not m's own: someone else's, or an earlier
// Monitor's of the same name.
func KeepHeartbeatToken(sec *corev1.Secret, m *monv1.Monitor, tok string) error {
	if m.UID == "" {
		return fmt.Errorf("monitor %s has no uid yet", m.Name)
	}
	if sec.Name == "" {
		sec.Namespace, sec.Name, sec.Type = m.Namespace, SecretName(m.Name), corev1.SecretTypeOpaque
		sec.Labels = map[string]string{monv1.CredentialsOfLabel: m.Name}
	} else if !IsOwn(sec, m) {
		return fmt.Errorf("secret %s exists and does not hold this monitor's credentials; rename the monitor or the Secret", sec.Name)
	}
	SetOwner(sec, m)
	if sec.Data == nil {
		sec.Data = map[string][]byte{}
	}
	sec.Data[monv1.HeartbeatTokenKey] = []byte(tok)
	return nil
}

// SetOwner makes m (once created) the owner of its credentials Secret sec,
// so the garbage collector deletes the Secret with the Monitor, and the
// owner's UID is what makes the Secret m's own (IsOwn); the pending mark
// goes. It reports whether it changed sec.
func SetOwner(sec *corev1.Secret, m *monv1.Monitor) bool {
	if m.UID == "" {
		return false
	}
	changed := false
	if _, ok := sec.Annotations[monv1.CredentialsPendingAnnotation]; ok {
		delete(sec.Annotations, monv1.CredentialsPendingAnnotation)
		changed = true
	}
	for _, o := range sec.OwnerReferences {
		if o.UID == m.UID {
			return changed
		}
	}
	sec.OwnerReferences = append(sec.OwnerReferences, metav1.OwnerReference{
		APIVersion: monv1.GroupVersion.String(), Kind: "Monitor", Name: m.Name, UID: m.UID,
	})
	return true
}

// KeyReferable refuses a header's valueFrom that names the heartbeat token
// in m's own credentials Secret: it is the credential of m's heartbeat
// URL, not a value to send to a target (a Monitor writer could otherwise
// have it sent to a server of theirs).
func KeyReferable(sel monv1.SecretKeySelector, m *monv1.Monitor) error {
	if sel.Key == monv1.HeartbeatTokenKey && sel.Name == SecretName(m.Name) {
		return &NotAllowedError{Secret: sel.Name, Reason: fmt.Sprintf("key %s is the monitor's heartbeat token, not a header value", sel.Key)}
	}
	return nil
}
