// Package conditions holds the small helpers every reconciler uses to set
// metav1.Conditions and to tell whether a status changed.
package conditions

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Set records a condition of type t on conds for generation gen. The
// transition time changes only when the status does.
func Set(conds *[]metav1.Condition, gen int64, t string, ok bool, reason, msg string) {
	status := metav1.ConditionFalse
	if ok {
		status = metav1.ConditionTrue
	}
	meta.SetStatusCondition(conds, metav1.Condition{
		Type: t, Status: status, Reason: reason, Message: msg, ObservedGeneration: gen,
	})
}

// IsTrue reports whether condition t is True.
func IsTrue(conds []metav1.Condition, t string) bool {
	return meta.IsStatusConditionTrue(conds, t)
}
