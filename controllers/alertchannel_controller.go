package controllers

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/conditions"
	"github.com/uptime-operator/uptime-operator/internal/credentials"
	"github.com/uptime-operator/uptime-operator/internal/ssa"
)

// secretRetryInterval is how soon a channel whose Secret is missing is
// checked again: Secrets are not watched (the manager caches only API keys).
const secretRetryInterval = 30 * time.Second

// AlertChannelReconciler keeps AlertChannel status current: the connection
// id, the webhook signing secret (generated when the spec names none), and
// the Ready condition, applied by server-side apply as
// monv1.AlertChannelControllerFieldOwner. Delivery status and the Failing
// condition are the delivery worker's (package alerting), applied as a field
// manager of its own, so neither writer overwrites the other's fields.
type AlertChannelReconciler struct {
	client.Client
	// Secrets reads Secrets directly: the manager caches only API keys. It
	// also reads each channel once per process with its managedFields,
	// which the cache strips, to hand the legacy owner's status fields to
	// the two writers (channelAdoption).
	Secrets client.Reader

	// adopted holds the UIDs of the channels adopted by this process.
	adopted sync.Map
	// Recorder records a Warning Event when the channel stalls (a Secret
	// it reads is missing); nil records none.
	Recorder record.EventRecorder
}

// +kubebuilder:rbac:groups=monitoring.uptime-operator.io,resources=alertchannels,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=monitoring.uptime-operator.io,resources=alertchannels/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;update;patch;delete

// Reconcile brings one AlertChannel's status up to date.
func (r *AlertChannelReconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, retErr error) {
	log := ctrl.LoggerFrom(ctx)
	var ch monv1.AlertChannel
	if err := r.Get(ctx, req.NamespacedName, &ch); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := ch.DeepCopy()
	defer func() {
		setProgressConditions(&ch.Status.Conditions, ch.Generation, monv1.ConditionReady)
		recordStalled(r.Recorder, &ch, before.Status.Conditions, ch.Status.Conditions)
		if _, done := r.adopted.Load(ch.UID); done && equality.Semantic.DeepEqual(before.Status, ch.Status) {
			return
		}
		if err := r.applyStatus(ctx, &ch); err != nil && !apierrors.IsNotFound(err) {
			if apierrors.IsConflict(err) {
				log.V(1).Info("alert channel changed while reconciling; retrying")
			} else {
				log.Error(err, "unable to apply alert channel status")
			}
			if retErr == nil {
				retErr = err
			}
		}
	}()

	if !ch.DeletionTimestamp.IsZero() {
		// The generated Secret is owned by the channel and garbage-collected.
		return ctrl.Result{}, nil
	}

	ch.Status.ConnectionID = string(ch.UID)
	ready, msg, err := r.reconcileSigningSecret(ctx, &ch)
	if err != nil {
		conditions.Set(&ch.Status.Conditions, ch.Generation, monv1.ConditionReady, false, monv1.ReasonReconcileError, err.Error())
		return ctrl.Result{}, err
	}
	notReady := monv1.ReasonSecretNotFound
	if ready {
		ready, notReady, msg, err = r.reconcileSecretRefs(ctx, &ch)
		if err != nil {
			return ctrl.Result{}, err
		}
	}
	ch.Status.ObservedGeneration = ch.Generation
	reason, message := ReadyReason(ready, notReady, msg, ch.Spec.Disabled)
	conditions.Set(&ch.Status.Conditions, ch.Generation, monv1.ConditionReady, ready, reason, message)
	if !ready {
		return ctrl.Result{RequeueAfter: secretRetryInterval}, nil
	}
	return ctrl.Result{}, nil
}

// channelStatus is the part of AlertChannel status the controller owns and
// applies as monv1.AlertChannelControllerFieldOwner; the delivery worker
// applies the rest (monv1.DeliveryStatusFields) as a field manager of its
// own, so neither overwrites the other's.
type channelStatus struct {
	ObservedGeneration int64  `json:"observedGeneration"`
	ConnectionID       string `json:"connectionID,omitempty"`
	SigningSecretName  string `json:"signingSecretName,omitempty"`
	// Conditions are every condition but Failing.
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// channelAdoption hands the status fields the operator's one field owner
// wrote before AlertChannel status was applied to the two writers.
var channelAdoption = ssa.Adoption{Legacy: FieldOwner, Owner: monv1.AlertChannelControllerFieldOwner,
	Split: map[string][]string{monv1.DeliveryFieldOwner: monv1.DeliveryStatusFields}}

// applyStatus applies the controller's part of ch's status, after handing
// the legacy owner's fields to the two writers once per channel and
// process (the cache strips managedFields, so the channel is read from the
// API server for that).
func (r *AlertChannelReconciler) applyStatus(ctx context.Context, ch *monv1.AlertChannel) error {
	if _, done := r.adopted.Load(ch.UID); !done {
		var live monv1.AlertChannel
		if err := r.Secrets.Get(ctx, client.ObjectKeyFromObject(ch), &live); err != nil {
			return err
		}
		if _, err := ssa.Adopt(ctx, r.Client, &live, channelAdoption); err != nil {
			return err
		}
		r.adopted.Store(ch.UID, true)
	}
	st := channelStatus{ObservedGeneration: ch.Status.ObservedGeneration, ConnectionID: ch.Status.ConnectionID,
		SigningSecretName: ch.Status.SigningSecretName}
	for _, c := range ch.Status.Conditions {
		if c.Type != monv1.AlertChannelConditionFailing {
			st.Conditions = append(st.Conditions, c)
		}
	}
	return ssa.ApplyStatus(ctx, r.Client, ch, monv1.GroupVersion.WithKind("AlertChannel"), st,
		ssa.Options{Owner: monv1.AlertChannelControllerFieldOwner})
}

// ReadyReason computes the Ready condition's reason and message: a Secret
// missing or not allowed (notReady is the reason, msg says which) makes it
// False; a disabled channel is Ready but says that nothing is sent.
func ReadyReason(ready bool, notReady, msg string, disabled bool) (reason, message string) {
	switch {
	case !ready:
		return notReady, msg
	case disabled:
		return monv1.ReasonReconciled, "the connection is disabled; no alerts are sent"
	}
	return monv1.ReasonReconciled, "the connection is configured"
}

// reconcileSigningSecret makes sure a webhook channel has a signing secret:
// the referenced one must exist, else a generated one is created and owned
// by the channel. The spec is never written.
func (r *AlertChannelReconciler) reconcileSigningSecret(ctx context.Context, ch *monv1.AlertChannel) (bool, string, error) {
	if ch.Spec.Type != monv1.ChannelWebhook {
		ch.Status.SigningSecretName = ""
		return true, "", nil
	}
	if ref := ch.Spec.SigningSecretRef; ref != nil {
		ch.Status.SigningSecretName = ref.Name
		return true, "", nil // checked with the other references
	}
	name := monv1.SigningSecretName(ch.Name)
	var s corev1.Secret
	err := r.Secrets.Get(ctx, client.ObjectKey{Namespace: ch.Namespace, Name: name}, &s)
	switch {
	case apierrors.IsNotFound(err):
		value, err := monv1.NewSigningSecret()
		if err != nil {
			return false, "", err
		}
		s = corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ch.Namespace, Name: name},
			Type:       corev1.SecretTypeOpaque,
			Data:       map[string][]byte{monv1.SigningSecretKey: []byte(value)},
		}
		if err := controllerutil.SetControllerReference(ch, &s, r.Scheme()); err != nil {
			return false, "", fmt.Errorf("own signing secret %s: %w", name, err)
		}
		if err := r.Create(ctx, &s, client.FieldOwner(FieldOwner)); err != nil && !apierrors.IsAlreadyExists(err) {
			return false, "", fmt.Errorf("create signing secret %s: %w", name, err)
		}
	case err != nil:
		return false, "", fmt.Errorf("get signing secret %s: %w", name, err)
	case !metav1.IsControlledBy(&s, ch):
		return false, "", fmt.Errorf("secret %s exists and is not owned by this channel; set spec.signingSecretRef to use it", name)
	case len(s.Data[monv1.SigningSecretKey]) == 0:
		value, err := monv1.NewSigningSecret()
		if err != nil {
			return false, "", err
		}
		before := s.DeepCopy()
		if s.Data == nil {
			s.Data = map[string][]byte{}
		}
		s.Data[monv1.SigningSecretKey] = []byte(value)
		if err := r.Patch(ctx, &s, client.MergeFrom(before), client.FieldOwner(FieldOwner)); err != nil {
			return false, "", fmt.Errorf("restore signing secret %s: %w", name, err)
		}
	}
	ch.Status.SigningSecretName = name
	return true, "", nil
}

// reconcileSecretRefs checks that every Secret key the channel reads exists
// and is one the channel may read (credentials.ChannelReferable). A
// reference that fails gives the Ready condition's reason and message:
// SecretNotFound for a missing Secret or key, SecretNotAllowed for one the
// channel may not read.
func (r *AlertChannelReconciler) reconcileSecretRefs(ctx context.Context, ch *monv1.AlertChannel) (bool, string, string, error) {
	for _, cr := range ch.Spec.SecretRefs() {
		ref := cr.Ref
		var s corev1.Secret
		err := r.Secrets.Get(ctx, client.ObjectKey{Namespace: ch.Namespace, Name: ref.Name}, &s)
		if apierrors.IsNotFound(err) {
			return false, monv1.ReasonSecretNotFound, fmt.Sprintf("secret %s not found", ref.Name), nil
		}
		if err != nil {
			return false, "", "", fmt.Errorf("get secret %s: %w", ref.Name, err)
		}
		if err := credentials.ChannelReferable(&s, ch); err != nil {
			return false, monv1.ReasonSecretNotAllowed, err.Error(), nil
		}
		if _, ok := s.Data[ref.Key]; !ok {
			return false, monv1.ReasonSecretNotFound, fmt.Sprintf("secret %s has no key %s", ref.Name, ref.Key), nil
		}
	}
	return true, "", "", nil
}

// SetupWithManager registers the reconciler. It reacts to spec changes
// (generation), not to status writes by itself or the delivery worker.
// Secrets are not watched (only API keys are cached); a channel waiting for
// one is checked again every 30 seconds.
func (r *AlertChannelReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Secrets == nil {
		r.Secrets = mgr.GetAPIReader()
	}
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorderFor(EventSource)
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&monv1.AlertChannel{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Named("alertchannel").
		Complete(r)
}
