package engine_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apikeys"
	"github.com/uptime-operator/uptime-operator/internal/credentials"
)

// recorder is a loopback target that records the credentials it receives.
type recorder struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string // Authorization and X-Db of every request, "" when absent
}

func newRecorder() *recorder {
	rc := &recorder{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc.mu.Lock()
		rc.seen = append(rc.seen, r.Header.Get("Authorization")+"|"+r.Header.Get("X-Db"))
		rc.mu.Unlock()
		_, _ = w.Write([]byte("ok"))
	}))
	DeferCleanup(rc.Close)
	return rc
}

func (rc *recorder) requests() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]string(nil), rc.seen...)
}

// rest calls the manager's REST API (its direct listener) with an API key.
func rest(method, path, key string, body any) (int, map[string]any) {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		Expect(err).NotTo(HaveOccurred())
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, apiURL+path, rd)
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Authorization", "Bearer "+key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// The two leaks of issue 27 (rows 1 and 2), end to end through the REST API
// of a running manager whose engine and agents really check: a Standard key
// has neither a Secret of the workspace nor a stored credential sent to a
// server of its own.
var _ = Describe("Trust boundaries of monitor credentials", func() {
	var standard string
	BeforeEach(func() {
		var err error
		standard, _, err = apikeys.Create(ctx, k8s, "default", "ci", apikeys.Standard)
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() int { code, _ := rest("GET", "/automation/whoami", standard, nil); return code }).Should(Equal(http.StatusOK))
	})

	It("does not send a Secret a Standard key names, nor a stored credential after the URL moved (REST)", func() {
		own := newRecorder()
		Expect(k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "app-db"},
			StringData: map[string]string{"password": "db-password-1"}})).To(Succeed())

		// Row 1: POST /monitors/test with a secret_ref, nothing saved.
		code, body := rest("POST", "/monitors/test", standard, map[string]any{"name": "Probe", "url": own.URL + "/test",
			"config": map[string]any{"headers": map[string]any{"X-Db": map[string]any{"secret_ref": map[string]any{"name": "app-db", "key": "password"}}}}})
		Expect(code).To(Equal(http.StatusBadRequest), "%v", body)
		Expect(body["code"]).To(Equal("VALIDATION_ERROR"))

		// Row 2: a stored Authorization, then only the URL changes.
		code, body = rest("POST", "/monitors", standard, map[string]any{"name": "Billing", "url": target.URL + "/billing",
			"regions": regions, "config": map[string]any{"headers": map[string]any{"Authorization": "Bearer prod-billing-token"}}})
		Expect(code).To(Equal(http.StatusCreated), "%v", body)
		id := body["id"].(string)
		code, body = rest("PUT", "/monitors/"+id, standard, map[string]any{"url": own.URL + "/collect"})
		Expect(code).To(Equal(http.StatusOK), "%v", body)
		Expect(body["warnings"]).To(ConsistOf(HavePrefix("config.headers.Authorization:")))
		code, body = rest("POST", "/monitors/"+id+"/run-check", standard, map[string]any{})
		Expect(code).To(Equal(http.StatusOK), "%v", body)

		Eventually(own.requests).ShouldNot(BeEmpty(), "the check reached the new target")
		for _, r := range own.requests() {
			Expect(r).To(Equal("|"), "no credential reached the caller's server")
		}
		code, _ = rest("DELETE", "/monitors/"+id, standard, nil)
		Expect(code).To(Equal(http.StatusNoContent))
	})

	It("refuses, when it resolves, a Secret the monitor may not read, and says why in Configured (row 1)", func() {
		own := newRecorder()
		// Admission refuses a reference to an existing Secret that does
		// not opt in.
		Expect(k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "db-now"},
			StringData: map[string]string{"password": "db-password-2"}})).To(Succeed())
		refTo := func(name, secret string) *monv1.Monitor {
			return &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
				Spec: monv1.MonitorSpec{URL: own.URL + "/" + name, IntervalSeconds: 15, Regions: regions,
					HTTP: &monv1.HTTPConfig{TimeoutMs: 2000, Headers: []monv1.HTTPHeader{{Name: "X-Db",
						ValueFrom: &monv1.SecretKeySelector{Name: secret, Key: "password"}}}}}}
		}
		err := k8s.Create(ctx, refTo("refused", "db-now"))
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("spec.http.headers[0].valueFrom.name"))
		Expect(err.Error()).To(ContainSubstring("does not opt in"))

		// A Secret made after the Monitor is refused where it is resolved.
		m := refTo("late-secret", "db-later")
		Expect(k8s.Create(ctx, m)).To(Succeed())
		Expect(k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "db-later"},
			StringData: map[string]string{"password": "db-password-3"}})).To(Succeed())
		_, err = env.Manager.Engine.RunCheck(ctx, get(m), "", false)
		var na *credentials.NotAllowedError
		Expect(errors.As(err, &na)).To(BeTrue(), "RunCheck: %v", err)
		list, err := env.Manager.Probes.AssignmentList(ctx, "r1")
		Expect(err).NotTo(HaveOccurred())
		for _, a := range list.Assignments {
			Expect(a.ID).NotTo(Equal(string(m.UID)), "not assigned")
		}
		Eventually(func(g Gomega) {
			cur := get(m)
			if cur.Labels["touch"] == "" { // a label change makes the controller look again
				cur.Labels = map[string]string{"touch": "1"}
				g.Expect(k8s.Update(ctx, cur)).To(Succeed())
			}
			c := meta.FindStatusCondition(get(m).Status.Conditions, monv1.MonitorConditionConfigured)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Reason).To(Equal(monv1.ReasonSecretNotAllowed))
		}).Should(Succeed())
		for _, r := range own.requests() {
			Expect(r).NotTo(ContainSubstring("db-password"))
		}
		Expect(client.IgnoreNotFound(k8s.Delete(ctx, m))).To(Succeed())
	})
})
