// Package incidentcomms serves /incident-comms: the AI incident assist
// (internal/assist) writing incident summaries, postmortems and status
// update drafts that people review, edit and publish.
package incidentcomms
