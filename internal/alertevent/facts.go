package alertevent

import "time"

// Decision is what the incident engine tells alerting about an incident
// state change, beyond the monitor and the incident themselves.
type Decision struct {
	// Region is the label of a region that reported the failure.
	Region string
	// Reason is the failure reason (down events) or empty.
	Reason string
	// Explanation is a one-line verdict for down events.
	Explanation string
}

// LastMileNotice describes one last-mile outage: a monitor unreachable only
// from some ISP networks. The engine raises it; alerting turns it into a
// last_mile.unreachable or last_mile.recovered payload.
type LastMileNotice struct {
	// NoticeID is the same for both events of one outage.
	NoticeID       string
	Since          time.Time
	ISPs           []string
	FailingRegions []string
}
