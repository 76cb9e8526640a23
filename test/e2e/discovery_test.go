//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/discovery"
)

// discoveryScenario (issue 39, docs/discovery.md): the e2e target's
// Service opts in with a label a MonitorTemplate selects; a Monitor
// appears, is checked up from both regions' probe Pods, and goes when the
// label does. The cluster runs no ingress controller, so the Service (the
// kind discovery reads without one) stands for the app; the Ingress and
// HTTPRoute paths run on envtest (controllers/monitortemplate_controller_test.go).
func discoveryScenario() {
	It("makes a Monitor of a Service that opts in, checks it from both regions, deletes it when the opt-in goes", func() {
		const label = "e2e-discovery"
		apply(fmt.Sprintf(`apiVersion: monitoring.uptime-operator.io/v1alpha1
kind: MonitorTemplate
metadata: {name: e2e-discovery, namespace: %[1]s}
spec:
  selector: {matchLabels: {%[2]s: "true"}}
  kinds: [Service]
  monitor:
    intervalSeconds: %[3]d
    regions: [e2e-a, e2e-b]
`, workNS, label, checkInterval))
		DeferCleanup(func() {
			_, _ = kubectl("-n", workNS, "label", "service", "e2e-target", label+"-")
			_, _ = kubectl("-n", workNS, "delete", "monitortemplate", "e2e-discovery", "--ignore-not-found")
		})
		host := "e2e-target." + workNS + ".svc"
		name := discovery.Name(monv1.KindService, "e2e-target", discovery.Endpoint{Host: host, Path: "/"})
		mustKubectl("-n", workNS, "label", "service", "e2e-target", label+"=true")
		expectNamedMonitorUp(name)
		m, err := getMonitor(workNS, name)
		Expect(err).NotTo(HaveOccurred())
		Expect(m.Spec.URL).To(Equal("http://" + host + ":8080/"))
		Expect(m.Labels).To(HaveKeyWithValue(monv1.DiscoveredFromLabel, "e2e-discovery"))
		proved("a labelled Service became Monitor %s (%s), up from both regions; `kubectl get mtpl`:\n%s",
			name, m.Spec.URL, mustKubectl("-n", workNS, "get", "monitortemplates"))

		mustKubectl("-n", workNS, "label", "service", "e2e-target", label+"-")
		Eventually(func() string {
			out, _ := kubectl("-n", workNS, "get", "monitor", name, "--ignore-not-found", "-o", "name")
			return strings.TrimSpace(out)
		}, 2*time.Minute, 2*time.Second).Should(BeEmpty(), "the Monitor goes with the opt-in")
		proved("the Service's label removed: Monitor %s deleted", name)
	})
}
