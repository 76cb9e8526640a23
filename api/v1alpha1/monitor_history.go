package v1alpha1

// AdoptHistoryFromAnnotation on a Monitor says whose history it takes over
// when it is first seen. Without it, a Monitor adopts the history that a
// deleted Monitor of the same namespace, name (or spec.key) and type left
// in the store: a re-create by GitOps, a Velero restore or a rebuilt
// cluster keeps uptime, incidents and SLO budgets. Its value names another
// Monitor of the namespace, deleted, whose history it adopts (a rename); an
// empty value starts with no history. It is read once, at the Monitor's
// first reconcile; changing it later has no effect.
const AdoptHistoryFromAnnotation = "uptime-operator.io/adopt-history-from"

// HistorySource is the name whose history m adopts at its first reconcile
// (see AdoptHistoryFromAnnotation): its own name by default, empty for none.
func HistorySource(m *Monitor) string {
	if from, ok := m.Annotations[AdoptHistoryFromAnnotation]; ok {
		return from
	}
	return m.Name
}
