package credentials

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

// TestReferable covers which Secrets a Monitor may read: its own
// credentials Secret and Secrets that opt in, never one the operator made
// for something else, labelled or not.
func TestReferable(t *testing.T) {
	m := &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Name: "db", UID: "uid-db"}}
	optIn := map[string]string{monv1.CredentialsLabel: monv1.CredentialsLabelValue}
	owner := func(kind, name, uid string) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: monv1.GroupVersion.String(), Kind: kind, Name: name, UID: types.UID(uid)}}
	}
	for _, c := range []struct {
		name string
		sec  corev1.Secret
		why  string // a fragment of the refusal, "" when allowed
	}{
		{"a Secret of the user that does not opt in", corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "app-db"}},
			"does not opt in"},
		{"a Secret of the user that opts in", corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "api-token", Labels: optIn}}, ""},
		{"the opt-in label with another value", corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "api-token",
			Labels: map[string]string{monv1.CredentialsLabel: "yes"}}}, "does not opt in"},
		{"its own credentials Secret, labelled by the REST API and owned by its UID", corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db-credentials",
			Labels: map[string]string{monv1.CredentialsOfLabel: "db"}, OwnerReferences: owner("Monitor", "db", "uid-db")}}, ""},
		{"its own credentials Secret, owned by it", corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db-credentials",
			OwnerReferences: owner("Monitor", "db", "uid-db")}}, ""},
		{"the credentials Secret of an earlier monitor of the name, orphaned (label, no owner)", corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db-credentials",
			Labels: map[string]string{monv1.CredentialsOfLabel: "db"}}}, "credentials of an earlier monitor named db"},
		{"a Secret the REST API made for it while creating it", corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db-credentials",
			Labels: map[string]string{monv1.CredentialsOfLabel: "db"}, Annotations: map[string]string{monv1.CredentialsPendingAnnotation: "true"}}}, ""},
		{"a pending mark on a Secret another monitor owns", corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db-credentials",
			Labels: map[string]string{monv1.CredentialsOfLabel: "db"}, Annotations: map[string]string{monv1.CredentialsPendingAnnotation: "true"},
			OwnerReferences: owner("Monitor", "db", "uid-old")}}, "belongs to Monitor db"},
		{"a Secret that only has the name of its own", corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db-credentials"}},
			"does not opt in"},
		{"another monitor's credentials, labelled to opt in", corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "shop-credentials",
			Labels: map[string]string{monv1.CredentialsOfLabel: "shop", monv1.CredentialsLabel: "true"}}}, "credentials of monitor shop"},
		{"a Secret owned by another monitor of the same name", corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db-credentials",
			OwnerReferences: owner("Monitor", "db", "uid-old")}}, "belongs to Monitor db"},
		{"a webhook signing secret, labelled to opt in", corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "stripe-signing", Labels: optIn,
			OwnerReferences: owner("AlertChannel", "stripe", "uid-ch")}}, "belongs to AlertChannel stripe"},
		{"a status page password", corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db-access", Labels: optIn,
			OwnerReferences: owner("StatusPage", "db", "uid-page")}}, "belongs to StatusPage db"},
		{"an API key", corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "uptime-api-key-x", Labels: optIn},
			Type: "uptime-operator.io/api-key"}, "type uptime-operator.io/api-key"},
		{"the operator's own signing key", corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "uptime-operator-signing-key",
			Labels: map[string]string{monv1.ManagedByLabel: monv1.ManagedByValue, monv1.CredentialsLabel: "true"}}}, "its own use"},
		{"a Secret owned by an object of another group", corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tls", Labels: optIn,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "cert-manager.io/v1", Kind: "Certificate", Name: "tls"}}}}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := Referable(&c.sec, m)
			switch {
			case c.why == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.why != "" && (err == nil || !strings.Contains(err.Error(), c.why)):
				t.Fatalf("err = %v, want a refusal saying %q", err, c.why)
			}
		})
	}
	// While a Monitor is being created it has no UID: only the Secret the
	// REST API made for this create (pending) is its own; neither an
	// orphan that has the name and label nor one owned by an earlier
	// Monitor of the name is.
	unsaved := &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Name: "db"}}
	label := map[string]string{monv1.CredentialsOfLabel: "db"}
	pending := corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db-credentials", Labels: label,
		Annotations: map[string]string{monv1.CredentialsPendingAnnotation: "true"}}}
	if err := Referable(&pending, unsaved); err != nil {
		t.Fatalf("own Secret of a Monitor being created: %v", err)
	}
	orphan := corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db-credentials", Labels: label}}
	if err := Referable(&orphan, unsaved); err == nil || !strings.Contains(err.Error(), "earlier monitor named db") {
		t.Fatalf("an orphaned Secret of the name: err = %v", err)
	}
	owned := corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db-credentials", Labels: label, OwnerReferences: owner("Monitor", "db", "uid-old")}}
	if err := Referable(&owned, unsaved); err == nil || !strings.Contains(err.Error(), "belongs to Monitor db") {
		t.Fatalf("a Secret owned by an earlier Monitor of the name: err = %v", err)
	}
}

// TestNewReferences: a write makes the references that are new, or whose
// header now goes to another origin; a reference kept as it was is not the
// writer's.
func TestNewReferences(t *testing.T) {
	ref := func(name string) []monv1.HTTPHeader {
		return []monv1.HTTPHeader{{Name: "Authorization", ValueFrom: &monv1.SecretKeySelector{Name: name, Key: "k"}}}
	}
	was := &monv1.MonitorSpec{URL: "https://api.example.com/health", HTTP: &monv1.HTTPConfig{Headers: ref("api-token")}}
	for _, c := range []struct {
		name string
		spec *monv1.MonitorSpec
		want int
	}{
		{"kept as it was", was.DeepCopy(), 0},
		{"kept, path changed on the same origin", &monv1.MonitorSpec{URL: "https://API.example.com:443/other", HTTP: &monv1.HTTPConfig{Headers: ref("api-token")}}, 0},
		{"kept, target moved to another host", &monv1.MonitorSpec{URL: "https://collector.example.net/", HTTP: &monv1.HTTPConfig{Headers: ref("api-token")}}, 1},
		{"kept, scheme changed", &monv1.MonitorSpec{URL: "http://api.example.com/health", HTTP: &monv1.HTTPConfig{Headers: ref("api-token")}}, 1},
		{"another Secret", &monv1.MonitorSpec{URL: was.URL, HTTP: &monv1.HTTPConfig{Headers: ref("db-password")}}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := NewReferences(c.spec, was); len(got) != c.want {
				t.Fatalf("NewReferences = %+v, want %d", got, c.want)
			}
		})
	}
	if got := NewReferences(was, nil); len(got) != 1 || got[0].Path.String() != "spec.http.headers[0]" {
		t.Fatalf("a new Monitor's references = %+v", got)
	}
}
