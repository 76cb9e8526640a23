package thirdparty

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/uptime-operator/uptime-operator/internal/restapi"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// PageServices returns the third-party services status page pageUID shows,
// in the page's order, with their state from the poller's last snapshot. It
// never fetches: a visitor of a public page must not make the manager call
// providers. A service without a fresh, successful poll is unknown.
func (s *Service) PageServices(ctx context.Context, pageUID string) ([]restapi.PublicService, error) {
	page, err := s.Store.GetThirdPartyPage(ctx, pageUID)
	if err != nil {
		return nil, err
	}
	out := make([]restapi.PublicService, 0, len(page.Services))
	for _, svc := range page.Services {
		p, ok, err := s.Catalog.Get(ctx, svc.ProviderID)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue // removed from the catalog: nothing to show
		}
		pub := restapi.PublicService{Name: p.Name, URL: p.pageURL(), Status: stateUnknown, Components: []restapi.PublicServiceComponent{}}
		if svc.DisplayName != "" {
			pub.Name = svc.DisplayName
		}
		snap, err := s.freshSnapshot(ctx, p.ID)
		if err != nil {
			return nil, err
		}
		if snap != nil {
			fillService(&pub, snap, svc.ComponentIDs)
		}
		out = append(out, pub)
	}
	return out, nil
}

// freshSnapshot returns the stored snapshot of provider id when the last
// poll succeeded recently, else nil.
func (s *Service) freshSnapshot(ctx context.Context, id string) (*Snapshot, error) {
	st, err := s.Store.GetThirdPartyState(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, err
	case len(st.Snapshot) == 0 || st.Error != "" || s.now().Sub(st.PolledAt) > 3*s.interval():
		return nil, nil
	}
	snap := &Snapshot{}
	if err := json.Unmarshal(st.Snapshot, snap); err != nil {
		return nil, fmt.Errorf("decode stored snapshot of %s: %w", id, err)
	}
	return snap, nil
}

// States of a service on a page, in the vocabulary of a page's monitors.
const (
	stateUp          = "up"
	stateDegraded    = "degraded"
	stateDown        = "down"
	stateMaintenance = "maintenance"
	stateUnknown     = "unknown"
)

// severity orders states from best to worst.
var severity = map[string]int{stateUp: 0, stateMaintenance: 1, stateDegraded: 2, stateDown: 3}

// componentState maps a Statuspage component status to a page state. A
// partial outage is an outage for the users it hits, so it shows as down.
func componentState(status string) string {
	switch status {
	case "operational":
		return stateUp
	case "degraded_performance":
		return stateDegraded
	case "partial_outage", "major_outage":
		return stateDown
	case "under_maintenance":
		return stateMaintenance
	}
	return stateUnknown
}

// indicatorState maps a Statuspage page indicator to a page state.
func indicatorState(indicator string) string {
	switch indicator {
	case "none":
		return stateUp
	case "minor":
		return stateDegraded
	case "major", "critical":
		return stateDown
	case "maintenance":
		return stateMaintenance
	}
	return stateUnknown
}

// fillService sets the state, components and open incidents of pub from
// snap. With components chosen, the service is the worst of them and shows
// them; otherwise it is the provider's overall indicator (or the worst of
// all its components when the provider has no indicator).
func fillService(pub *restapi.PublicService, snap *Snapshot, componentIDs []string) {
	worst := ""
	consider := func(state string) {
		if state == stateUnknown {
			return
		}
		if worst == "" || severity[state] > severity[worst] {
			worst = state
		}
	}
	for _, id := range sortedKeys(snap.Components) {
		c := snap.Components[id]
		if len(componentIDs) > 0 && !slices.Contains(componentIDs, id) {
			continue
		}
		if c.Group && len(componentIDs) == 0 {
			continue // a group's state is its members'
		}
		state := componentState(c.Status)
		consider(state)
		if len(componentIDs) > 0 {
			pub.Components = append(pub.Components, restapi.PublicServiceComponent{Name: c.Name, Status: state})
		}
	}
	switch {
	case len(componentIDs) == 0 && snap.Indicator != "":
		pub.Status = indicatorState(snap.Indicator)
	case worst != "":
		pub.Status = worst
	}
	for _, id := range sortedKeys(snap.Incidents) {
		inc := snap.Incidents[id]
		if resolved(inc.Status) || !affects(inc, componentIDs) {
			continue
		}
		pub.Incidents = append(pub.Incidents, restapi.PublicServiceIncident{Name: inc.Name, URL: inc.Shortlink})
	}
}

// affects reports whether inc touches one of componentIDs; every incident
// affects a service shown without chosen components.
func affects(inc Incident, componentIDs []string) bool {
	if len(componentIDs) == 0 || len(inc.Components) == 0 {
		return true
	}
	for _, c := range inc.Components {
		if slices.Contains(componentIDs, c) {
			return true
		}
	}
	return false
}
