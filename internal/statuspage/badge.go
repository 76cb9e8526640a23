package statuspage

import (
	"bytes"
	"fmt"
	"html/template"
	"net/http"
	"strconv"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

// overallLabels are the human texts of the overall states.
var overallLabels = map[Overall]string{
	Operational:   "All systems operational",
	Degraded:      "Degraded performance",
	PartialOutage: "Partial outage",
	MajorOutage:   "Major outage",
	Maintenance:   "Under maintenance",
}

// shortLabels are the badge texts of the overall states.
var shortLabels = map[Overall]string{
	Operational:   "operational",
	Degraded:      "degraded",
	PartialOutage: "partial outage",
	MajorOutage:   "major outage",
	Maintenance:   "maintenance",
}

// badgeColors are the colours of the overall states; each has a contrast of
// at least 4.5:1 with white text (the page's CSS uses the same ones).
var badgeColors = map[Overall]string{
	Operational:   "#1a7f37",
	Degraded:      "#9a6700",
	PartialOutage: "#bc4c00",
	MajorOutage:   "#cf222e",
	Maintenance:   "#0969da",
}

var badgeTemplate = template.Must(template.New("badge").Parse(
	`<svg xmlns="http://www.w3.org/2000/svg" width="{{.Width}}" height="20" role="img" aria-label="{{.Label}}: {{.Value}}">` +
		`<title>{{.Label}}: {{.Value}}</title>` +
		`<linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" stop-opacity=".1"/><stop offset="1" stop-opacity=".1"/></linearGradient>` +
		`<clipPath id="r"><rect width="{{.Width}}" height="20" rx="3" fill="#fff"/></clipPath>` +
		`<g clip-path="url(#r)"><rect width="{{.LeftWidth}}" height="20" fill="#555"/><rect x="{{.LeftWidth}}" width="{{.RightWidth}}" height="20" fill="{{.Color}}"/><rect width="{{.Width}}" height="20" fill="url(#s)"/></g>` +
		`<g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" font-size="11" aria-hidden="true">` +
		`<text x="{{.LeftMid}}" y="14">{{.Label}}</text><text x="{{.RightMid}}" y="14">{{.Value}}</text></g></svg>`))

// badgeData is the content of a badge.
type badgeData struct {
	Label, Value, Color                             string
	Width, LeftWidth, RightWidth, LeftMid, RightMid int
}

// textWidth estimates the width of Verdana 11px text.
func textWidth(s string) int {
	return len([]rune(s))*7 + 10
}

// Badge renders the SVG badge of a state and an uptime percentage (nil when
// unknown).
func Badge(label string, state Overall, uptime *float64) []byte {
	value := shortLabels[state]
	if uptime != nil {
		value += " · " + strconv.FormatFloat(*uptime, 'f', 2, 64) + "%"
	}
	d := badgeData{Label: label, Value: value, Color: badgeColors[state]}
	d.LeftWidth, d.RightWidth = textWidth(label), textWidth(value)
	d.Width = d.LeftWidth + d.RightWidth
	d.LeftMid, d.RightMid = d.LeftWidth/2, d.LeftWidth+d.RightWidth/2
	var buf bytes.Buffer
	if err := badgeTemplate.Execute(&buf, d); err != nil {
		panic(fmt.Sprintf("statuspage: render badge: %v", err)) // static template and data
	}
	return buf.Bytes()
}

// serveBadge writes GET /status/:slug/badge.svg: the overall state and the
// mean 30-day uptime of the page's monitors.
func (p *Public) serveBadge(w http.ResponseWriter, r *http.Request, page *monv1.StatusPage, private bool) {
	snap, err := p.snapshot(r.Context(), page)
	if err != nil {
		p.internalError(w, r, err)
		return
	}
	svg, etag := snap.badge, snap.badgeETag
	h := w.Header()
	if private {
		h.Set("Cache-Control", "private, max-age=60")
	} else {
		h.Set("Cache-Control", "public, max-age=60")
	}
	h.Set("ETag", etag)
	if match := r.Header.Get("If-None-Match"); match != "" && etagMatch(match, etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", "image/svg+xml; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(svg)
	}
}

// etagMatch reports whether an If-None-Match header lists etag (or is *).
func etagMatch(header, etag string) bool {
	for _, part := range bytes.Split([]byte(header), []byte(",")) {
		t := string(bytes.TrimSpace(part))
		if t == "*" || t == etag || t == "W/"+etag {
			return true
		}
	}
	return false
}

// meanUptime30d is the mean 30-day uptime of the monitors that have one.
func meanUptime30d(d *Document) *float64 {
	var sum float64
	n := 0
	for _, s := range d.Sections {
		for _, m := range s.Monitors {
			if m.Uptime30d != nil {
				sum += *m.Uptime30d
				n++
			}
		}
	}
	if n == 0 {
		return nil
	}
	v := sum / float64(n)
	return &v
}
