package restapi

import "time"

// StatusPage is the status page object of GET /status/pages/me,
// GET /status/pages/:id and the status page writes.
type StatusPage struct {
	ID                string        `json:"id" openapi:"format=uuid"`
	Title             string        `json:"title"`
	Description       *string       `json:"description"`
	Slug              string        `json:"slug"`
	IsPublic          bool          `json:"is_public"`
	CustomDomain      *string       `json:"custom_domain"` // Set with PUT /status/pages/:id/domain (owner only).
	LogoURL           *string       `json:"logo_url" openapi:"format=uri"`
	FaviconURL        *string       `json:"favicon_url" openapi:"format=uri"`
	AccentColor       *string       `json:"accent_color"`
	HidePoweredBy     bool          `json:"hide_powered_by"`
	ShowResponseTimes bool          `json:"show_response_times"`
	URL               string        `json:"url" openapi:"format=uri"`
	OverallStatus     *string       `json:"overall_status"`
	Monitors          []PageMonitor `json:"monitors"`
	CreatedAt         string        `json:"created_at" openapi:"format=date-time"`
}

// PageMonitor is one monitor of a status page, in page order.
type PageMonitor struct {
	MonitorID     string  `json:"monitor_id" openapi:"format=uuid"`
	Name          string  `json:"name"`
	Section       *string `json:"section"`
	CurrentStatus string  `json:"current_status"`
}

// PublicService is a third-party service as a public status page shows it
// (third_party_services): package statuspage serves it, package thirdparty
// fills it from the poller's state.
type PublicService struct {
	Name string `json:"name"`
	// Status is up, degraded, down, maintenance or unknown (no recent
	// successful poll of the provider).
	Status string `json:"status"`
	// URL is the provider's own status page.
	URL string `json:"url"`
	// Components are the provider components chosen for the page.
	Components []PublicServiceComponent `json:"components"`
	// Incidents are the provider's open incidents that affect the service.
	Incidents []PublicServiceIncident `json:"incidents,omitempty"`
}

// PublicServiceComponent is one chosen component of a third-party service.
type PublicServiceComponent struct {
	Name   string `json:"name"`
	Status string `json:"status"`
}

// PublicServiceIncident is an open incident of a third-party service.
type PublicServiceIncident struct {
	Name string `json:"name"`
	URL  string `json:"url,omitempty"`
}

// PageAccessState is who can view a status page (GET and PUT
// /status/pages/:id/access, POST …/access/revoke-sessions). The password
// itself is never shown.
type PageAccessState struct {
	Mode              string  `json:"mode" openapi:"enum=public|password|sso"`
	IsPublic          bool    `json:"is_public"`
	HasPassword       bool    `json:"has_password"`
	SessionsRevokedAt *string `json:"sessions_revoked_at" openapi:"format=date-time"` // Visitors signed in before are signed out.
	// SSO is who may view the page in sso mode (null otherwise); an
	// extension of the specification.
	SSO *PageAccessSSO `json:"sso"`
}

// PageDomainState is a status page's custom domain: the answer of PUT
// /status/pages/{id}/domain.
type PageDomainState struct {
	Domain *string `json:"domain"` // Null when the page has none.
}

// Languages are the languages of a status page and its translations.
type Languages struct {
	Default      string        `json:"default"`
	Enabled      []string      `json:"enabled"`
	Translations []Translation `json:"translations"`
}

// Translation is the title and description of a status page in one
// language.
type Translation struct {
	Language    string `json:"language"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
}

// PageSubscriber is a subscriber of a status page. Chat and webhook
// addresses are shortened: they are credentials of the subscriber.
type PageSubscriber struct {
	ID          string     `json:"id"`
	Address     string     `json:"address"`
	Confirmed   bool       `json:"confirmed"`
	CreatedAt   time.Time  `json:"created_at"`
	ConfirmedAt *time.Time `json:"confirmed_at"`
}

// PageSubscribers is GET /status/pages/{id}/subscribers: a page's
// subscribers by channel, pending ones included, and their number.
type PageSubscribers struct {
	Email   []PageSubscriber `json:"email"`
	Chat    []PageSubscriber `json:"chat"`
	Webhook []PageSubscriber `json:"webhook"`
	Total   int              `json:"total"`
}

// NoPageSubscribers is the answer for a page nobody subscribed to.
func NoPageSubscribers() PageSubscribers {
	return PageSubscribers{Email: []PageSubscriber{}, Chat: []PageSubscriber{}, Webhook: []PageSubscriber{}}
}
