package controllers

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/conditions"
	"github.com/uptime-operator/uptime-operator/internal/metrics"
	"github.com/uptime-operator/uptime-operator/internal/monitor"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/trust"
)

// AgentTracker reports what the agents of a region told any manager
// replica: how many were in contact within window, their latest contact
// and the results they still held (store.AgentPresence), and the results
// they delivered late (store.RegionReplays).
type AgentTracker interface {
	RegionAgents(region string, window time.Duration) (store.AgentPresence, store.RegionReplays)
}

// ProbeDeploymentOptions describe the probe Deployments the manager owns.
type ProbeDeploymentOptions struct {
	// Namespace of the Deployments (the manager's namespace).
	Namespace string
	// Image is the uptime-operator image (the manager's own).
	Image string
	// ServerURL is the manager's probe API URL as seen from probe pods.
	ServerURL string
	// ServerCA, when set, is the CA bundle the agents verify the probe API's
	// serving certificate against (--server-ca-file); see
	// mountProbeCredentials.
	ServerCA *trust.BundleRef
	// AllowPrivate passes the cluster's private-targets setting to agents.
	AllowPrivate bool
	// MetricsSecure serves the agents' /metrics as the manager's
	// --metrics-secure serves its own: on port 8443 over TLS, to callers
	// kube-apiserver authenticates and authorizes for get on /metrics (see
	// mountKubeAPIToken). Without it they are plain HTTP on 8081.
	MetricsSecure bool
	// TrustedCA, when set, is mounted into probe pods and passed to the
	// agents as --trusted-ca-file, so they trust private CAs too.
	TrustedCA *trust.BundleRef
	// ImagePullSecrets of every probe Pod (the manager's own, so a private
	// registry that serves the manager serves its agents too); a region's
	// placement.imagePullSecrets are added.
	ImagePullSecrets []corev1.LocalObjectReference
}

// trustedCADir is where probe pods mount the trusted CA bundle.
const trustedCADir = "/etc/uptime-operator/trusted-ca"

// mountTrustedCA adds the bundle's volume to ps and its mount and flag to c.
func mountTrustedCA(b *trust.BundleRef, ps *corev1.PodSpec, c *corev1.Container) {
	mountBundle("trusted-ca", trustedCADir, "--trusted-ca-file", b, ps, c)
}

// mountBundle mounts the key of bundle b (default ca.crt), and only that
// key, as dir/ca.crt through a volume called name, and passes the file to
// the agent with flag.
func mountBundle(name, dir, flag string, b *trust.BundleRef, ps *corev1.PodSpec, c *corev1.Container) {
	vol := corev1.Volume{Name: name}
	items := []corev1.KeyToPath{{Key: cmp.Or(b.Key, "ca.crt"), Path: "ca.crt"}}
	if b.Secret != "" {
		vol.Secret = &corev1.SecretVolumeSource{SecretName: b.Secret, Items: items}
	} else {
		vol.ConfigMap = &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: b.ConfigMap}, Items: items}
	}
	ps.Volumes = append(ps.Volumes, vol)
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: vol.Name, MountPath: dir, ReadOnly: true})
	c.Args = append(c.Args, flag, dir+"/ca.crt")
}

// ProbeRegionReconciler runs one probe Deployment per managed region that a
// monitor uses, scales unused regions to zero, and reports agent contact.
type ProbeRegionReconciler struct {
	client.Client
	Agents AgentTracker
	Probe  ProbeDeploymentOptions
	// OnlineWindow is how recent a contact must be to count as online.
	OnlineWindow time.Duration
	// Recorder records a Warning Event when the probe Deployment cannot be
	// applied; nil records none.
	Recorder record.EventRecorder
}

// +kubebuilder:rbac:groups=monitoring.uptime-operator.io,resources=proberegions,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=monitoring.uptime-operator.io,resources=proberegions/status,verbs=get;update;patch
// Probe Deployments, their PodDisruptionBudget and ServiceAccount live in the probe namespace
// (the manager's own, --namespace) only: a namespaced Role, which
// kustomize and the chart place there ("system" is kustomize's placeholder),
// and the manager's cache watches them there only (manager.New).
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;patch;delete,namespace=system
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch;create;update;patch;delete,namespace=system
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=get;list;watch;create,namespace=system
// The product's own Secrets live in the same namespace (region tokens, the
// shared signing key, the serving certificates the manager rotates): a
// grant there that does not depend on the cluster-wide one, which the
// chart's secrets.namespaces replaces by Roles in the served namespaces.
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;update;patch;delete,namespace=system
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create

// Reconcile brings one region's Deployment and status up to date.
func (r *ProbeRegionReconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, retErr error) {
	var pr monv1.ProbeRegion
	if err := r.Get(ctx, req.NamespacedName, &pr); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := pr.DeepCopy()
	defer func() {
		setProgressConditions(&pr.Status.Conditions, pr.Generation, monv1.ConditionReady)
		patchStatus(ctx, r.Client, &pr, before, !equality.Semantic.DeepEqual(before.Status, pr.Status), &retErr)
	}()
	if !pr.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	code := monitor.RegionCode(&pr)
	inUse, err := r.monitorsUsing(ctx, code)
	if err != nil {
		return ctrl.Result{}, err
	}
	pr.Status.Monitors = int32(inUse)
	metrics.RegionMonitors.WithLabelValues(code).Set(float64(inUse))
	if pr.Spec.Placement.Mode == monv1.PlacementManaged || pr.Spec.Placement.Mode == "" {
		if err := r.reconcileDeployment(ctx, &pr, inUse > 0); err != nil {
			reason := probeDeploymentReason(err)
			conditions.Set(&pr.Status.Conditions, pr.Generation, monv1.ConditionReady, false, reason, err.Error())
			pr.Status.ObservedGeneration = pr.Generation
			if r.Recorder != nil {
				r.Recorder.Event(&pr, corev1.EventTypeWarning, reason, err.Error())
			}
			return ctrl.Result{}, err
		}
		if err := r.reconcileProbePods(ctx, &pr); err != nil {
			return ctrl.Result{}, err
		}
	}
	window := r.OnlineWindow
	if window == 0 {
		window = 90 * time.Second
	}
	if r.Agents != nil {
		agents, replays := r.Agents.RegionAgents(code, window)
		setAgentStatus(&pr.Status, agents, replays)
		metrics.RegionAgents.WithLabelValues(code).Set(float64(agents.Agents))
		online := 0.0
		if agents.Agents > 0 {
			online = 1
		}
		metrics.RegionOnline.WithLabelValues(code).Set(online)
	}
	ready, reason, msg := RegionReadiness(&pr, inUse)
	conditions.Set(&pr.Status.Conditions, pr.Generation, monv1.ConditionReady, ready, reason, msg)
	pr.Status.ObservedGeneration = pr.Generation
	// Agent contact is not an API event: look again periodically.
	return ctrl.Result{RequeueAfter: 30 * time.Second}, nil
}

// setAgentStatus writes what the region's agents told the managers into
// its status. Times are kept to the second: status is patched only when it
// changed, and a contact every few seconds would otherwise change it at
// every reconcile.
func setAgentStatus(st *monv1.ProbeRegionStatus, agents store.AgentPresence, replays store.RegionReplays) {
	st.OnlineAgents, st.Online = int32(agents.Agents), agents.Agents > 0
	if !agents.Last.IsZero() {
		t := metav1.NewTime(agents.Last.Truncate(time.Second))
		st.LastContact = &t
	}
	st.BufferedResults = int64(agents.Backlog)
	if agents.Agents == 0 {
		st.BufferedResults = 0
	}
	st.ReplayedResults = replays.Results
	if !replays.Last.IsZero() {
		t := metav1.NewTime(replays.Last.Truncate(time.Second))
		st.LastReplay = &t
	}
}

// RegionReadiness says whether a region is serving its monitors.
func RegionReadiness(pr *monv1.ProbeRegion, inUse int) (bool, string, string) {
	switch {
	case inUse == 0:
		return true, "Idle", "no monitor uses this region"
	case pr.Status.Online:
		return true, "AgentsOnline", fmt.Sprintf("%d agent(s) online", pr.Status.OnlineAgents)
	case pr.Spec.Placement.Mode == monv1.PlacementRemote:
		return false, "AwaitingAgents", "no remote agent has connected with the region token yet"
	}
	if c := meta.FindStatusCondition(pr.Status.Conditions, monv1.ProbeRegionConditionProbePods); c != nil && c.Status == metav1.ConditionFalse {
		return false, c.Reason, c.Message
	}
	return false, "AwaitingAgents", "no agent has contacted the manager recently"
}

// monitorsUsing counts the active monitors of region code. It only reads,
// so it scans the cache's own objects: a copy of every Monitor per count was
// most of the manager's garbage at 100,000 Monitors.
func (r *ProbeRegionReconciler) monitorsUsing(ctx context.Context, code string) (int, error) {
	var list monv1.MonitorList
	if err := r.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		return 0, fmt.Errorf("list monitors: %w", err)
	}
	n := 0
	for i := range list.Items {
		if m := &list.Items[i]; !m.Spec.Paused && slices.Contains(monitor.Regions(m), code) {
			n++
		}
	}
	return n, nil
}

// probeDeploymentName is the Deployment of a region.
func probeDeploymentName(code string) string { return "uptime-operator-probe-" + code }

func (r *ProbeRegionReconciler) reconcileDeployment(ctx context.Context, pr *monv1.ProbeRegion, inUse bool) error {
	if r.Probe.Namespace == "" || r.Probe.Image == "" {
		return nil // not running in a cluster (dev mode): no Deployments
	}
	if err := r.ensureServiceAccount(ctx, pr); err != nil {
		return err
	}
	code := monitor.RegionCode(pr)
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: probeDeploymentName(code), Namespace: r.Probe.Namespace}}
	_, err := controllerutil.CreateOrPatch(ctx, r.Client, dep, func() error {
		replicas := max(pr.Spec.Placement.Replicas, 1)
		if !inUse {
			replicas = 0
		}
		labels := map[string]string{"app.kubernetes.io/name": "uptime-operator-probe", "uptime-operator.io/region": code}
		dep.Labels = labels
		dep.Spec.Replicas = ptr.To(replicas)
		dep.Spec.Selector = &metav1.LabelSelector{MatchLabels: labels}
		dep.Spec.Template.Labels = labels
		ps := &dep.Spec.Template.Spec
		args := []string{"probe", "--region", code, "--server", r.Probe.ServerURL, "--listen", ":8081"}
		if r.Probe.AllowPrivate {
			args = append(args, "--allow-private")
		}
		ports := []corev1.ContainerPort{{Name: "metrics", ContainerPort: 8081}}
		if r.Probe.MetricsSecure {
			args = append(args, "--metrics-listen", ":8443")
			ports = []corev1.ContainerPort{{Name: "health", ContainerPort: 8081}, {Name: "metrics", ContainerPort: 8443}}
		}
		c := corev1.Container{
			Name:          "probe",
			Image:         r.Probe.Image,
			Args:          args,
			Ports:         ports,
			LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8081)}}},
		}
		applyProbePodSecurity(pr, ps, &c)
		applyProbePlacement(pr, r.Probe, labels, ps, &c)
		// The root filesystem is read-only, but the binary needs a writable
		// /tmp: a package it links creates a directory there at start-up
		// (the agent crash-looped on a real cluster without it).
		c.VolumeMounts = []corev1.VolumeMount{{Name: "tmp", MountPath: "/tmp"}}
		ps.Volumes = []corev1.Volume{{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
		if r.Probe.TrustedCA != nil {
			mountTrustedCA(r.Probe.TrustedCA, ps, &c)
		}
		mountProbeCredentials(code, r.Probe.ServerCA, ps, &c)
		if r.Probe.MetricsSecure {
			mountKubeAPIToken(ps, &c)
		}
		ps.Containers = []corev1.Container{c}
		return controllerutil.SetControllerReference(pr, dep, r.Scheme())
	})
	if err != nil {
		return fmt.Errorf("apply probe deployment: %w", err)
	}
	return nil
}

// ensureServiceAccount creates the region's own ServiceAccount
// (monitor.RegionServiceAccount), owned by the region. The probe API
// accepts a token of it for this region and no other.
func (r *ProbeRegionReconciler) ensureServiceAccount(ctx context.Context, pr *monv1.ProbeRegion) error {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{
		Name: monitor.RegionServiceAccount(monitor.RegionCode(pr)), Namespace: r.Probe.Namespace,
		Labels: map[string]string{"app.kubernetes.io/name": "uptime-operator-probe", "uptime-operator.io/region": monitor.RegionCode(pr)},
	}}
	if err := controllerutil.SetControllerReference(pr, sa, r.Scheme()); err != nil {
		return fmt.Errorf("own probe service account: %w", err)
	}
	if err := r.Create(ctx, sa); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create probe service account: %w", err)
	}
	return nil
}

// Where a probe pod finds its credentials.
const (
	probeTokenDir  = "/var/run/secrets/uptime-operator.io/probe"
	serverCADir    = "/etc/uptime-operator/probe-server-ca"
	probeTokenLife = 3600
)

// mountProbeCredentials gives a region's probe pods what they talk to the
// probe API with: the region's own ServiceAccount, whose token is
// projected for the probe audience only (monitor.ProbeTokenAudience) and
// rotated by the kubelet, and no automounted token for kube-apiserver
// (agents call it only to review the scrapes of their metrics, with the
// token of mountKubeAPIToken); and, when ca is set, the CA bundle they verify the probe API's
// serving certificate against. Only the bundle's key is mounted: the
// serving certificate's Secret also holds its private key.
func mountProbeCredentials(code string, ca *trust.BundleRef, ps *corev1.PodSpec, c *corev1.Container) {
	ps.ServiceAccountName = monitor.RegionServiceAccount(code)
	// The deprecated alias would otherwise keep the shared ServiceAccount
	// of Deployments made before per-region ones.
	ps.DeprecatedServiceAccount = ps.ServiceAccountName
	ps.AutomountServiceAccountToken = ptr.To(false)
	ps.Volumes = append(ps.Volumes, corev1.Volume{Name: "probe-token", VolumeSource: corev1.VolumeSource{
		Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{{
			ServiceAccountToken: &corev1.ServiceAccountTokenProjection{
				Audience: monitor.ProbeTokenAudience, ExpirationSeconds: ptr.To[int64](probeTokenLife), Path: "token",
			},
		}}},
	}})
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "probe-token", MountPath: probeTokenDir, ReadOnly: true})
	c.Args = append(c.Args, "--token-file", probeTokenDir+"/token")
	if ca != nil {
		mountBundle("probe-server-ca", serverCADir, "--server-ca-file", ca, ps, c)
	}
}

// mountKubeAPIToken gives a probe pod what its secure metrics endpoint
// reviews scrapes with: a kube-apiserver token of the region's
// ServiceAccount and the cluster's CA, where in-cluster configuration
// looks for them. The ServiceAccount may only create TokenReviews and
// SubjectAccessReviews (system:auth-delegator, bound by the chart to the
// ServiceAccounts of the manager's namespace); the token is not mounted
// otherwise (AutomountServiceAccountToken stays false).
func mountKubeAPIToken(ps *corev1.PodSpec, c *corev1.Container) {
	ps.Volumes = append(ps.Volumes, corev1.Volume{Name: "kube-api-token", VolumeSource: corev1.VolumeSource{
		Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: ptr.To[int64](probeTokenLife), Path: "token"}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
				Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
		}},
	}})
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "kube-api-token", MountPath: kubeAPITokenDir, ReadOnly: true})
}

// kubeAPITokenDir is where in-cluster configuration (rest.InClusterConfig)
// reads the token and CA.
const kubeAPITokenDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// SetupWithManager watches regions, their Deployments, and monitors (whose
// region use decides whether a Deployment runs).
func (r *ProbeRegionReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorderFor(EventSource)
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&monv1.ProbeRegion{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Owns(&appsv1.Deployment{}).
		Owns(&policyv1.PodDisruptionBudget{}).
		Watches(&monv1.Monitor{}, handler.EnqueueRequestsFromMapFunc(r.regionsOf),
			builder.WithPredicates(regionUseChanged{})).
		Named("proberegion").
		Complete(r)
}

// regionUseChanged passes the Monitor events that can change a region's
// monitor count: creates, deletes, and updates that pause, resume, delete
// or move a monitor. Status writes of live state do not, and each one used
// to count every Monitor again.
type regionUseChanged struct {
	predicate.Funcs
}

func (regionUseChanged) Update(e event.UpdateEvent) bool {
	was, ok1 := e.ObjectOld.(*monv1.Monitor)
	now, ok2 := e.ObjectNew.(*monv1.Monitor)
	if !ok1 || !ok2 {
		return true
	}
	return was.Spec.Paused != now.Spec.Paused || was.DeletionTimestamp.IsZero() != now.DeletionTimestamp.IsZero() ||
		!slices.Equal(monitor.Regions(was), monitor.Regions(now))
}

// regionsOf maps a monitor to the regions it uses.
func (r *ProbeRegionReconciler) regionsOf(ctx context.Context, o client.Object) []reconcile.Request {
	m, ok := o.(*monv1.Monitor)
	if !ok {
		return nil
	}
	var list monv1.ProbeRegionList
	if err := r.List(ctx, &list); err != nil {
		return nil
	}
	var out []reconcile.Request
	for _, pr := range list.Items {
		if slices.Contains(monitor.Regions(m), monitor.RegionCode(&pr)) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKey{Name: pr.Name}})
		}
	}
	return out
}
