package v1alpha1

// ChannelSecretRef is one Secret reference of an AlertChannel spec.
// +kubebuilder:object:generate=false
type ChannelSecretRef struct {
	// Field is the spec field that holds it (webhookURLFrom, ...).
	Field string
	// Ref is the Secret key it names.
	Ref SecretKeySelector
}

// SecretRefs lists every Secret key s reads, with its field: the one list
// the controller (which checks they exist and may be read) and admission
// (which refuses one the channel may not read) both go by, so a new
// reference field cannot be checked by one and forgotten by the other.
func (s *AlertChannelSpec) SecretRefs() []ChannelSecretRef {
	var out []ChannelSecretRef
	for _, r := range []struct {
		field string
		sel   *SecretKeySelector
	}{
		{"webhookURLFrom", s.WebhookURLFrom}, {"integrationKeyFrom", s.IntegrationKeyFrom},
		{"apiKeyFrom", s.APIKeyFrom}, {"botTokenFrom", s.BotTokenFrom}, {"tokenFrom", s.TokenFrom},
		{"signingSecretRef", s.SigningSecretRef},
	} {
		if r.sel != nil {
			out = append(out, ChannelSecretRef{Field: r.field, Ref: *r.sel})
		}
	}
	return out
}
