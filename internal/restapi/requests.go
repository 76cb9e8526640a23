package restapi

// Request bodies. The handlers decode into these types, and the OpenAPI
// document derives the request schemas from them as it does the answers':
// a field without omitempty is required, a pointer may be null unless its
// `openapi` tag says nonnull (a pointer that tells "absent" apart), and a
// blank field tagged strict refuses unknown properties, as the handler that
// decodes the body strictly does.

// NoteBody is the body of POST /incidents/{id}/notes.
type NoteBody struct {
	Body *string `json:"body" openapi:"nonnull,min=1,max=5000"`
	// Public marks a public update (status page subscribers are told).
	Public bool `json:"public,omitempty"`
}

// ResolveBody is the optional body of POST /incidents/{id}/resolve.
type ResolveBody struct {
	Note string `json:"note,omitempty" openapi:"max=5000"`
}

// Postmortem is the body of PUT /incidents/{id}/postmortem.
type Postmortem struct {
	Postmortem *string `json:"postmortem" openapi:"nonnull,max=50000"`
}

// DependencyBody is the body of POST /reliability/dependencies.
type DependencyBody struct {
	_               struct{} `openapi:"strict"`
	ParentMonitorID string   `json:"parent_monitor_id" openapi:"format=uuid"`
	ChildMonitorID  string   `json:"child_monitor_id" openapi:"format=uuid"`
	SuppressionMode *string  `json:"suppression_mode,omitempty" openapi:"nonnull,enum=suppress_child_if_parent_down"`
}

// Overwrite is the optional body of POST
// /incident-comms/incidents/{id}/postmortem/generate.
type Overwrite struct {
	_         struct{} `openapi:"strict"`
	Overwrite bool     `json:"overwrite,omitempty"`
}

// DraftRequest is the optional body of POST
// /incident-comms/incidents/{id}/status-updates.
type DraftRequest struct {
	_        struct{} `openapi:"strict"`
	Phase    string   `json:"phase,omitempty" openapi:"enum=@draftPhases"`
	Guidance string   `json:"guidance,omitempty" openapi:"max=1000"`
}

// DraftEdit is the body of PATCH /incident-comms/status-updates/{draftId}:
// body, phase or both.
type DraftEdit struct {
	_     struct{} `openapi:"strict"`
	Body  *string  `json:"body,omitempty" openapi:"nonnull,max=5000"`
	Phase *string  `json:"phase,omitempty" openapi:"nonnull,enum=@draftPhases"`
}
