package restapi

// ErrorBody is the error shape of every error answer: a human-readable
// `error`, plus `code` and `details` where useful. Missing and invalid keys
// have no code.
type ErrorBody struct {
	Error   string       `json:"error"`
	Code    string       `json:"code,omitempty" openapi:"ref=ErrorCode"`
	Details any          `json:"details,omitempty"` // More about the error (object or value).
	Errors  []FieldError `json:"errors,omitempty"`  // Validation errors.
	// Feature errors only: the workspace's plan.
	Plan string `json:"plan,omitempty"`
	// Feature errors only: the cheapest plan with the feature.
	RequiredPlan string `json:"required_plan,omitempty"`
	// Feature errors only: how to move to that plan.
	UpgradePath string `json:"upgradePath,omitempty"`
}

// FieldError is one rejected field of a validation error.
type FieldError struct {
	Field   string `json:"field"` // REST field path, e.g. config.timeout or monitors[2].url.
	Message string `json:"message"`
}
