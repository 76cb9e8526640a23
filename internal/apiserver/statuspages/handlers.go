package statuspages

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/httpjson"
	"github.com/uptime-operator/uptime-operator/internal/plans"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
	"github.com/uptime-operator/uptime-operator/internal/statuspage"
)

// Status page REST endpoints (/status/pages/...) map onto StatusPage CRs.

func (h *Handlers) pageObject(p *monv1.StatusPage, monitors []monv1.Monitor) restapi.StatusPage {
	out := restapi.StatusPage{ID: string(p.UID), Title: p.Spec.Title, Description: core.StrPtr(p.Spec.Description), Slug: p.Spec.Slug,
		IsPublic: p.Spec.IsPublic, CustomDomain: core.StrPtr(p.Spec.CustomDomain), LogoURL: core.StrPtr(p.Spec.LogoURL), FaviconURL: core.StrPtr(p.Spec.FaviconURL), AccentColor: core.StrPtr(p.Spec.AccentColor),
		HidePoweredBy: p.Spec.HidePoweredBy, ShowResponseTimes: p.Spec.ShowResponseTimes,
		URL: strings.TrimSuffix(h.publicURL, "/") + "/s/" + p.Spec.Slug, OverallStatus: core.StrPtr(p.Status.OverallStatus),
		Monitors: []restapi.PageMonitor{}, CreatedAt: core.ISOTime(p.CreationTimestamp.Time)}
	if out.Slug == "" {
		out.Slug = p.Name
	}
	byName := map[string]*monv1.Monitor{}
	for i := range monitors {
		byName[monitors[i].Name] = &monitors[i]
	}
	entries, _ := statuspage.Join(p, monitors)
	for _, pm := range entries {
		m := byName[pm.MonitorRef.Name]
		if m == nil {
			continue
		}
		st := string(m.Status.CurrentStatus)
		if m.Spec.Paused {
			st = string(monv1.StatusPaused)
		} else if st == "" {
			st = string(monv1.StatusPending)
		}
		name := m.Spec.Name
		if pm.DisplayName != "" {
			name = pm.DisplayName
		}
		out.Monitors = append(out.Monitors, restapi.PageMonitor{MonitorID: string(m.UID), Name: name, Section: core.StrPtr(pm.Section), CurrentStatus: st})
	}
	return out
}

func (h *Handlers) listPages(w http.ResponseWriter, r *http.Request) {
	var list monv1.StatusPageList
	if err := h.d.List(r.Context(), &list, core.CallerFrom(r.Context()).Namespace); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	monitors, err := h.d.NamespaceMonitors(r)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	monitorID := chi.URLParam(r, "monitorId")
	out := []restapi.StatusPage{}
	for i := range list.Items {
		p := &list.Items[i]
		if p.DeletionTimestamp != nil {
			continue
		}
		o := h.pageObject(p, monitors)
		if monitorID != "" && !slices.ContainsFunc(o.Monitors, func(m restapi.PageMonitor) bool { return m.MonitorID == monitorID }) {
			continue
		}
		out = append(out, o)
	}
	slices.SortFunc(out, func(a, b restapi.StatusPage) int { return strings.Compare(a.CreatedAt, b.CreatedAt) })
	httpjson.Write(w, http.StatusOK, out)
}

func (h *Handlers) pathPage(w http.ResponseWriter, r *http.Request) *monv1.StatusPage {
	return core.PathObject[*monv1.StatusPage](h.d, w, r, &monv1.StatusPageList{}, "id", "Status page")
}

func (h *Handlers) writePage(w http.ResponseWriter, r *http.Request, p *monv1.StatusPage, code int) {
	monitors, err := h.d.NamespaceMonitors(r)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	httpjson.Write(w, code, h.pageObject(p, monitors))
}

func (h *Handlers) getPage(w http.ResponseWriter, r *http.Request) {
	if p := h.pathPage(w, r); p != nil {
		h.writePage(w, r, p, http.StatusOK)
	}
}

// applyPageBody writes b onto p, refusing white-label settings the plan
// lacks with 403 WHITE_LABEL_NOT_ENTITLED.
func applyPageBody(p *monv1.StatusPage, b *restapi.StatusPageUpdate, plan *monv1.Plan) error {
	var errs []core.FieldError
	sp := &p.Spec
	if b.Title.Set {
		sp.Title = strings.TrimSpace(b.Title.Value())
		if len(sp.Title) < 1 || len(sp.Title) > 255 {
			errs = append(errs, core.FieldErr("title", "must be 1-255 characters"))
		}
	}
	if b.Description.Set {
		sp.Description = b.Description.Value()
		if len(sp.Description) > 1000 {
			errs = append(errs, core.FieldErr("description", "must be at most 1000 characters"))
		}
	}
	if b.Slug.Set {
		sp.Slug = strings.ToLower(strings.TrimSpace(b.Slug.Value()))
		if n := len(sp.Slug); n < 3 || n > 64 || !slugPattern(sp.Slug) {
			errs = append(errs, core.FieldErr("slug", "must be 3-64 lower-case letters, digits and dashes"))
		}
	}
	if b.IsPublic.Set {
		sp.IsPublic = b.IsPublic.Value()
	}
	if b.ShowResponseTimes.Set {
		sp.ShowResponseTimes = b.ShowResponseTimes.Value()
	}
	for _, f := range []struct {
		name string
		v    core.Nullable[string]
		dst  *string
	}{{"logo_url", b.LogoURL, &sp.LogoURL}, {"favicon_url", b.FaviconURL, &sp.FaviconURL}} {
		if !f.v.Set {
			continue
		}
		*f.dst = strings.TrimSpace(f.v.Value())
		if *f.dst != "" && !strings.HasPrefix(*f.dst, "https://") {
			errs = append(errs, core.FieldErr(f.name, "must be an https URL, or empty to clear"))
		}
	}
	if b.AccentColor.Set {
		sp.AccentColor = b.AccentColor.Value()
		if sp.AccentColor != "" && !hexColor(sp.AccentColor) {
			errs = append(errs, core.FieldErr("accent_color", "must be a hex colour such as #1f6feb, or empty to clear"))
		}
	}
	if b.HidePoweredBy.Set {
		sp.HidePoweredBy = b.HidePoweredBy.Value()
	}
	if len(errs) > 0 {
		return core.ValidationError(errs...)
	}
	if !plans.HasFeature(plan, monv1.FeatureWhiteLabel) {
		if b.HidePoweredBy.Set && sp.HidePoweredBy {
			return core.NewError(http.StatusForbidden, core.CodeWhiteLabel, "hide_powered_by needs a plan with white-label")
		}
		if b.FaviconURL.Set && sp.FaviconURL != "" {
			return core.NewError(http.StatusForbidden, core.CodeWhiteLabel, "favicon_url needs a plan with white-label")
		}
	}
	return nil
}

func slugPattern(s string) bool {
	for i, r := range s {
		ok := (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || (r == '-' && i > 0 && i < len(s)-1)
		if !ok {
			return false
		}
	}
	return true
}

func hexColor(s string) bool {
	if len(s) != 4 && len(s) != 7 || s[0] != '#' {
		return false
	}
	for _, r := range s[1:] {
		if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
			return false
		}
	}
	return true
}

func (h *Handlers) createPage(w http.ResponseWriter, r *http.Request) {
	ctx, c := r.Context(), core.CallerFrom(r.Context())
	var create restapi.StatusPageCreate
	if err := core.DecodeJSON(r, &create, false); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	b := restapi.StatusPageUpdate(create)
	if !b.Title.Set {
		core.WriteValidation(w, core.FieldErr("title", "is required"))
		return
	}
	plan, err := h.d.Plans.ForNamespace(ctx, c.Namespace)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	p := &monv1.StatusPage{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace}}
	if err := applyPageBody(p, &b, plan); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	// The slug is cluster-wide; a random suffix keeps titles reusable.
	base := strings.TrimSuffix(core.ObjectNamePrefix(p.Spec.Title, "page"), "-")
	userSlug := p.Spec.Slug
	for attempt := 0; ; attempt++ {
		p.Name = base + "-" + rand.String(5)
		if userSlug == "" {
			p.Spec.Slug = p.Name
		}
		err = h.d.Client.Create(ctx, p)
		if err == nil || attempt == 3 || (!apierrors.IsAlreadyExists(err) && !(userSlug == "" && isDuplicateSlug(err))) {
			break
		}
	}
	if err != nil {
		core.WriteErr(w, r, h.d.WriteFailed(ctx, c.Namespace, err, pageFieldPath))
		return
	}
	h.writePage(w, r, p, http.StatusCreated)
}

func isDuplicateSlug(err error) bool {
	return apierrors.IsInvalid(err) && strings.Contains(err.Error(), "spec.slug") && strings.Contains(err.Error(), "Duplicate")
}

// pageFieldPath maps StatusPage field paths to the REST names.
func pageFieldPath(p string) string {
	switch p = core.SnakePath(p); p {
	case "logo_u_r_l", "logo_url":
		return "logo_url"
	case "favicon_u_r_l", "favicon_url":
		return "favicon_url"
	}
	if strings.HasPrefix(p, "monitors") {
		return "monitors"
	}
	return p
}

func (h *Handlers) updatePage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	p := h.pathPage(w, r)
	if p == nil {
		return
	}
	var b restapi.StatusPageUpdate
	if err := core.DecodeJSON(r, &b, true); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	plan, err := h.d.Plans.ForNamespace(ctx, p.Namespace)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	if err := h.d.Mutate(ctx, p, func() error { return applyPageBody(p, &b, plan) }); err != nil {
		core.WriteErr(w, r, h.d.WriteFailed(ctx, p.Namespace, err, pageFieldPath))
		return
	}
	h.writePage(w, r, p, http.StatusOK)
}

func (h *Handlers) deletePage(w http.ResponseWriter, r *http.Request) {
	p := h.pathPage(w, r)
	if p == nil {
		return
	}
	if err := h.d.DeleteObject(r.Context(), p); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// pageMonitorBody is a monitor entry of the page's monitors in either
// spelling of the monitor's id: the document declares monitor_id for PUT
// (restapi.PageMonitorEntry) and monitorId for POST
// (restapi.PageMonitorAdd), and both bodies accept both.
type pageMonitorBody struct {
	restapi.PageMonitorEntry
	AltMonitorID string `json:"monitorId"`
}

// pageMonitorAddBody is the body of POST /status/pages/{id}/monitors in
// either spelling.
type pageMonitorAddBody struct {
	restapi.PageMonitorAdd
	AltMonitorID string `json:"monitor_id"`
}

func (b pageMonitorBody) id() string {
	if b.MonitorID != "" {
		return b.MonitorID
	}
	return b.AltMonitorID
}

// maxPageMonitors is the most monitors a status page shows
// (docs/rest-api.md, Limits).
const maxPageMonitors = 500

// pageEntries resolves monitor ids to page entries with one lookup of all
// ids (core.Deps.ResolveIDs). Callers refuse an over-limit list first.
func (h *Handlers) pageEntries(ctx context.Context, ns string, in []pageMonitorBody) ([]monv1.StatusPageMonitor, error) {
	ids := make([]string, len(in))
	for i, e := range in {
		ids[i] = e.id()
	}
	found, err := h.d.ResolveIDs(ctx, &monv1.MonitorList{}, ns, ids)
	if err != nil {
		return nil, err
	}
	var errs []core.FieldError
	var out []monv1.StatusPageMonitor
	seen := map[string]bool{}
	for i, e := range in {
		f := "monitors[" + strconv.Itoa(i) + "]"
		if e.Section != nil && len(*e.Section) > 100 {
			errs = append(errs, core.FieldErr(f+".section", "must be at most 100 characters"))
		}
		m, ok := found[e.id()]
		if !ok {
			errs = append(errs, core.FieldErr(f+".monitor_id", "monitor not found"))
			continue
		}
		if seen[m.GetName()] {
			errs = append(errs, core.FieldErr(f+".monitor_id", "is listed twice"))
			continue
		}
		seen[m.GetName()] = true
		entry := monv1.StatusPageMonitor{MonitorRef: monv1.LocalObjectReference{Name: m.GetName()}}
		if e.Section != nil {
			entry.Section = *e.Section
		}
		out = append(out, entry)
	}
	if len(errs) > 0 {
		return nil, core.ValidationError(errs...)
	}
	return out, nil
}

func (h *Handlers) putPageMonitors(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	var b struct {
		Monitors []pageMonitorBody `json:"monitors"` // restapi.PageMonitors, in either spelling
	}
	if err := core.DecodeJSON(r, &b, false); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	// An over-limit list is refused before anything is looked up.
	if ae := core.TooManyIDs("monitors", len(b.Monitors), maxPageMonitors, "monitors"); ae != nil {
		core.WriteErr(w, r, ae)
		return
	}
	p := h.pathPage(w, r)
	if p == nil {
		return
	}
	entries, err := h.pageEntries(ctx, p.Namespace, b.Monitors)
	if err == nil {
		err = h.d.Mutate(ctx, p, func() error { p.Spec.Monitors = entries; return nil })
	}
	if err != nil {
		core.WriteErr(w, r, h.d.WriteFailed(ctx, p.Namespace, err, pageFieldPath))
		return
	}
	h.writePage(w, r, p, http.StatusOK)
}

func (h *Handlers) addPageMonitor(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	p := h.pathPage(w, r)
	if p == nil {
		return
	}
	var add pageMonitorAddBody
	if err := core.DecodeJSON(r, &add, false); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	b := pageMonitorBody{PageMonitorEntry: restapi.PageMonitorEntry{MonitorID: add.MonitorID, Section: add.Section}, AltMonitorID: add.AltMonitorID}
	if b.id() == "" {
		core.WriteValidation(w, core.FieldErr("monitorId", "is required"))
		return
	}
	entries, err := h.pageEntries(ctx, p.Namespace, []pageMonitorBody{b})
	if err == nil {
		err = h.d.Mutate(ctx, p, func() error {
			i := slices.IndexFunc(p.Spec.Monitors, func(e monv1.StatusPageMonitor) bool { return e.MonitorRef.Name == entries[0].MonitorRef.Name })
			if i >= 0 {
				p.Spec.Monitors[i].Section = entries[0].Section
				return nil
			}
			if len(p.Spec.Monitors) >= maxPageMonitors {
				return core.ValidationError(core.FieldErr("monitors", "a status page shows at most %d monitors", maxPageMonitors))
			}
			p.Spec.Monitors = append(p.Spec.Monitors, entries[0])
			return nil
		})
	}
	if err != nil {
		core.WriteErr(w, r, h.d.WriteFailed(ctx, p.Namespace, err, pageFieldPath))
		return
	}
	h.writePage(w, r, p, http.StatusOK)
}

func (h *Handlers) removePageMonitor(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	p := h.pathPage(w, r)
	if p == nil {
		return
	}
	m, err := h.d.MonitorByID(ctx, p.Namespace, chi.URLParam(r, "monitorId"))
	if err != nil {
		core.WriteNotFound(w, "Monitor")
		return
	}
	err = h.d.Mutate(ctx, p, func() error {
		n := len(p.Spec.Monitors)
		p.Spec.Monitors = slices.DeleteFunc(p.Spec.Monitors, func(e monv1.StatusPageMonitor) bool { return e.MonitorRef.Name == m.Name })
		if n == len(p.Spec.Monitors) {
			return core.ErrNotFound
		}
		return nil
	})
	if errors.Is(err, core.ErrNotFound) && m.Labels[monv1.StatusPageLabel] == p.Name {
		// Shown because the Monitor joins the page by label: the label is
		// the Monitor's (or its MonitorTemplate's) to remove, not the page's.
		core.WriteError(w, http.StatusConflict, core.CodeConflict, fmt.Sprintf(
			"monitor %s joins this page by its label %s; remove the label (or the MonitorTemplate's statusPage) to take it off", m.Name, monv1.StatusPageLabel))
		return
	}
	if errors.Is(err, core.ErrNotFound) {
		core.WriteNotFound(w, "Monitor on this page")
		return
	}
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (h *Handlers) getPageAccess(w http.ResponseWriter, r *http.Request) {
	p := h.pathPage(w, r)
	if p == nil {
		return
	}
	httpjson.Write(w, http.StatusOK, pageAccessObject(p))
}

func (h *Handlers) pageSubscribers(w http.ResponseWriter, r *http.Request) {
	p := h.pathPage(w, r)
	if p == nil {
		return
	}
	if h.subscribers == nil {
		httpjson.Write(w, http.StatusOK, restapi.NoPageSubscribers())
		return
	}
	list, err := h.subscribers.SubscriberList(r.Context(), string(p.UID))
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, list)
}

func languagesOf(p *monv1.StatusPage) restapi.Languages {
	out := restapi.Languages{Default: "en", Enabled: []string{}, Translations: []restapi.Translation{}}
	if l := p.Spec.Languages; l != nil {
		if l.Default != "" {
			out.Default = l.Default
		}
		out.Enabled = core.NonNil(l.Enabled)
		for _, t := range l.Translations {
			out.Translations = append(out.Translations, restapi.Translation{Language: t.Language, Title: t.Title, Description: t.Description})
		}
	}
	return out
}

func (h *Handlers) getPageLanguages(w http.ResponseWriter, r *http.Request) {
	if p := h.pathPage(w, r); p != nil {
		httpjson.Write(w, http.StatusOK, languagesOf(p))
	}
}

func (h *Handlers) putPageLanguages(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	p := h.pathPage(w, r)
	if p == nil {
		return
	}
	var b restapi.LanguagesBody
	if err := core.DecodeJSON(r, &b, true); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	var errs []core.FieldError
	if len(b.Default) > 16 {
		errs = append(errs, core.FieldErr("default", "must be a BCP 47 tag"))
	}
	if len(b.Enabled) > 20 {
		errs = append(errs, core.FieldErr("enabled", "at most 20 languages"))
	}
	if len(b.Translations) > 20 {
		errs = append(errs, core.FieldErr("translations", "at most 20 translations"))
	}
	for i, t := range b.Translations {
		if len(t.Language) < 2 || len(t.Language) > 16 {
			errs = append(errs, core.FieldErr("translations["+strconv.Itoa(i)+"].language", "must be a BCP 47 tag"))
		}
		if len(t.Title) > 255 || len(t.Description) > 1000 {
			errs = append(errs, core.FieldErr("translations["+strconv.Itoa(i)+"]", "title up to 255 and description up to 1000 characters"))
		}
	}
	if len(errs) > 0 {
		core.WriteValidation(w, errs...)
		return
	}
	langs := &monv1.StatusPageLanguages{Default: b.Default, Enabled: b.Enabled}
	for _, t := range b.Translations {
		langs.Translations = append(langs.Translations, monv1.StatusPageTranslation{Language: t.Language, Title: t.Title, Description: t.Description})
	}
	if err := h.d.Mutate(ctx, p, func() error { p.Spec.Languages = langs; return nil }); err != nil {
		core.WriteErr(w, r, h.d.WriteFailed(ctx, p.Namespace, err, core.SnakePath))
		return
	}
	httpjson.Write(w, http.StatusOK, languagesOf(p))
}

func (h *Handlers) pagesOverview(w http.ResponseWriter, r *http.Request) {
	h.listPages(w, r)
}

// pageAccessSuffix names the Secret holding a page's password.
const (
	pageAccessSuffix = "-access"
	pagePasswordKey  = "password"
)

func pageAccessObject(p *monv1.StatusPage) restapi.PageAccessState {
	mode, hasPassword := monv1.AccessPublic, false
	var revoked *string
	if a := p.Spec.Access; a != nil {
		mode, hasPassword, revoked = a.Mode, a.PasswordSecretRef != nil, core.MetaTimePtr(a.SessionsRevokedAt)
	}
	out := restapi.PageAccessState{Mode: string(mode), IsPublic: p.Spec.IsPublic, HasPassword: hasPassword, SessionsRevokedAt: revoked}
	if a := p.Spec.Access; a != nil && a.SSO != nil {
		out.SSO = &restapi.PageAccessSSO{AllowedEmailDomains: core.NonNil(a.SSO.AllowedEmailDomains),
			AllowedEmails: core.NonNil(a.SSO.AllowedEmails), AllowedGroups: core.NonNil(a.SSO.AllowedGroups)}
	}
	return out
}

// validateSSO checks the sso part of PUT /status/pages/:id/access: needed
// (with an entry and a configured provider) for mode sso, refused for the
// others. The formats of its entries are the CRD's, checked on the write.
func (h *Handlers) validateSSO(mode monv1.StatusPageAccessMode, b *restapi.PageAccessSSO) []core.FieldError {
	if mode != monv1.AccessSSO {
		if b != nil {
			return []core.FieldError{core.FieldErr("sso", "is only used with mode sso")}
		}
		return nil
	}
	var errs []core.FieldError
	if h.ssoUnavailable != "" {
		errs = append(errs, core.FieldErr("mode", "%s", h.ssoUnavailable))
	}
	if b == nil || len(b.AllowedEmailDomains)+len(b.AllowedEmails)+len(b.AllowedGroups) == 0 {
		return append(errs, core.FieldErr("sso", "needs at least one of allowed_email_domains, allowed_emails or allowed_groups for sso access"))
	}
	for name, n := range map[string]struct{ got, max int }{
		"sso.allowed_email_domains": {len(b.AllowedEmailDomains), 100},
		"sso.allowed_emails":        {len(b.AllowedEmails), 500},
		"sso.allowed_groups":        {len(b.AllowedGroups), 100},
	} {
		if n.got > n.max {
			errs = append(errs, core.FieldErr(name, "at most %d entries", n.max))
		}
	}
	return errs
}

// putPageAccess sets who may view a page. A password is kept in the Secret
// "<page>-access" (owned by the page); setting a new password or leaving
// password mode signs out every visitor session.
func (h *Handlers) putPageAccess(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	p := h.pathPage(w, r)
	if p == nil {
		return
	}
	var b restapi.PageAccess
	if err := core.DecodeJSON(r, &b, true); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	mode := monv1.StatusPageAccessMode(b.Mode)
	var errs []core.FieldError
	switch mode {
	case monv1.AccessPublic, monv1.AccessPassword, monv1.AccessSSO:
	default:
		errs = append(errs, core.FieldErr("mode", "must be one of public, password, sso"))
	}
	password := ""
	if b.Password.Set && !b.Password.Null {
		password = b.Password.Value()
		if len(password) < 8 || len(password) > 128 {
			errs = append(errs, core.FieldErr("password", "must be 8-128 characters"))
		}
	}
	hadPassword := p.Spec.Access != nil && p.Spec.Access.PasswordSecretRef != nil
	if mode == monv1.AccessPassword && password == "" && !hadPassword {
		errs = append(errs, core.FieldErr("password", "is required for password access"))
	}
	if mode != monv1.AccessPassword && password != "" {
		errs = append(errs, core.FieldErr("password", "is only used with mode password"))
	}
	if len(errs) == 0 {
		errs = h.validateSSO(mode, b.SSO)
	}
	if len(errs) > 0 {
		core.WriteValidation(w, errs...)
		return
	}
	secretName := p.Name + pageAccessSuffix
	if password != "" {
		if err := h.d.PutOwnedSecret(ctx, p, "StatusPage", secretName, map[string]string{pagePasswordKey: password}); err != nil {
			core.WriteErr(w, r, err)
			return
		}
	}
	now := metav1.NewTime(h.d.Clock.Now())
	err := h.d.Mutate(ctx, p, func() error {
		a := p.Spec.Access
		if a == nil {
			a = &monv1.StatusPageAccess{}
		}
		if password != "" || (a.Mode == monv1.AccessPassword && mode != monv1.AccessPassword) {
			a.SessionsRevokedAt = &now
		}
		a.Mode = mode
		a.PasswordSecretRef = nil
		if mode == monv1.AccessPassword {
			a.PasswordSecretRef = &monv1.SecretKeySelector{Name: secretName, Key: pagePasswordKey}
		}
		// New sso rules end the sessions of the old ones by themselves
		// (the session carries the rules' generation).
		a.SSO = nil
		if mode == monv1.AccessSSO {
			a.SSO = &monv1.StatusPageSSO{AllowedEmailDomains: b.SSO.AllowedEmailDomains,
				AllowedEmails: b.SSO.AllowedEmails, AllowedGroups: b.SSO.AllowedGroups}
		}
		p.Spec.Access = a
		if b.IsPublic.Set && !b.IsPublic.Null {
			p.Spec.IsPublic = b.IsPublic.Value()
		}
		return nil
	})
	if err != nil {
		core.WriteErr(w, r, h.d.WriteFailed(ctx, p.Namespace, err, pageFieldPath))
		return
	}
	if mode != monv1.AccessPassword && hadPassword {
		if err := h.d.DeleteOwnedSecret(ctx, p, secretName); err != nil {
			core.LogFrom(ctx).Error(err, "unable to delete a status page password", "page", p.Name)
		}
	}
	httpjson.Write(w, http.StatusOK, pageAccessObject(p))
}

// revokePageSessions signs out every visitor session of a page.
func (h *Handlers) revokePageSessions(w http.ResponseWriter, r *http.Request) {
	p := h.pathPage(w, r)
	if p == nil {
		return
	}
	now := metav1.NewTime(h.d.Clock.Now())
	err := h.d.Mutate(r.Context(), p, func() error {
		if p.Spec.Access == nil {
			p.Spec.Access = &monv1.StatusPageAccess{Mode: monv1.AccessPublic}
		}
		p.Spec.Access.SessionsRevokedAt = &now
		return nil
	})
	if err != nil {
		core.WriteErr(w, r, h.d.WriteFailed(r.Context(), p.Namespace, err, pageFieldPath))
		return
	}
	httpjson.Write(w, http.StatusOK, pageAccessObject(p))
}

var domainRE = regexp.MustCompile(`^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$`)

// putPageDomain sets or (with null or "") removes a page's custom domain.
func (h *Handlers) putPageDomain(w http.ResponseWriter, r *http.Request) {
	p := h.pathPage(w, r)
	if p == nil {
		return
	}
	var b restapi.PageDomain
	if err := core.DecodeJSON(r, &b, true); err != nil {
		core.WriteErr(w, r, err)
		return
	}
	domain := strings.ToLower(strings.TrimSuffix(strings.TrimSpace(b.Domain.Value()), "."))
	if !b.Domain.Set || (domain != "" && (len(domain) > 253 || !domainRE.MatchString(domain))) {
		core.WriteValidation(w, core.FieldErr("domain", "must be a host name such as status.example.com, or null"))
		return
	}
	err := h.d.Mutate(r.Context(), p, func() error { p.Spec.CustomDomain = domain; return nil })
	if err != nil {
		core.WriteErr(w, r, h.d.WriteFailed(r.Context(), p.Namespace, err, pageFieldPath))
		return
	}
	httpjson.Write(w, http.StatusOK, restapi.PageDomainState{Domain: core.StrPtr(domain)})
}
