package statuspages

import (
	"context"
	"net/http"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
)

// Routes registers /status/pages (the public pages, /status/{slug} and /s/{slug}, are served by the root).
func (h *Handlers) Routes(rt *core.Router) {
	pages := core.WithFeature(monv1.FeatureStatusPages)
	owner := core.WithAccess(core.OwnerOnly)
	rt.Handle(http.MethodGet, "/status/pages/me", h.listPages)
	rt.Handle(http.MethodGet, "/status/pages/overview", h.pagesOverview)
	rt.Handle(http.MethodPost, "/status/pages", h.createPage, pages)
	rt.Handle(http.MethodGet, "/status/pages/monitor/{monitorId}", h.listPages)
	rt.Handle(http.MethodGet, "/status/pages/{id}", h.getPage)
	rt.Handle(http.MethodPatch, "/status/pages/{id}", h.updatePage, pages)
	rt.Handle(http.MethodDelete, "/status/pages/{id}", h.deletePage)
	rt.Handle(http.MethodPut, "/status/pages/{id}/monitors", h.putPageMonitors, pages)
	rt.Handle(http.MethodPost, "/status/pages/{id}/monitors", h.addPageMonitor, pages)
	rt.Handle(http.MethodDelete, "/status/pages/{id}/monitors/{monitorId}", h.removePageMonitor)
	rt.Handle(http.MethodGet, "/status/pages/{id}/access", h.getPageAccess)
	rt.Handle(http.MethodPut, "/status/pages/{id}/access", h.putPageAccess, owner)
	rt.Handle(http.MethodPost, "/status/pages/{id}/access/revoke-sessions", h.revokePageSessions, owner)
	rt.Handle(http.MethodPut, "/status/pages/{id}/domain", h.putPageDomain, owner)
	rt.Handle(http.MethodGet, "/status/pages/{id}/subscribers", h.pageSubscribers)
	rt.Handle(http.MethodGet, "/status/pages/{id}/languages", h.getPageLanguages)
	rt.Handle(http.MethodPut, "/status/pages/{id}/languages", h.putPageLanguages, pages)
}

// SubscriberLister lists a status page's subscribers (the status page
// notifier).
type SubscriberLister interface {
	SubscriberList(ctx context.Context, pageUID string) (any, error)
}

// Handlers serve /status/pages: StatusPage custom resources, their
// monitors, access, domain, languages and subscribers.
type Handlers struct {
	d *core.Deps
	// subscribers lists subscribers; nil answers empty lists.
	subscribers SubscriberLister
	// publicURL is the base URL of the public pages.
	publicURL string
}

// New returns the handlers; subscribers may be nil.
func New(d *core.Deps, subscribers SubscriberLister, publicURL string) *Handlers {
	return &Handlers{d: d, subscribers: subscribers, publicURL: publicURL}
}
