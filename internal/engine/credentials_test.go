package engine_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

var _ = Describe("Credentials by reference", func() {
	It("gives agents the Secret's value in the assignment, never the spec", func() {
		var mu sync.Mutex
		var seen []string
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			seen = append(seen, r.Header.Get("Authorization"))
			mu.Unlock()
		}))
		DeferCleanup(srv.Close)
		Expect(k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "api-basic-auth",
			Labels: map[string]string{monv1.CredentialsLabel: monv1.CredentialsLabelValue}},
			Data: map[string][]byte{"header": []byte("Basic dXNlcjpwYXNz")}})).To(Succeed())
		m := newMonitor("by-reference", func(m *monv1.Monitor) {
			m.Spec.URL = srv.URL + "/private"
			m.Spec.HTTP.Headers = []monv1.HTTPHeader{{Name: "Authorization",
				ValueFrom: &monv1.SecretKeySelector{Name: "api-basic-auth", Key: "header"}}}
		})
		raw, err := json.Marshal(get(m))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(raw)).NotTo(ContainSubstring("dXNlcjpwYXNz"), "the Monitor holds a reference only")

		Eventually(func(g Gomega) {
			list, err := env.Manager.Probes.AssignmentList(ctx, "r1")
			g.Expect(err).NotTo(HaveOccurred())
			var found bool
			for _, a := range list.Assignments {
				if a.ID == string(m.UID) {
					found = true
					g.Expect(probeapi.HeaderText(a.Config.HTTP.Headers)).To(HaveKeyWithValue("Authorization", "Basic dXNlcjpwYXNz"))
				}
			}
			g.Expect(found).To(BeTrue())
		}).Should(Succeed())
		// The real agents send it.
		Eventually(func() []string {
			mu.Lock()
			defer mu.Unlock()
			return append([]string(nil), seen...)
		}, "20s").Should(ContainElement("Basic dXNlcjpwYXNz"))
	})
})
