package podsecurity

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestViolations shows the evaluator refuses what admission refuses (a
// NET_RAW capability, the probe Pods of main) and allows a restricted Pod.
func TestViolations(t *testing.T) {
	restricted := func() corev1.PodSpec {
		return corev1.PodSpec{
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot:   ptr.To(true),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
				Sysctls:        []corev1.Sysctl{{Name: "net.ipv4.ping_group_range", Value: "0 2147483647"}},
			},
			Containers: []corev1.Container{{Name: "probe", Image: "x", SecurityContext: &corev1.SecurityContext{
				AllowPrivilegeEscalation: ptr.To(false),
				Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			}}},
		}
	}
	if v := Violations(&metav1.ObjectMeta{}, ptr.To(restricted())); len(v) != 0 {
		t.Fatalf("a restricted Pod was refused: %v", v)
	}
	netRaw := restricted()
	netRaw.Containers[0].SecurityContext.Capabilities.Add = []corev1.Capability{"NET_RAW"}
	v := Violations(&metav1.ObjectMeta{}, &netRaw)
	if len(v) != 2 || !strings.Contains(v[0], "baseline") || !strings.Contains(v[1], `"NET_RAW"`) {
		t.Fatalf("NET_RAW must fail baseline and restricted, got %v", v)
	}
}
