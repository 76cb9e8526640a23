package controllers

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// patchStatus is the one status write of a reconcile, deferred by every
// reconciler: when changed, it merge-patches obj's status against before
// with the operator's field owner, and reports a failure through retErr
// unless the reconcile already failed. An object deleted meanwhile is not
// an error.
func patchStatus(ctx context.Context, c client.Client, obj, before client.Object, changed bool, retErr *error) {
	if !changed {
		return
	}
	if err := c.Status().Patch(ctx, obj, client.MergeFrom(before), client.FieldOwner(FieldOwner)); err != nil && !apierrors.IsNotFound(err) {
		ctrl.LoggerFrom(ctx).Error(err, "unable to patch status")
		if *retErr == nil {
			*retErr = err
		}
	}
}
