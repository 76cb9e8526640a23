package webhooks_test

import (
	"context"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/manager"
	"github.com/uptime-operator/uptime-operator/internal/testenv"
)

var (
	env *testenv.Env
	k8s client.Client
	ctx = context.Background()
)

func TestWebhooks(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Admission webhooks (envtest)")
}

var _ = BeforeSuite(func() {
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	var err error
	// Private targets are refused here, as in a production install.
	env, err = testenv.Start(manager.Options{DefaultPlan: "free"})
	Expect(err).NotTo(HaveOccurred())
	k8s = env.Client

	for _, code := range []string{"eu-1", "us-1", "us-2"} {
		r := &monv1.ProbeRegion{ObjectMeta: metav1.ObjectMeta{Name: code}}
		Expect(k8s.Create(ctx, r)).To(Succeed())
	}
	// "free" is the default plan: few monitors, a long minimum interval, two
	// regions, no status pages or webhooks.
	Expect(k8s.Create(ctx, &monv1.Plan{
		ObjectMeta: metav1.ObjectMeta{Name: "free"},
		Spec: monv1.PlanSpec{
			Limits:  monv1.PlanLimits{Monitors: 2, MinIntervalSeconds: 300, ProbeLocations: 2, StatusPages: 1},
			Regions: []string{"eu-1", "us-1"},
		},
	})).To(Succeed())
	// "pro" grants everything but white-label.
	Expect(k8s.Create(ctx, &monv1.Plan{
		ObjectMeta: metav1.ObjectMeta{Name: "pro"},
		Spec: monv1.PlanSpec{
			Limits: monv1.PlanLimits{StatusPages: 2},
			Features: []monv1.Feature{monv1.FeatureStatusPages, monv1.FeatureWebhooks, monv1.FeatureSLO,
				monv1.FeatureSMS},
		},
	})).To(Succeed())
	for ns, plan := range map[string]string{"team": "pro", "free-ws": "", "limits": "pro"} {
		n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
		if plan != "" {
			n.Labels = map[string]string{monv1.PlanLabel: plan}
		}
		Expect(k8s.Create(ctx, n)).To(Succeed())
	}
})

var _ = AfterSuite(func() {
	if env != nil {
		env.Stop()
	}
})
