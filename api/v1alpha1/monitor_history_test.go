package v1alpha1

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestHistorySource(t *testing.T) {
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		want        string
	}{
		{"its own name by default", nil, "web"},
		{"the name before a rename", map[string]string{AdoptHistoryFromAnnotation: "website"}, "website"},
		{"empty starts fresh", map[string]string{AdoptHistoryFromAnnotation: ""}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &Monitor{ObjectMeta: metav1.ObjectMeta{Name: "web", Annotations: tc.annotations}}
			if got := HistorySource(m); got != tc.want {
				t.Fatalf("HistorySource = %q, want %q", got, tc.want)
			}
		})
	}
}
