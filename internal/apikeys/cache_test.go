package apikeys

import (
	"bytes"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestTrimForCache: a Secret labelled like an API key but of another type
// is cached without its (here 1 MiB of) data; an API key keeps its four
// fields and drops anything else, so Authenticate still finds it.
func TestTrimForCache(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 1<<20)
	other := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "blob", Labels: map[string]string{HashLabel: "abc"}},
		Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"blob": big}}
	got, err := TrimForCache(other)
	if err != nil || got.(*corev1.Secret).Data != nil {
		t.Fatalf("an Opaque Secret with the label keeps data: %v", err)
	}
	key := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "key"}, Type: SecretType, Data: map[string][]byte{
		keyHash: []byte("h"), keyLevel: []byte("standard"), keyName: []byte("ci"), keyPrefix: []byte("sk_ab"), "padding": big}}
	got, _ = TrimForCache(key)
	d := got.(*corev1.Secret).Data
	if len(d) != 4 || string(d[keyHash]) != "h" || string(d[keyLevel]) != "standard" || d["padding"] != nil {
		t.Fatalf("an API key trimmed to %v", d)
	}
	if k := fromSecret(got.(*corev1.Secret)); k.Name != "ci" || k.DisplayPrefix != "sk_ab" {
		t.Fatalf("the key read back: %+v", k)
	}
}
