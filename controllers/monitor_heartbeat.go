package controllers

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/credentials"
)

// reconcileHeartbeatToken keeps a cron Monitor's heartbeat token where
// Kubernetes' `view` cannot read it (api/v1alpha1/monitor_heartbeat.go):
// in the Monitor's own credentials Secret, with its hash in the object.
//
//   - A token in monv1.HeartbeatTokenAnnotation (set by hand, or kept there
//     by an earlier version) moves to the Secret and the annotation goes,
//     the token unchanged: the cron jobs that ping it keep working.
//   - A cron Monitor without a token (created by kubectl or GitOps; the
//     REST API mints one at create time) gets one; a token the Secret
//     already keeps (a hash write lost after the Secret's) is reused.
//
// The Secret is written before the object, so the object never names a
// hash whose token is nowhere. It reports whether it changed m.
func (r *MonitorReconciler) reconcileHeartbeatToken(ctx context.Context, m *monv1.Monitor) (bool, error) {
	if m.Spec.Type != monv1.MonitorCron {
		return false, nil
	}
	tok := m.Annotations[monv1.HeartbeatTokenAnnotation]
	if tok == "" && m.Annotations[monv1.HeartbeatTokenHashAnnotation] != "" {
		return false, nil
	}
	if tok == "" && r.NewHeartbeatToken == nil {
		return false, nil
	}
	var sec corev1.Secret
	err := r.Secrets.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: credentials.SecretName(m.Name)}, &sec)
	var notAllowed *credentials.NotAllowedError
	switch {
	case errors.As(err, &notAllowed):
		// Someone else's Secret holds the name: KeepHeartbeatToken
		// refuses it below, with the reason.
		sec.Name = credentials.SecretName(m.Name)
	case apierrors.IsNotFound(err):
		sec = corev1.Secret{}
	case err != nil:
		return false, fmt.Errorf("read credentials secret: %w", err)
	}
	if tok == "" {
		tok = credentials.StoredHeartbeatToken(&sec, m)
	}
	if tok == "" {
		tok = r.NewHeartbeatToken()
	}
	if credentials.StoredHeartbeatToken(&sec, m) != tok || !credentials.IsOwn(&sec, m) || sec.ResourceVersion == "" {
		if err := credentials.KeepHeartbeatToken(&sec, m, tok); err != nil {
			return false, fmt.Errorf("keep heartbeat token: %w", err)
		}
		if sec.ResourceVersion == "" {
			err = r.Create(ctx, &sec)
		} else {
			err = r.Update(ctx, &sec)
		}
		if err != nil {
			return false, fmt.Errorf("keep heartbeat token: %w", err)
		}
	} else if credentials.SetOwner(&sec, m) {
		if err := r.Update(ctx, &sec); err != nil {
			return false, fmt.Errorf("own credentials secret: %w", err)
		}
	}
	patch := client.MergeFrom(m.DeepCopy())
	monv1.SetHeartbeatToken(m, tok)
	if err := r.Patch(ctx, m, patch, client.FieldOwner(FieldOwner)); err != nil {
		return false, fmt.Errorf("set heartbeat token hash: %w", err)
	}
	return true, nil
}
