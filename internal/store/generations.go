package store

import (
	"context"
	"time"
)

// MonitorIdentity is one generation of a monitor: the object that the
// Kubernetes API server knows by UID, and the names that people and
// manifests know it by. History rows are keyed by the UID (it is also the
// monitor's REST id); the namespace, name and key are what survives when
// the object is deleted and created again (GitOps re-sync, a Velero
// restore, a rebuilt cluster), so a later generation can find its
// predecessor's history.
type MonitorIdentity struct {
	UID       string
	Namespace string
	Name      string
	// Key is spec.key of a monitor managed as code, unique among the live
	// monitors of its namespace; empty for other monitors.
	Key string
	// Type is the monitor type (http, tcp, cron...): the history of one type
	// says nothing about a check of another, so it is adopted only by a
	// generation of the same type (the REST API deletes history when a
	// monitor as code changes type).
	Type string
}

// HistoryClaim is the first sight of a generation: its identity and where
// its history comes from.
type HistoryClaim struct {
	MonitorIdentity
	// AdoptFrom is empty for a generation that starts with no history.
	// Otherwise the generation adopts its newest predecessor (same
	// namespace and type) that had its name or its Key, retired or not:
	// Kubernetes keeps names, and the webhook keys, unique among live
	// monitors, so such a predecessor is gone even when nothing retired
	// it (a rebuilt cluster). AdoptFrom names one more candidate, the name
	// before a rename, taken only once retired, since that name may belong
	// to a live monitor.
	AdoptFrom string
	// At is when the generation was first seen.
	At time.Time
}

// GenerationStore keeps a monitor's history across generations. A
// generation is claimed when the Monitor controller first sees its object
// and retired when the object is deleted; a new generation of the same
// namespace and name (or key) and type adopts the newest predecessor's
// history, which is re-keyed to the new UID in one transaction, so every
// query by UID, REST id and incident reference stays as it is. History
// that no generation adopts is deleted once it has been retired longer
// than the retention.
type GenerationStore interface {
	// ClaimMonitorHistory records a generation and, unless AdoptFrom is
	// empty, moves the history of its predecessor (see HistoryClaim) to
	// c.UID: checks, rollups, incidents with their timelines and
	// notes, DNS records, pause windows, heartbeats, certificate
	// observations, expiry notices and the judgement document. Rows that
	// c.UID already has (results ingested before the claim) are merged:
	// rollup buckets are added up, the predecessor's open incident is
	// resolved when c.UID has one of its own. It returns the UID adopted,
	// empty when none was. Claiming a UID already claimed does nothing, so
	// callers may claim on every reconcile; of two replicas claiming at
	// once exactly one adopts.
	ClaimMonitorHistory(ctx context.Context, c HistoryClaim) (adopted string, err error)
	// RetireMonitorHistory records that a generation's object was deleted
	// at at (recording the generation first when it was never claimed),
	// resolves its open incident and closes its open pause window: nothing
	// watches the target any more. The history stays for a successor to
	// adopt.
	RetireMonitorHistory(ctx context.Context, id MonitorIdentity, at time.Time) error
	// UnretiredGenerations lists the generations claimed and not retired:
	// the live monitors, and any whose object vanished without its
	// finalizer (the leader retires those, see engine.RetireVanished).
	UnretiredGenerations(ctx context.Context) ([]MonitorIdentity, error)
	// PruneRetiredHistory deletes, as DeleteMonitorHistory does, the
	// history of every generation retired before olderThan that no
	// successor adopted. It returns how many generations it deleted.
	PruneRetiredHistory(ctx context.Context, olderThan time.Time) (int64, error)
}
