package monitor

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

// DefaultSLO applies SLO defaults: availability over 30 days with the Google
// SRE workbook's 14.4 (fast) and 6 (slow) burn-rate thresholds.
func DefaultSLO(s *monv1.SLOSpec) {
	if s.SLIType == "" {
		s.SLIType = monv1.SLIAvailability
	}
	if s.WindowMinutes == 0 {
		s.WindowMinutes = 43200
	}
	if s.BurnRateFastThreshold == 0 {
		s.BurnRateFastThreshold = 14.4
	}
	if s.BurnRateSlowThreshold == 0 {
		s.BurnRateSlowThreshold = 6
	}
	if s.Enabled == nil {
		t := true
		s.Enabled = &t
	}
}

// ValidateSLOSpec checks an SLO's ranges.
func ValidateSLOSpec(s *monv1.SLOSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.TargetPercentage < 90 || s.TargetPercentage > 99.999 {
		errs = append(errs, field.Invalid(path.Child("targetPercentage"), s.TargetPercentage, "must be between 90 and 99.999"))
	}
	if s.WindowMinutes != 0 && (s.WindowMinutes < 60 || s.WindowMinutes > 43200) {
		errs = append(errs, field.Invalid(path.Child("windowMinutes"), s.WindowMinutes, "must be between 60 and 43200"))
	}
	for name, v := range map[string]float64{"burnRateFastThreshold": s.BurnRateFastThreshold, "burnRateSlowThreshold": s.BurnRateSlowThreshold} {
		if v != 0 && (v < 0.1 || v > 100) {
			errs = append(errs, field.Invalid(path.Child(name), v, "must be between 0.1 and 100"))
		}
	}
	return errs
}
