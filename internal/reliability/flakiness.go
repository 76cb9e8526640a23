package reliability

import (
	"fmt"
	"math"
	"slices"
	"time"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

// Flakiness scores how noisy a monitor is, 0 (steady) to 100 (very flaky),
// over the last 7 and 30 days. The formula is in docs/reliability.md; the
// weights and saturation points are the constants below.
const (
	flipWeight        = 40.0
	flipSaturation    = 4.0 // state flips per region and day for full points
	unconfWeight      = 35.0
	unconfSaturation  = 2.0 // unconfirmed failures per day for full points
	shortWeight       = 25.0
	shortSaturation   = 3.0 // short or flapping incidents per week for full points
	shortIncidentTime = 5 * time.Minute
)

// FlakinessReason explains one part of a flakiness score.
type FlakinessReason struct {
	Code    string  `json:"code"`
	Message string  `json:"message"`
	Value   float64 `json:"value"`
	Points  float64 `json:"points"`
}

// FlakinessWindow is the flakiness score of one window.
type FlakinessWindow struct {
	Days  int    `json:"days"`
	Score *int   `json:"score"`
	Level string `json:"level"`
	// Checks counts the countable checks (up, degraded, down) of the window.
	Checks               int               `json:"checks"`
	Regions              int               `json:"regions"`
	StateFlips           int               `json:"state_flips"`
	FlipsPerRegionPerDay float64           `json:"flips_per_region_per_day"`
	UnconfirmedFailures  int               `json:"unconfirmed_failures"`
	Incidents            int               `json:"incidents"`
	ShortIncidents       int               `json:"short_incidents"`
	Reasons              []FlakinessReason `json:"reasons"`
}

// Check is what the flakiness score reads of one check result.
type Check struct {
	Region string
	At     time.Time
	// Status is the check's verdict: up, degraded, down, blocked or
	// unknown.
	Status monv1.MonitorStatusValue
}

// failureRun is a run of consecutive down checks of one region.
type failureRun struct{ start, end time.Time }

// Flakiness scores the window [from, to). checks are one monitor's
// checks (any order, any region); incidents its incidents that may overlap
// the window.
func Flakiness(from, to time.Time, checks []Check, incidents []Incident) FlakinessWindow {
	days := to.Sub(from).Hours() / 24
	out := FlakinessWindow{Days: int(math.Round(days)), Reasons: []FlakinessReason{}}
	byRegion := map[string][]Check{}
	for _, c := range checks {
		if c.At.Before(from) || !c.At.Before(to) {
			continue
		}
		if c.Status == monv1.StatusBlocked || c.Status == monv1.StatusUnknown {
			continue // checker-side faults say nothing about the target
		}
		byRegion[c.Region] = append(byRegion[c.Region], c)
		out.Checks++
	}
	var runs []failureRun
	for _, cs := range byRegion {
		slices.SortFunc(cs, func(a, b Check) int { return a.At.Compare(b.At) })
		var run *failureRun
		for i, c := range cs {
			down := c.Status == monv1.StatusDown
			if i > 0 && down != (cs[i-1].Status == monv1.StatusDown) {
				out.StateFlips++
			}
			switch {
			case down && run == nil:
				run = &failureRun{start: c.At, end: c.At}
			case down:
				run.end = c.At
			case run != nil:
				runs = append(runs, *run)
				run = nil
			}
		}
		if run != nil {
			runs = append(runs, *run)
		}
	}
	out.Regions = len(byRegion)
	for _, r := range runs {
		confirmed := slices.ContainsFunc(incidents, func(inc Incident) bool {
			end := to
			if inc.ResolvedAt != nil {
				end = *inc.ResolvedAt
			}
			return !r.start.After(end) && !r.end.Before(inc.StartedAt)
		})
		if !confirmed {
			out.UnconfirmedFailures++
		}
	}
	for _, inc := range incidents {
		if inc.StartedAt.Before(from) || !inc.StartedAt.Before(to) {
			continue
		}
		out.Incidents++
		short := inc.ResolvedAt != nil && inc.ResolvedAt.Sub(inc.StartedAt) < shortIncidentTime
		if short || inc.Flapping {
			out.ShortIncidents++
		}
	}
	if out.Checks == 0 || days <= 0 {
		out.Level = "unknown"
		out.Reasons = append(out.Reasons, FlakinessReason{Code: "no_data", Message: "no up, degraded or down checks in the window"})
		return out
	}
	out.FlipsPerRegionPerDay = Round2(float64(out.StateFlips) / float64(out.Regions) / days)
	unconfPerDay := float64(out.UnconfirmedFailures) / days
	shortPerWeek := float64(out.ShortIncidents) / (days / 7)
	parts := []FlakinessReason{
		{Code: "state_flips", Value: out.FlipsPerRegionPerDay, Points: flipWeight * math.Min(1, out.FlipsPerRegionPerDay/flipSaturation),
			Message: fmt.Sprintf("%d up/down flips, %.2f per region and day", out.StateFlips, out.FlipsPerRegionPerDay)},
		{Code: "unconfirmed_failures", Value: Round2(unconfPerDay), Points: unconfWeight * math.Min(1, unconfPerDay/unconfSaturation),
			Message: fmt.Sprintf("%d failures in a single region that did not reach the quorum", out.UnconfirmedFailures)},
		{Code: "short_incidents", Value: Round2(shortPerWeek), Points: shortWeight * math.Min(1, shortPerWeek/shortSaturation),
			Message: fmt.Sprintf("%d of %d incidents lasted under 5 minutes or were flapping", out.ShortIncidents, out.Incidents)},
	}
	total := 0.0
	for _, p := range parts {
		total += p.Points
		if p.Points > 0 {
			p.Points = Round2(p.Points)
			out.Reasons = append(out.Reasons, p)
		}
	}
	slices.SortStableFunc(out.Reasons, func(a, b FlakinessReason) int { return int(math.Round(b.Points*100 - a.Points*100)) })
	score := int(math.Round(total))
	out.Score = &score
	out.Level = FlakinessLevel(score)
	return out
}

// FlakinessLevel names a flakiness score's band: stable, low, moderate or
// high.
func FlakinessLevel(score int) string {
	switch {
	case score < 10:
		return "stable"
	case score < 30:
		return "low"
	case score < 60:
		return "moderate"
	}
	return "high"
}
