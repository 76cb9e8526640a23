package reliability

import (
	"math"
	"time"
)

// Health score weights and saturation points (docs/reliability.md).
const (
	healthAvailabilityWeight = 45.0
	healthAvailabilityNines  = 3.0 // 99.9 % gets full points
	healthIncidentsWeight    = 20.0
	healthIncidentsZero      = 10.0 // 10 incidents in 30 days get none
	healthRecoveryWeight     = 15.0
	healthRecoveryFullMin    = 5.0   // MTTR up to 5 minutes gets full points
	healthRecoveryZeroMin    = 120.0 // MTTR of 2 hours or more gets none
	healthBudgetWeight       = 20.0
	healthOpenIncidentCap    = 50
	// healthIncidentsPer is the span healthIncidentsZero refers to; other
	// windows scale it pro rata.
	healthIncidentsPer = 30 * 24 * time.Hour
)

// HealthComponent is one weighted part of a health score.
type HealthComponent struct {
	Name   string  `json:"name"`
	Weight float64 `json:"weight"`
	Value  float64 `json:"value"` // 0-1
	Points float64 `json:"points"`
}

// HealthInput is what a health score is computed from, all over one window.
type HealthInput struct {
	// Uptime is the window's uptime in percent; nil (no checks) gives no
	// score.
	Uptime *float64
	// Window is the window's length; zero means 30 days.
	Window time.Duration
	// Incidents is the number of incidents that started in the window.
	Incidents int
	// MTTRSeconds is the mean time to recovery of the window's resolved
	// incidents, nil without one.
	MTTRSeconds *float64
	// OpenIncident caps the score while an incident is open.
	OpenIncident bool
	// BudgetRemaining is the SLO's remaining error budget in percent, nil
	// without an enabled, evaluated SLO.
	BudgetRemaining *float64
	// BurningFast zeroes the error budget component.
	BurningFast bool
}

// HealthScore scores a monitor 0-100 (higher is healthier); nil without
// uptime data. Components without data are left out and the rest
// re-weighted; an open incident caps the score at 50. The REST reliability
// reports and the MCP uptime report both use it.
func HealthScore(in HealthInput) (*int, []HealthComponent) {
	if in.Uptime == nil {
		return nil, []HealthComponent{}
	}
	clamp := func(v float64) float64 { return math.Max(0, math.Min(1, v)) }
	avail := 1.0
	if u := *in.Uptime; u < 100 {
		avail = clamp(-math.Log10(1-u/100) / healthAvailabilityNines)
	}
	window := in.Window
	if window <= 0 {
		window = healthIncidentsPer
	}
	zero := healthIncidentsZero * window.Hours() / healthIncidentsPer.Hours()
	comps := []HealthComponent{
		{Name: "availability", Weight: healthAvailabilityWeight, Value: avail},
		{Name: "incidents", Weight: healthIncidentsWeight, Value: clamp(1 - float64(in.Incidents)/zero)},
	}
	recovery := 1.0
	if m := in.MTTRSeconds; m != nil {
		recovery = clamp(1 - (*m/60-healthRecoveryFullMin)/(healthRecoveryZeroMin-healthRecoveryFullMin))
	}
	comps = append(comps, HealthComponent{Name: "recovery", Weight: healthRecoveryWeight, Value: recovery})
	if in.BudgetRemaining != nil {
		v := clamp(*in.BudgetRemaining / 100)
		if in.BurningFast {
			v = 0
		}
		comps = append(comps, HealthComponent{Name: "error_budget", Weight: healthBudgetWeight, Value: v})
	}
	var sumW, sum float64
	for _, c := range comps {
		sumW += c.Weight
	}
	for i := range comps {
		comps[i].Points = Round2(100 * comps[i].Weight * comps[i].Value / sumW)
		comps[i].Value = Round2(comps[i].Value)
		sum += 100 * comps[i].Weight * comps[i].Value / sumW
	}
	score := int(math.Round(sum))
	if in.OpenIncident {
		score = min(score, healthOpenIncidentCap)
	}
	return &score, comps
}
