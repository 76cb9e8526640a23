package restapi

// StatusPage is the status page object of GET /status/pages/me,
// GET /status/pages/:id and the status page writes.
type StatusPage struct {
	ID                string        `json:"id"`
	Title             string        `json:"title"`
	Description       *string       `json:"description"`
	Slug              string        `json:"slug"`
	IsPublic          bool          `json:"is_public"`
	CustomDomain      *string       `json:"custom_domain"`
	LogoURL           *string       `json:"logo_url"`
	FaviconURL        *string       `json:"favicon_url"`
	AccentColor       *string       `json:"accent_color"`
	HidePoweredBy     bool          `json:"hide_powered_by"`
	ShowResponseTimes bool          `json:"show_response_times"`
	URL               string        `json:"url"`
	OverallStatus     *string       `json:"overall_status"`
	Monitors          []PageMonitor `json:"monitors"`
	CreatedAt         string        `json:"created_at"`
}

// PageMonitor is one monitor of a status page, in page order.
type PageMonitor struct {
	MonitorID     string  `json:"monitor_id"`
	Name          string  `json:"name"`
	Section       *string `json:"section"`
	CurrentStatus string  `json:"current_status"`
}
