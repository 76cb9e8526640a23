package core

import (
	"context"
	"fmt"
	"net/http"
	"slices"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DeleteOwnedSecret deletes the Secret name of owner's namespace when owner
// owns it, the ownership PutOwnedSecret gives and checks: a Secret of that
// name that someone else made (a page named "db" next to an application's
// "db-access") is left alone. The delete is conditional on the UID and
// resourceVersion read, so a Secret replaced in between is not deleted.
func (d *Deps) DeleteOwnedSecret(ctx context.Context, owner client.Object, name string) error {
	sec := &corev1.Secret{}
	err := d.Reader.Get(ctx, client.ObjectKey{Namespace: owner.GetNamespace(), Name: name}, sec)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get secret %s: %w", name, err)
	}
	if !slices.ContainsFunc(sec.OwnerReferences, func(o metav1.OwnerReference) bool { return o.UID == owner.GetUID() }) {
		return nil
	}
	err = d.Client.Delete(ctx, sec, client.Preconditions{UID: &sec.UID, ResourceVersion: &sec.ResourceVersion})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("delete secret %s: %w", name, err)
	}
	return nil
}

// PutOwnedSecret creates or updates the Secret name of owner's namespace,
// controlled by owner (of kind). A Secret of that name that owner does not
// own is left alone: 409 CONFLICT.
//
// Controllers write some of these Secrets too (the AlertChannel controller
// generates a webhook's signing Secret), so the write is create-or-update
// retried on a conflict: a Secret created between the read and the create
// (AlreadyExists) is read again and updated, and an update of a Secret
// changed since the read (Conflict) is redone on the fresh one. The
// controller reference makes a Secret created here one the controller
// accepts as its own.
func (d *Deps) PutOwnedSecret(ctx context.Context, owner client.Object, kind, name string, data map[string]string) error {
	ref := metav1.OwnerReference{APIVersion: monv1.GroupVersion.String(), Kind: kind, Name: owner.GetName(), UID: owner.GetUID(), Controller: ptr.To(true)}
	raced := func(err error) bool { return apierrors.IsAlreadyExists(err) || apierrors.IsConflict(err) }
	return retry.OnError(retry.DefaultRetry, raced, func() error {
		sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: owner.GetNamespace(), Name: name}}
		err := d.Reader.Get(ctx, client.ObjectKeyFromObject(sec), sec)
		if apierrors.IsNotFound(err) {
			sec.OwnerReferences = []metav1.OwnerReference{ref}
			sec.Type = corev1.SecretTypeOpaque
			sec.StringData = data
			if err := d.Client.Create(ctx, sec); err != nil {
				return fmt.Errorf("create secret %s: %w", name, err)
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("get secret %s: %w", name, err)
		}
		i := slices.IndexFunc(sec.OwnerReferences, func(o metav1.OwnerReference) bool { return o.UID == owner.GetUID() })
		if i < 0 {
			return NewError(http.StatusConflict, CodeConflict, fmt.Sprintf("secret %s exists and is not managed by this %s", name, kind))
		}
		if metav1.GetControllerOf(sec) == nil {
			sec.OwnerReferences[i].Controller = ptr.To(true) // written here before it was controlled
		}
		if sec.Data == nil {
			sec.Data = map[string][]byte{}
		}
		for k, v := range data {
			sec.Data[k] = []byte(v)
		}
		if err := d.Client.Update(ctx, sec); err != nil {
			return fmt.Errorf("update secret %s: %w", name, err)
		}
		return nil
	})
}
