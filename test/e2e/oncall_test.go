//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/uptime-operator/uptime-operator/internal/kubectlplugin"
)

// oncallValues installs two managed regions (the Monitor needs both to
// confirm an incident) and the aggregated API, with the chart's default
// RBAC: the aggregate-to-view and -edit ClusterRoles that extend
// Kubernetes' built-in view and edit roles.
const oncallValues = `
allowPrivateTargets: true
aggregatedAPI: {enabled: true}
regions:
- name: e2e-a
  displayName: Region A
  placement: {mode: managed, replicas: 1}
- name: e2e-b
  displayName: Region B
  placement: {mode: managed, replicas: 1}
`

// The users on call: one bound only to the built-in view role cluster-wide
// (so `kubectl get incidents -A` works), one only to the built-in edit role
// in the workspace. Neither holds an access level of the REST API.
const (
	oncallViewer = "e2e-oncall-viewer"
	oncallEditor = "e2e-oncall-editor"
)

var _ = Describe("on call from kubectl with only Kubernetes' view or edit role", Ordered, func() {
	var (
		targetIP   string
		incidentID string
	)

	BeforeAll(func() {
		dir := GinkgoT().TempDir()
		values := filepath.Join(dir, "values.yaml")
		Expect(os.WriteFile(values, []byte(oncallValues), 0o644)).To(Succeed())
		resetCluster()
		// The receiver Pod that deployTargetAndReceiver runs beside the
		// target serves TLS from the test CA.
		installTestCA()
		_, _ = kubectl("delete", "clusterrolebinding", oncallViewer, "--ignore-not-found")
		mustHelm("install", release, chartPackage(), "-n", ns, "--create-namespace", "-f", values, "--wait", "--timeout", "5m")
		Eventually(func() string {
			out, _ := kubectl("get", "apiservice", "v1.api.uptime-operator.io",
				"-o", `jsonpath={.status.conditions[?(@.type=="Available")].status}`)
			return out
		}, 2*time.Minute, 2*time.Second).Should(Equal("True"))
		targetIP, _ = deployTargetAndReceiver()
		apply(fmt.Sprintf(`apiVersion: monitoring.uptime-operator.io/v1alpha1
kind: Monitor
metadata: {name: %s, namespace: default}
spec:
  name: E2E target
  type: http
  url: http://e2e-target.default.svc.cluster.local:8080/
  intervalSeconds: %d
  regions: [e2e-a, e2e-b]
  confirmation: {regions: 2}
  http: {timeoutMs: 3000}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: %[3]s, labels: {e2e: uptime}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: %[3]s}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: %[4]s, namespace: default, labels: {e2e: uptime}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: edit}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: %[4]s}]
`, monName, checkInterval, oncallViewer, oncallEditor))
		waitRegionsOnline()
		expectMonitorUp()
		// A real outage: the target answers 503 until the suite recovers it.
		setTarget(targetIP, "fail")
		incidentID = expectIncidentOpen()
		// kube-controller-manager aggregates the chart's rules into view
		// and edit.
		Eventually(func() string {
			out, _ := kubectl("auth", "can-i", "create", "uptimechecks.api.uptime-operator.io", "-n", workNS, "--as", oncallEditor)
			return strings.TrimSpace(out)
		}, time.Minute, 2*time.Second).Should(Equal("yes"))
	})

	AfterAll(func() {
		if targetIP != "" {
			_, _, _ = httpDo("POST", "http://"+targetIP+":8080/recover", nil)
		}
		_, _ = kubectl("delete", "clusterrolebinding", oncallViewer, "--ignore-not-found")
	})

	// uptime runs `kubectl uptime` (the plugin's code, in this process) as
	// the cluster admin impersonating user, as kubectl --as does.
	uptime := func(user string, args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		var out bytes.Buffer
		err := kubectlplugin.Main(ctx, append(args, "-n", workNS, "--as", user), &out, &out)
		return out.String(), err
	}
	mustUptime := func(user string, args ...string) string {
		GinkgoHelper()
		out, err := uptime(user, args...)
		Expect(err).NotTo(HaveOccurred(), "kubectl uptime %s --as %s:\n%s", strings.Join(args, " "), user, out)
		return out
	}

	It("lists the resources in discovery and reads incidents and monitors with kubectl as the view role", func() {
		out := mustKubectl("api-resources", "--api-group=api.uptime-operator.io")
		for _, res := range []string{"uptimeincidents", "uptimemonitors", "uptimechecks", "uptimeregions"} {
			Expect(out).To(ContainSubstring(res))
		}
		out = mustKubectl("get", "incidents", "-A", "--as", oncallViewer)
		Expect(out).To(ContainSubstring("NAMESPACE"))
		Expect(out).To(MatchRegexp(`(?m)^default\s+%s\s+E2E target\s+open`, incidentID))
		proved("`kubectl get incidents -A --as %s` (built-in view role, ClusterRoleBinding):\n%s", oncallViewer, out)
		out = mustKubectl("-n", workNS, "get", "uptimemonitors", "--as", oncallViewer)
		Expect(out).To(MatchRegexp(`E2E target\s+http\s+down\s+0/2`))
		Expect(out).To(ContainSubstring(incidentID))
		proved("`kubectl get uptimemonitors --as %s`:\n%s", oncallViewer, out)
		out = mustKubectl("-n", workNS, "get", "uptimeregions", "--as", oncallEditor)
		Expect(out).To(MatchRegexp(`(?m)^e2e-a\s+Region A\s+true`))
		// The REST API stays behind its access levels.
		_, err := rawAPI("/namespaces/default/monitors", oncallViewer)
		Expect(err).To(HaveOccurred())
		_, err = rawAPI("/namespaces/default/monitors", oncallEditor)
		Expect(err).To(HaveOccurred())
		proved("the view and edit roles reach the aggregated API's resources but no REST path (403 on /monitors)")
	})

	It("runs kubectl uptime status, incidents and why as the view role and as the edit role", func() {
		for _, user := range []string{oncallViewer, oncallEditor} {
			out := mustUptime(user, "status")
			Expect(out).To(ContainSubstring("Workspace default: 1 monitors (0 up, 1 down, 0 degraded), 1 open incidents"))
			Expect(out).To(ContainSubstring("Regions offline: none"))
			Expect(out).To(ContainSubstring(incidentID))
			Expect(out).To(MatchRegexp(`E2E target\s+down\s+0/2`))
			if user == oncallViewer {
				proved("`kubectl uptime status --as %s`:\n%s", user, out)
			}
			out = mustUptime(user, "incidents")
			Expect(out).To(ContainSubstring("CONFIRMED BY"))
			Expect(out).To(MatchRegexp(`%s\s+E2E target\s+open`, incidentID))
			out = mustUptime(user, "why", "E2E target")
			Expect(out).To(ContainSubstring("E2E target: incident_open"))
			Expect(out).To(ContainSubstring("Incident: " + incidentID))
			Expect(out).To(MatchRegexp(`(?m)^e2e-a\s+fail\s+down`))
			Expect(out).To(MatchRegexp(`(?m)^e2e-b\s+fail\s+down`))
			if user == oncallViewer {
				proved("`kubectl uptime why 'E2E target' --as %s`:\n%s", user, out)
			}
		}
	})

	It("runs a check now and acknowledges as the edit role; refuses both to the view role", func() {
		out, err := uptime(oncallViewer, "check", "E2E target")
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("the edit role"))
		Expect(err.Error()).To(ContainSubstring("forbidden"))
		proved("`kubectl uptime check` as the view role refused: %v", err)

		out, err = uptime(oncallEditor, "check", "E2E target")
		// The target fails on purpose: every region reports it down.
		Expect(err).To(MatchError(ContainSubstring("2 of 2 region(s) did not report up")), out)
		Expect(out).To(MatchRegexp(`(?m)^e2e-a\s+down\s+503`))
		Expect(out).To(MatchRegexp(`(?m)^e2e-b\s+down\s+503`))
		proved("`kubectl uptime check 'E2E target' --as %s` (built-in edit role, RoleBinding):\n%s", oncallEditor, out)

		_, err = uptime(oncallViewer, "ack", incidentID)
		Expect(err).To(MatchError(ContainSubstring("forbidden")))
		out = mustUptime(oncallEditor, "ack", incidentID)
		Expect(out).To(ContainSubstring("acknowledged by " + oncallEditor))
		Expect(mustKubectl("-n", workNS, "get", "incident", incidentID, "--as", oncallViewer)).To(ContainSubstring(oncallEditor))
		proved("`kubectl uptime ack` refused to the view role (%v); as the edit role: %s", err, strings.TrimSpace(out))
	})
})
