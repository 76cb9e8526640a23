package monitor

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// cronParser parses the expressions cron monitors accept: five fields or a
// descriptor such as @hourly.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// errCronTimeZonePrefix refuses the TZ=/CRON_TZ= prefixes robfig/cron
// understands: a cron monitor's zone is spec.cron.timeZone, one place.
var errCronTimeZonePrefix = errors.New("a TZ= or CRON_TZ= prefix is not supported; set spec.cron.timeZone instead")

// neverFiresFrom is where ParseCron looks for a schedule's first run. It is
// fixed, so that an expression is valid or not whenever it is checked, and
// it starts a leap year: robfig/cron looks five years ahead, and from here
// that finds February 29 (2024, 2028) as well as every other date.
var neverFiresFrom = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// ParseCron parses a cron monitor's expression. It is the one parser of
// admission, the REST API and the engine, so all three accept the same
// expressions. robfig/cron v3.0.1 (unmaintained) panics on some inputs
// ("TZ=Europe/Berlin", "CRON_TZ=UTC", "TZ="): the zone prefixes are refused
// up front and any other panic of the parser is returned as an error, so a
// bad expression is a validation error and never a recovered panic. An
// expression that parses but matches no date ("0 0 30 2 *", February 30) is
// refused too: accepted, it would never fire and the monitor would report a
// missed heartbeat at once.
func ParseCron(expr string) (cron.Schedule, error) {
	sched, err := parseCron(expr)
	if err != nil {
		return nil, err
	}
	if sched.Next(neverFiresFrom).IsZero() {
		return nil, fmt.Errorf("%q never fires: no date matches its day-of-month and month fields (such as February 30)", expr)
	}
	return sched, nil
}

func parseCron(expr string) (sched cron.Schedule, err error) {
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
