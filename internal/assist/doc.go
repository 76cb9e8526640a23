// Package assist is the AI incident assist: incident summaries, postmortem
// drafts and status-update drafts written by a language model behind an
// OpenAI-compatible chat-completions endpoint that the cluster admin
// configures (URL, model, API key). Without a configured model every feature
// reports itself unavailable.
//
// Incident data is data, never instructions. The system prompt says so; the
// incident's fields, notes and timeline travel as one JSON document inside a
// delimited block of the user message, JSON-encoded with HTML escaping so no
// text of the incident can contain the block's closing delimiter; and the
// reply is used only as text for a person to review: summaries and
// postmortems are saved on the incident, status updates stay drafts until
// someone publishes them.
//
// Every generation counts toward a monthly allowance per workspace, kept in
// the store and reserved before the model is called (and given back when the
// call fails), so concurrent requests cannot overrun it.
package assist
