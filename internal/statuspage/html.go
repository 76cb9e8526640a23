package statuspage

import (
	"bytes"
	"crypto/rand"
	"embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

//go:embed templates/*.tmpl templates/*.css templates/*.js
var templateFS embed.FS

var pageTemplates = template.Must(template.New("").Funcs(template.FuncMap{
	"overallLabel": func(o Overall) string { return overallLabels[o] },
	"stateLabel":   stateLabel,
	"percent":      formatPercent,
	"ms":           func(v *float64) string { return strconv.FormatFloat(*v, 'f', 0, 64) },
	"when":         func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") },
	"iso":          func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"docTitle":     docTitle,
}).ParseFS(templateFS, "templates/*.tmpl"))

// Inline assets: the page loads nothing from elsewhere.
var (
	pageCSS    = template.CSS(mustRead("templates/page.css"))
	pageScript = template.JS(mustRead("templates/refresh.js"))
	// defaultFavicon is an inline SVG dot, so browsers do not request one.
	defaultFavicon = template.URL("data:image/svg+xml," + url.PathEscape(
		`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><circle cx="8" cy="8" r="7" fill="#1a7f37"/></svg>`))
	hexColor = regexp.MustCompile(`^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$`)
)

// docTitle is the browser tab title of a page named title: "<title>
// status", unless the title already says so ("Shop status", "Acme Status").
func docTitle(title string) string {
	if strings.HasSuffix(strings.ToLower(strings.TrimSpace(title)), "status") {
		return title
	}
	return title + " status"
}

func mustRead(name string) string {
	b, err := templateFS.ReadFile(name)
	if err != nil {
		panic(err)
	}
	return string(b)
}

var monitorLabels = map[string]string{
	"up":          "Operational",
	"degraded":    "Degraded performance",
	"down":        "Outage",
	"maintenance": "Maintenance",
	"paused":      "Paused",
	"unknown":     "Unknown",
}

func stateLabel(s string) string {
	if l, ok := monitorLabels[s]; ok {
		return l
	}
	return monitorLabels["unknown"]
}

func formatPercent(v *float64) string {
	if v == nil {
		return "no data"
	}
	return strconv.FormatFloat(*v, 'f', 2, 64) + "%"
}

// htmlPage is the data of templates/page.html.tmpl.
type htmlPage struct {
	Doc          Document
	Nonce        string
	CSS          template.CSS
	Script       template.JS
	Accent       template.CSS
	Favicon      template.URL
	FaviconURL   string
	JSONURL      string
	FeedURL      string
	SubscribeURL string
	Private      bool
	// LogoutURL signs a private page's visitor out; SignedInAs names the
	// sso user.
	LogoutURL    string
	SignedInAs   string
	Sections     []htmlSection
	IncidentIDs  string
	LangLinks    []langLink
	LabelsJSON   string
	GeneratedISO string
}

type htmlSection struct {
	Name     string
	Status   Overall
	Monitors []htmlMonitor
}

type htmlMonitor struct {
	PublicMonitor
	Bars      []bar
	BarsWidth int
	BarsLabel string
	From, To  string
	Spark     *sparkline
}

type bar struct {
	X     int
	Color string
	Tip   string
}

type sparkline struct {
	Points string
	Label  string
}

type langLink struct {
	Tag     string
	Href    string
	Current bool
}

// ServeHTML serves the server-rendered page at /s/:slug. Private pages
// without a session get the sign-in form (401).
func (p *Public) ServeHTML(w http.ResponseWriter, r *http.Request, slug string) {
	page, ok := p.readPage(w, r, slug)
	if !ok {
		return
	}
	if !p.authorized(r, page) {
		if accessMode(page) == monv1.AccessSSO {
			p.startSSO(w, r, page, "")
			return
		}
		p.renderLogin(w, r, page, http.StatusUnauthorized, false)
		return
	}
	snap, err := p.snapshot(r.Context(), page)
	if err != nil {
		p.internalError(w, r, err)
		return
	}
	lang := pickLanguage(r, page)
	data := p.htmlData(page, snap, snap.doc.localized(page, lang))
	if data.Private {
		data.LogoutURL = "/s/" + Slug(page) + "/logout"
		if s, ok := p.readSession(r, page); ok {
			data.SignedInAs = s.Who
		}
	}
	p.render(w, r, "page.html.tmpl", http.StatusOK, data, accessMode(page) != monv1.AccessPublic)
}

func (p *Public) htmlData(page *monv1.StatusPage, snap *snapshot, doc Document) *htmlPage {
	slug := Slug(page)
	d := &htmlPage{
		Doc:          doc,
		CSS:          pageCSS,
		Script:       pageScript,
		Accent:       "#0969da",
		Favicon:      defaultFavicon,
		JSONURL:      "/status/" + slug,
		FeedURL:      "/status/" + slug + "/feed.xml",
		Private:      accessMode(page) != monv1.AccessPublic,
		GeneratedISO: doc.UpdatedAt.UTC().Format(time.RFC3339),
	}
	if doc.AccentColor != nil && hexColor.MatchString(*doc.AccentColor) {
		d.Accent = template.CSS(*doc.AccentColor)
	}
	if p.Notifier != nil && p.Notifier.Mailer != nil {
		d.SubscribeURL = "/s/" + slug + "/subscribe"
	}
	if doc.FaviconURL != nil {
		d.FaviconURL = *doc.FaviconURL
	}
	labels, _ := json.Marshal(map[string]any{"monitor": monitorLabels, "overall": overallLabels})
	d.LabelsJSON = string(labels)
	var ids []string
	for _, inc := range doc.ActiveIncidents {
		ids = append(ids, inc.ID)
	}
	d.IncidentIDs = strings.Join(ids, ",")
	if len(doc.Languages) > 1 {
		for _, l := range doc.Languages {
			d.LangLinks = append(d.LangLinks, langLink{Tag: l, Href: "?lang=" + url.QueryEscape(l), Current: l == doc.Language})
		}
	}
	for _, s := range doc.Sections {
		hs := htmlSection{Name: s.Name, Status: s.Status}
		for _, m := range s.Monitors {
			hs.Monitors = append(hs.Monitors, monitorHTML(m, snap.daily[m.ID], doc.ShowResponseTimes))
		}
		d.Sections = append(d.Sections, hs)
	}
	return d
}

// Uptime bar geometry: one bar per day.
const (
	barStep  = 4
	barWidth = 3
)

func monitorHTML(m PublicMonitor, days []DayUptime, showRT bool) htmlMonitor {
	h := htmlMonitor{PublicMonitor: m, BarsWidth: max(1, len(days)*barStep-1)}
	for i, d := range days {
		tip := d.Date + ": no data"
		if d.UptimePercentage != nil {
			tip = d.Date + ": " + formatPercent(d.UptimePercentage) + " uptime"
		}
		h.Bars = append(h.Bars, bar{X: i * barStep, Color: uptimeColor(d.UptimePercentage), Tip: tip})
	}
	if len(days) > 0 {
		h.From, h.To = days[0].Date, days[len(days)-1].Date
	}
	h.BarsLabel = fmt.Sprintf("Daily uptime of %s, last %d days: %s overall", m.Name, len(days), formatPercent(m.Uptime90d))
	if showRT {
		h.Spark = spark(m)
	}
	return h
}

// uptimeColor colours a day's bar: green from 99.5%, amber from 98%, orange
// from 95%, red below, grey without data.
func uptimeColor(v *float64) string {
	switch {
	case v == nil:
		return "#8c959f"
	case *v >= 99.5:
		return "#1a7f37"
	case *v >= 98:
		return "#9a6700"
	case *v >= 95:
		return "#bc4c00"
	}
	return "#cf222e"
}

// Sparkline geometry.
const (
	sparkWidth  = 120
	sparkHeight = 30
)

func spark(m PublicMonitor) *sparkline {
	pts := m.ResponseTimes
	if len(pts) < 2 {
		return nil
	}
	lo, hi := pts[0].AvgMs, pts[0].AvgMs
	for _, p := range pts {
		lo, hi = min(lo, p.AvgMs), max(hi, p.AvgMs)
	}
	span := hi - lo
	if span == 0 {
		span = 1
	}
	var b strings.Builder
	for i, p := range pts {
		x := float64(i) * sparkWidth / float64(len(pts)-1)
		y := float64(sparkHeight-2) - (p.AvgMs-lo)/span*float64(sparkHeight-4)
		fmt.Fprintf(&b, "%.1f,%.1f ", x, y)
	}
	label := fmt.Sprintf("Response time of %s over the last 24 hours: %.0f to %.0f ms", m.Name, lo, hi)
	if m.AvgResponseTimeMs24h != nil {
		label += fmt.Sprintf(", average %.0f ms", *m.AvgResponseTimeMs24h)
	}
	return &sparkline{Points: strings.TrimSpace(b.String()), Label: label}
}

// loginPage is the data of templates/login.html.tmpl.
type loginPage struct {
	Title   string
	Action  string
	Failed  bool
	Nonce   string
	CSS     template.CSS
	Accent  template.CSS
	Favicon template.URL
}

// renderLogin writes the sign-in form of a private page.
func (p *Public) renderLogin(w http.ResponseWriter, r *http.Request, page *monv1.StatusPage, code int, failed bool) {
	d := &loginPage{
		Title:   page.Spec.Title,
		Action:  "/s/" + Slug(page) + "/login",
		Failed:  failed,
		CSS:     pageCSS,
		Accent:  "#0969da",
		Favicon: defaultFavicon,
	}
	if hexColor.MatchString(page.Spec.AccentColor) {
		d.Accent = template.CSS(page.Spec.AccentColor)
	}
	p.render(w, r, "login.html.tmpl", code, d, true)
}

// render executes a template with a fresh CSP nonce and security headers.
func (p *Public) render(w http.ResponseWriter, r *http.Request, name string, code int, data any, private bool) {
	nonce := newNonce()
	switch d := data.(type) {
	case *htmlPage:
		d.Nonce = nonce
	case *loginPage:
		d.Nonce = nonce
	case *messagePage:
		d.Nonce = nonce
	}
	var buf bytes.Buffer
	if err := pageTemplates.ExecuteTemplate(&buf, name, data); err != nil {
		p.internalError(w, r, fmt.Errorf("render %s: %w", name, err))
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'nonce-"+nonce+"'; script-src 'nonce-"+nonce+
		"'; img-src 'self' https: data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'self'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "strict-origin-when-cross-origin")
	if private {
		h.Set("Cache-Control", "private, no-store")
	} else {
		h.Set("Cache-Control", "no-cache")
	}
	h.Add("Vary", "Accept-Language")
	w.WriteHeader(code)
	if r.Method != http.MethodHead {
		_, _ = w.Write(buf.Bytes())
	}
}

func newNonce() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return base64.RawStdEncoding.EncodeToString(b)
}
