package v1alpha1

// Progress condition types of the kstatus conventions
// (sigs.k8s.io/cli-utils/pkg/kstatus), set on every kind a controller
// reconciles so that GitOps tools (Flux health checks, `kubectl wait`,
// Argo CD with the health check in docs/gitops.md) tell an object that is
// still being worked on from one that needs a person. Both have
// abnormal-true polarity: they are present only while True and removed
// otherwise, so a healthy object carries neither.
//
// Together with status.observedGeneration (-1 until a controller first
// writes status, see ObservedGenerationUnset) they give kstatus its three
// answers: InProgress while observedGeneration lags metadata.generation or
// Reconciling is True, Failed while Stalled is True, Current once Ready is
// True and neither is set.
const (
	// ConditionReconciling is True while the controller works towards the
	// spec and expects to get there on its own: agents of a region have
	// not connected yet, or a reconcile failed and is retried. Its reason
	// and message are those of the condition that is not yet True.
	ConditionReconciling = "Reconciling"
	// ConditionStalled is True when the controller cannot make progress
	// until someone changes the object or its surroundings: a Secret or a
	// referenced object is missing, no probe region exists, the status page
	// slug is taken, or the probe Deployment is refused. Its reason is one
	// of the terminal reasons (ReasonSecretNotFound, ReasonNoRegions,
	// ReasonSlugTaken, ReasonReferenceNotFound,
	// ReasonProbeDeploymentRejected) and its message says what to fix.
	ConditionStalled = "Stalled"
)

// ObservedGenerationUnset is status.observedGeneration of an object no
// controller has written status for yet: the CRDs default it (Flux's
// convention), so kstatus and Argo CD see an unobserved generation, and
// report InProgress, from the moment the object is created instead of
// Current before any controller looked at it.
const ObservedGenerationUnset = -1

// Probe Deployment reasons of a ProbeRegion's Ready condition, also the
// reasons of the Warning Events recorded when the Deployment cannot be
// applied.
const (
	// ReasonProbeDeploymentFailed means applying the region's probe
	// Deployment failed in a way a retry may fix (a conflict, a timeout);
	// the controller retries and the region is Reconciling.
	ReasonProbeDeploymentFailed = "ProbeDeploymentFailed"
	// ReasonProbeDeploymentRejected means the API server refused the probe
	// Deployment (forbidden by RBAC or an admission policy, or invalid);
	// retries cannot help, so the region is Stalled.
	ReasonProbeDeploymentRejected = "ProbeDeploymentRejected"
)
