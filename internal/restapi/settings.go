package restapi

// OnCallSchedule is an on-call schedule of GET /settings/on-call-schedules,
// with who is on call now.
type OnCallSchedule struct {
	ID           string           `json:"id" openapi:"format=uuid"`
	Name         string           `json:"name"`
	Description  *string          `json:"description"`
	TimeZone     string           `json:"time_zone"` // IANA time zone of the shifts (default UTC).
	ShiftHours   int32            `json:"shift_hours"`
	StartsAt     string           `json:"starts_at" openapi:"format=date-time"` // Start of the first shift.
	Participants []OnCallPerson   `json:"participants"`                         // In rotation order.
	Overrides    []OnCallOverride `json:"overrides"`
	Current      *OnCallPerson    `json:"current"`                                  // Null when nobody is on call.
	CurrentUntil *string          `json:"current_until" openapi:"format=date-time"` // End of the current shift.
}

// OnCallPerson is a participant of an on-call schedule.
type OnCallPerson struct {
	Name  string `json:"name"`
	Email string `json:"email"`
}

// OnCallOverride puts a participant on call for a time instead of the
// rotation.
type OnCallOverride struct {
	Person   OnCallPerson `json:"participant"`
	StartsAt string       `json:"starts_at" openapi:"format=date-time"`
	EndsAt   string       `json:"ends_at" openapi:"format=date-time"`
}

// OnCallNow is one schedule of GET /settings/on-call-schedules/current.
type OnCallNow struct {
	ScheduleID   string        `json:"schedule_id" openapi:"format=uuid"`
	ScheduleName string        `json:"schedule_name"`
	OnCall       *OnCallPerson `json:"on_call"`                          // Null when nobody is on call.
	Until        *string       `json:"until" openapi:"format=date-time"` // End of the current shift.
}

// EscalationPolicy is an escalation policy of GET
// /settings/escalation-policies.
type EscalationPolicy struct {
	ID          string                 `json:"id" openapi:"format=uuid"`
	Name        string                 `json:"name"`
	Description *string                `json:"description"`
	Repeat      int32                  `json:"repeat"` // Further cycles through the steps after the first.
	Steps       []EscalationPolicyStep `json:"steps"`
	CreatedAt   string                 `json:"created_at" openapi:"format=date-time"`
}

// EscalationPolicyStep is one step of a policy: whom it notifies, how long
// after the previous step (or the incident's start).
type EscalationPolicyStep struct {
	DelayMinutes int32    `json:"delay_minutes"`
	Channels     []string `json:"channels"` // Alert channels by name.
	Emails       []string `json:"emails"`
}
