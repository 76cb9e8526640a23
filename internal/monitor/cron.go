package monitor

import (
	"errors"
	"fmt"
	"strings"

	"github.com/robfig/cron/v3"
)

// cronParser parses the expressions cron monitors accept: five fields or a
// descriptor such as @hourly.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// errCronTimeZonePrefix refuses the TZ=/CRON_TZ= prefixes robfig/cron
// understands: a cron monitor's zone is spec.cron.timeZone, one place.
var errCronTimeZonePrefix = errors.New("a TZ= or CRON_TZ= prefix is not supported; set spec.cron.timeZone instead")

// ParseCron parses a cron monitor's expression. It is the one parser of
// admission, the REST API and the engine, so all three accept the same
// expressions. robfig/cron v3.0.1 (unmaintained) panics on some inputs
// ("TZ=Europe/Berlin", "CRON_TZ=UTC", "TZ="): the zone prefixes are refused
// up front and any other panic of the parser is returned as an error, so a
// bad expression is a validation error and never a recovered panic.
func ParseCron(expr string) (sched cron.Schedule, err error) {
	trimmed := strings.TrimSpace(expr)
	if strings.HasPrefix(trimmed, "TZ=") || strings.HasPrefix(trimmed, "CRON_TZ=") {
		return nil, errCronTimeZonePrefix
	}
	defer func() {
		if p := recover(); p != nil {
			sched, err = nil, fmt.Errorf("cannot parse %q: %v", expr, p)
		}
	}()
	return cronParser.Parse(expr)
}
