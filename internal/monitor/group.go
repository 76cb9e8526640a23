package monitor

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

// ValidateMonitorGroupSpec checks a group's fields.
func ValidateMonitorGroupSpec(s *monv1.MonitorGroupSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(s.Name) < 1 || len(s.Name) > 255 {
		errs = append(errs, field.Invalid(path.Child("name"), s.Name, "must be 1-255 characters"))
	}
	if len(s.NotificationEmails) > 20 {
		errs = append(errs, field.TooMany(path.Child("notificationEmails"), len(s.NotificationEmails), 20))
	}
	return append(errs, ValidateEmails(s.NotificationEmails, path.Child("notificationEmails"))...)
}
