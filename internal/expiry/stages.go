package expiry

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/alertevent"
)

// ReminderDaysAnnotation on a Monitor asks for an early reminder that many
// days (1-365) before a certificate or domain expires, as stage pre_<N>d, in
// addition to the standard stages.
const ReminderDaysAnnotation = "uptime-operator.io/expiry-reminder-days"

// MaxReminderDays bounds ReminderDaysAnnotation.
const MaxReminderDays = 365

const day = 24 * time.Hour

// Standard stages of the webhook specification.
const (
	StagePre15d = "pre_15d"
	StagePre7d  = "pre_7d"
	StagePre2d  = "pre_2d"
	StagePre24h = "pre_24h"
	StagePost1d = "post_1d"
	StagePost2d = "post_2d"
	StagePost3d = "post_3d"
)

// preStage is a stage that begins a fixed time before expiry.
type preStage struct {
	name   string
	before time.Duration
}

var standardPre = []preStage{{StagePre15d, 15 * day}, {StagePre7d, 7 * day}, {StagePre2d, 2 * day}, {StagePre24h, day}}

// postStages are indexed by the whole days since expiry (days remaining -1,
// -2, -3, as alertevent.DaysRemaining counts them).
var postStages = []string{StagePost1d, StagePost2d, StagePost3d}

// ReminderDays returns the early-reminder threshold of m, or 0 when the
// annotation is absent, invalid or equal to a standard stage.
func ReminderDays(m *monv1.Monitor) int {
	n, err := ParseReminderDays(m.Annotations[ReminderDaysAnnotation])
	if err != nil {
		return 0
	}
	return n
}

// ParseReminderDays validates an annotation value: empty is 0 (no early
// reminder), otherwise a whole number of days 1-365.
func ParseReminderDays(v string) (int, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > MaxReminderDays {
		return 0, fmt.Errorf("%s must be a whole number of days from 1 to %d", ReminderDaysAnnotation, MaxReminderDays)
	}
	return n, nil
}

// preStages returns the pre-expiry stages for an early reminder of
// reminderDays (0: none), longest lead first. A reminder that coincides with
// a standard stage (15, 7, 2 or 1 days) adds nothing.
func preStages(reminderDays int) []preStage {
	out := slices.Clone(standardPre)
	if reminderDays > 0 && !slices.ContainsFunc(out, func(s preStage) bool { return s.before == time.Duration(reminderDays)*day }) {
		out = append(out, preStage{fmt.Sprintf("pre_%dd", reminderDays), time.Duration(reminderDays) * day})
		slices.SortFunc(out, func(a, b preStage) int { return int((b.before - a.before) / time.Second) })
	}
	return out
}

// StageAt returns the notice stage that applies at now to something that
// expires at expiresAt, "" when none does (more than the longest lead before
// expiry, or more than three days after), and when the applicable stage
// changes next (zero when it never will).
//
// Before expiry the stage is the one with the shortest lead that still
// covers the remaining time: 10 days before is pre_15d, 5 days before
// pre_7d, 30 hours before pre_2d, 3 hours before pre_24h. After expiry it is
// post_<N>d while the notice's days_remaining is -N: post_1d during the first
// 24 hours, post_2d during the second, post_3d during the third.
func StageAt(expiresAt, now time.Time, reminderDays int) (stage string, next time.Time) {
	left := expiresAt.Sub(now)
	if left >= 0 {
		stages := preStages(reminderDays)
		for i, s := range stages {
			if left > s.before {
				if i == 0 {
					return "", expiresAt.Add(-s.before)
				}
				break
			}
			stage = s.name
			next = expiresAt.Add(time.Nanosecond) // the first post stage
			if i+1 < len(stages) {
				next = expiresAt.Add(-stages[i+1].before)
			}
		}
		return stage, next
	}
	days := -alertevent.DaysRemaining(expiresAt, now)
	if days > len(postStages) {
		return "", time.Time{}
	}
	// days_remaining becomes -(days+1) just after days whole days.
	return postStages[days-1], expiresAt.Add(time.Duration(days)*day + time.Nanosecond)
}
