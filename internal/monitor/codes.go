package monitor

// Error codes of the specification that admission refusals carry in their
// message, so a REST client and a kubectl user read the same reason. The
// REST layer recognises them in an Invalid status and answers with the code.
// A plan limit is the typed plans.LimitError.
const (
	CodeFeatureNotAvail = "FEATURE_NOT_AVAILABLE"
	CodeWhiteLabel      = "WHITE_LABEL_NOT_ENTITLED"
	CodeConnectionLimit = "CONNECTION_LIMIT_REACHED"
)
