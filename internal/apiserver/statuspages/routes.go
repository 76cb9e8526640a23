package statuspages

import (
	"context"
	"net/http"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apidoc"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
)

// Routes registers /status/pages (the public pages, /status/{slug} and /s/{slug}, are served by the root).
func (h *Handlers) Routes(rt *core.Router) {
	pages := core.WithFeature(monv1.FeatureStatusPages)
	owner := core.WithAccess(core.OwnerOnly)
	rt.Handle(http.MethodGet, "/status/pages/me", h.listPages, core.Doc(apidoc.Op{Tag: "Status pages", Summary: "Your status pages", Resp: []restapi.StatusPage{}}))
	rt.Handle(http.MethodGet, "/status/pages/overview", h.pagesOverview, core.Doc(apidoc.Op{Tag: "Status pages", Summary: "Pages with current state", Resp: []restapi.StatusPage{}}))
	rt.Handle(http.MethodPost, "/status/pages", h.createPage, pages, core.Doc(apidoc.Op{
		Tag:         "Status pages",
		Summary:     "Create a status page",
		Body:        restapi.StatusPageCreate{},
		Status:      201,
		Resp:        restapi.StatusPage{},
		Entitlement: true,
	}))
	rt.Handle(http.MethodGet, "/status/pages/monitor/{monitorId}", h.listPages, core.Doc(apidoc.Op{Tag: "Status pages", Summary: "The pages a monitor is on", Resp: []restapi.StatusPage{}}))
	rt.Handle(http.MethodGet, "/status/pages/{id}", h.getPage, core.Doc(apidoc.Op{
		Tag:     "Status pages",
		Summary: "A status page with its monitors",
		Desc:    "Extension: `monitors` lists the page's own entries, then the monitors that join it by their label `monitoring.uptime-operator.io/status-page` (docs/discovery.md).",
		Resp:    restapi.StatusPage{},
	}))
	rt.Handle(http.MethodPatch, "/status/pages/{id}", h.updatePage, pages, core.Doc(apidoc.Op{
		Tag:     "Status pages",
		Summary: "Update a status page",
		Desc:    "hide_powered_by and favicon_url need white-label (403 WHITE_LABEL_NOT_ENTITLED).",
		Body:    restapi.StatusPageUpdate{},
		Resp:    restapi.StatusPage{},
	}))
	rt.Handle(http.MethodDelete, "/status/pages/{id}", h.deletePage, core.Doc(apidoc.Op{Tag: "Status pages", Summary: "Delete a status page", Status: 204}))
	rt.Handle(http.MethodPut, "/status/pages/{id}/monitors", h.putPageMonitors, pages, core.Doc(apidoc.Op{
		Tag:     "Status pages",
		Summary: "Set the page's monitors (up to 500)",
		Body:    restapi.PageMonitors{},
		Resp:    restapi.StatusPage{},
	}))
	rt.Handle(http.MethodPost, "/status/pages/{id}/monitors", h.addPageMonitor, pages, core.Doc(apidoc.Op{
		Tag:     "Status pages",
		Summary: "Add a monitor to the page",
		Body:    restapi.PageMonitorAdd{},
		Resp:    restapi.StatusPage{},
	}))
	rt.Handle(http.MethodDelete, "/status/pages/{id}/monitors/{monitorId}", h.removePageMonitor, core.Doc(apidoc.Op{
		Tag:     "Status pages",
		Summary: "Remove a monitor from the page",
		Desc:    "Extension: a monitor shown because it joins the page by its label `monitoring.uptime-operator.io/status-page` (a discovered monitor, docs/discovery.md) is taken off by removing that label; removing it here answers 409 CONFLICT.",
		Status:  204,
		Extra:   []int{409},
	}))
	rt.Handle(http.MethodGet, "/status/pages/{id}/access", h.getPageAccess, core.Doc(apidoc.Op{Tag: "Status pages", Summary: "Who can view the page", Resp: restapi.PageAccessState{}}))
	rt.Handle(http.MethodPut, "/status/pages/{id}/access", h.putPageAccess, owner, core.Doc(apidoc.Op{
		Tag:     "Status pages",
		Summary: "Change who can view the page",
		Desc:    "Extension: `sso` ({allowed_email_domains, allowed_emails, allowed_groups}) says who may view an sso page; mode sso needs it and an OpenID Connect provider configured for the install (else 400 VALIDATION_ERROR naming the missing setting).",
		Body:    restapi.PageAccess{},
		Resp:    restapi.PageAccessState{},
		Extra:   []int{409},
	}))
	rt.Handle(http.MethodPost, "/status/pages/{id}/access/revoke-sessions", h.revokePageSessions, owner, core.Doc(apidoc.Op{
		Tag:     "Status pages",
		Summary: "Sign out visitors of a private page",
		Resp:    restapi.PageAccessState{},
	}))
	rt.Handle(http.MethodPut, "/status/pages/{id}/domain", h.putPageDomain, owner, core.Doc(apidoc.Op{
		Tag:     "Status pages",
		Summary: "Set the custom domain",
		Body:    restapi.PageDomain{},
		Resp:    restapi.PageDomainState{},
	}))
	rt.Handle(http.MethodGet, "/status/pages/{id}/subscribers", h.pageSubscribers, core.Doc(apidoc.Op{
		Tag:     "Status pages",
		Summary: "Subscribers by channel",
		Resp:    restapi.PageSubscribers{},
	}))
	rt.Handle(http.MethodGet, "/status/pages/{id}/languages", h.getPageLanguages, core.Doc(apidoc.Op{Tag: "Status pages", Summary: "Languages and translations", Resp: restapi.Languages{}}))
	rt.Handle(http.MethodPut, "/status/pages/{id}/languages", h.putPageLanguages, pages, core.Doc(apidoc.Op{
		Tag:     "Status pages",
		Summary: "Change languages",
		Body:    restapi.LanguagesBody{},
		Resp:    restapi.Languages{},
	}))
}

// SubscriberLister lists a status page's subscribers (the status page
// notifier).
type SubscriberLister interface {
	SubscriberList(ctx context.Context, pageUID string) (restapi.PageSubscribers, error)
}

// Handlers serve /status/pages: StatusPage custom resources, their
// monitors, access, domain, languages and subscribers.
type Handlers struct {
	d *core.Deps
	// subscribers lists subscribers; nil answers empty lists.
	subscribers SubscriberLister
	// publicURL is the base URL of the public pages.
	publicURL string
	// ssoUnavailable names the setting sso pages lack ("" when none).
	ssoUnavailable string
}

// New returns the handlers; subscribers may be nil. ssoUnavailable names
// the install setting that sso pages lack, "" when they can be served
// (statuspage.SSOUnavailable).
func New(d *core.Deps, subscribers SubscriberLister, publicURL, ssoUnavailable string) *Handlers {
	return &Handlers{d: d, subscribers: subscribers, publicURL: publicURL, ssoUnavailable: ssoUnavailable}
}
