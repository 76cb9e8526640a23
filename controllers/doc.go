// Package controllers holds one reconciler per kind. Each follows the same
// order: get (ignoring not-found), one deferred status patch that is sent only
// when the status changed, the deletion branch, the finalizer, then ordered
// reconcile steps. Status is written by the manager's field owner and never
// triggers another reconcile of the same object (generation predicates);
// AlertChannel status, which the delivery worker shares, is applied
// (server-side apply) as a field manager of its own instead.
// Just before that patch every reconciler derives the kstatus conditions
// Reconciling and Stalled from its readiness condition
// (setProgressConditions), so GitOps tools see progress and failure the
// same way for every kind (docs/gitops.md).
package controllers

import monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"

// FieldOwner is the field manager of every write the controllers make: the
// operator's one field owner.
const FieldOwner = monv1.FieldOwner

// The REST API keeps runbooks in ConfigMaps and reads the third-party
// provider catalog from one; the manager's role covers that here, where
// controller-gen collects RBAC.
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;update;patch;delete
// The engine records Events on Monitors when incidents open and resolve.
// +kubebuilder:rbac:groups="";events.k8s.io,resources=events,verbs=create;patch
