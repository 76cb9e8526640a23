// Package probeserver is the manager side of the probe API
// (internal/probeapi): it authorizes agents (a region's token Secret, or a
// TokenReview of the probe ServiceAccount's token), answers the assignment
// long poll with the lists package assign builds, hands pushed results to the
// engine, tracks which agents of a region called recently, and queues ad-hoc
// checks (run-check, test, check-on-resume) for a region's agents.
//
// It judges nothing: the engine stores and judges what Ingest receives, and
// asks this package (engine.Agents) which regions have agents online.
package probeserver
