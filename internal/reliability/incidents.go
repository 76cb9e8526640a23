package reliability

import "time"

// Incident is what the figures read of an incident. The caller converts
// from wherever it holds incidents (the store, the REST answers), so this
// package stays below both.
type Incident struct {
	StartedAt time.Time
	// ResolvedAt is nil while the incident is open.
	ResolvedAt *time.Time
	// Flapping marks an incident opened while the monitor flapped; it
	// counts as a short incident in the flakiness score.
	Flapping bool
}

// IncidentStats are the incident figures of one window.
type IncidentStats struct {
	// Count is the number of incidents that started in the window.
	Count int
	// Resolved counts those of them that are resolved.
	Resolved int
	// RepairSum is the summed duration of the resolved ones.
	RepairSum time.Duration
	// Downtime is the incident time inside the window, also of incidents
	// that started before it; open incidents count up to the window's end.
	Downtime time.Duration
	// Open is true while any incident passed in is unresolved.
	Open bool
	// Window is the length of the window.
	Window time.Duration
}

// Incidents computes the figures of [from, to) from incidents that started
// in the window or before it.
func Incidents(from, to time.Time, incidents []Incident) IncidentStats {
	st := IncidentStats{Window: to.Sub(from)}
	for _, inc := range incidents {
		end := to
		if inc.ResolvedAt != nil {
			end = *inc.ResolvedAt
		} else {
			st.Open = true
		}
		start := inc.StartedAt
		if start.Before(from) {
			start = from
		}
		if end.After(start) {
			st.Downtime += end.Sub(start)
		}
		if inc.StartedAt.Before(from) {
			continue
		}
		st.Count++
		if inc.ResolvedAt != nil {
			st.Resolved++
			st.RepairSum += inc.ResolvedAt.Sub(inc.StartedAt)
		}
	}
	return st
}

// Pool adds o's figures to st: the workspace figures of several monitors.
// withUptime adds o's window to the pooled up-time as well; monitors
// without data leave it out so they do not lengthen the mean time between
// failures.
func (st *IncidentStats) Pool(o IncidentStats, withUptime bool) {
	if withUptime {
		st.Window += o.Window
	}
	st.Count += o.Count
	st.Resolved += o.Resolved
	st.RepairSum += o.RepairSum
	st.Downtime += o.Downtime
	st.Open = st.Open || o.Open
}

// MTTR is the mean time to recovery in seconds, nil without resolved
// incidents.
func (st IncidentStats) MTTR() *float64 {
	if st.Resolved == 0 {
		return nil
	}
	v := Round2(st.RepairSum.Seconds() / float64(st.Resolved))
	return &v
}

// MTBF is the mean time between failures in seconds: the time up in the
// window divided by the number of incidents, nil without incidents.
func (st IncidentStats) MTBF() *float64 {
	if st.Count == 0 {
		return nil
	}
	v := Round2((st.Window - st.Downtime).Seconds() / float64(st.Count))
	return &v
}

// Health is the health score input of a monitor with these incident
// figures and uptime (percent over the same window, nil without checks).
func (st IncidentStats) Health(uptime *float64) HealthInput {
	return HealthInput{Uptime: uptime, Window: st.Window, Incidents: st.Count, MTTRSeconds: st.MTTR(), OpenIncident: st.Open}
}
