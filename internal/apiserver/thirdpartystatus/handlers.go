package thirdpartystatus

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apidoc"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/httpjson"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/thirdparty"
)

// CodeThirdPartyUnavailable answers third-party status endpoints on a server
// built without the third-party service (not a code of the specification).
const CodeThirdPartyUnavailable = "THIRD_PARTY_UNAVAILABLE"

// Bounds of the third-party subscription and status-page bodies.
const (
	maxProviderID      = 60
	maxComponentIDs    = 200
	maxComponentID     = 100
	maxKeywords        = 20
	maxKeyword         = 60
	maxPageServices    = 50
	maxServiceNameSize = 255
)

// Store is what the third-party status endpoints keep in the history store.
type Store interface {
	InsertThirdPartySubscription(ctx context.Context, s store.ThirdPartySubscription) (store.ThirdPartySubscription, error)
	GetThirdPartySubscription(ctx context.Context, id string) (store.ThirdPartySubscription, error)
	ListThirdPartySubscriptions(ctx context.Context, namespace string) ([]store.ThirdPartySubscription, error)
	UpdateThirdPartySubscription(ctx context.Context, s store.ThirdPartySubscription) (store.ThirdPartySubscription, error)
	DeleteThirdPartySubscription(ctx context.Context, id string) error
	GetThirdPartyPage(ctx context.Context, pageUID string) (store.ThirdPartyPage, error)
	PutThirdPartyPage(ctx context.Context, p store.ThirdPartyPage) (store.ThirdPartyPage, error)
}

// Handlers serve /third-party-status: the provider catalog, a workspace's
// subscriptions to providers and the providers shown on its status pages.
type Handlers struct {
	d  *core.Deps
	st Store
	// t follows the providers; nil answers 503.
	t *thirdparty.Service
}

// New returns the handlers; t may be nil (the endpoints then answer 503).
func New(d *core.Deps, st Store, t *thirdparty.Service) *Handlers {
	return &Handlers{d: d, st: st, t: t}
}

// Routes registers the third-party status endpoints. The catalog can be
// read with any key; following providers and showing them on status pages
// needs the third-party-status plan feature.
func (h *Handlers) Routes(rt *core.Router) {
	feature := core.WithFeature(monv1.FeatureThirdPartyStatus)
	t := h.t
	rt.Handle(http.MethodGet, "/third-party-status/providers", h.listProviders(t), core.Doc(apidoc.Op{
		Tag:     "Third-party status",
		Summary: "Providers that can be followed",
		Resp:    []thirdparty.Provider{},
		Extra:   []int{503},
	}))
	rt.Handle(http.MethodGet, "/third-party-status/providers/{providerId}", h.getProvider(t), core.Doc(apidoc.Op{
		Tag:     "Third-party status",
		Summary: "A provider and its components",
		Resp:    thirdparty.ProviderDetails{},
		Extra:   []int{503},
	}))
	rt.Handle(http.MethodGet, "/third-party-status/subscriptions", h.listSubs(t), feature, core.Doc(apidoc.Op{
		Tag:     "Third-party status",
		Summary: "Followed providers",
		Resp:    []FollowedProvider{},
		Extra:   []int{503},
	}))
	rt.Handle(http.MethodPost, "/third-party-status/subscriptions", h.createSub(t), feature, core.Doc(apidoc.Op{
		Tag:     "Third-party status",
		Summary: "Follow a provider",
		Body:    restapi.ThirdPartySubscriptionBody{},
		Status:  201,
		Resp:    FollowedProvider{},
		Extra:   []int{409, 503},
	}))
	rt.Handle(http.MethodPatch, "/third-party-status/subscriptions/{id}", h.patchSub(t), feature, core.Doc(apidoc.Op{
		Tag:     "Third-party status",
		Summary: "Change a subscription",
		Body:    restapi.ThirdPartySubscriptionBody{},
		Resp:    FollowedProvider{},
		Extra:   []int{503},
	}))
	rt.Handle(http.MethodDelete, "/third-party-status/subscriptions/{id}", h.deleteSub(t), feature, core.Doc(apidoc.Op{Tag: "Third-party status", Summary: "Unfollow a provider", Status: 204, Extra: []int{503}}))
	rt.Handle(http.MethodGet, "/third-party-status/status-pages/{statusPageId}", h.getPageServices(t), feature, core.Doc(apidoc.Op{
		Tag:     "Third-party status",
		Summary: "Services shown on a status page",
		Resp:    PageServices{},
		Extra:   []int{503},
	}))
	rt.Handle(http.MethodPut, "/third-party-status/status-pages/{statusPageId}", h.putPageServices(t), feature, core.Doc(apidoc.Op{
		Tag:     "Third-party status",
		Summary: "Set the services shown on a status page",
		Body:    PageServicesBody{},
		Resp:    PageServices{},
		Extra:   []int{503},
	}))
}

func writeThirdPartyUnavailable(w http.ResponseWriter) {
	core.WriteError(w, http.StatusServiceUnavailable, CodeThirdPartyUnavailable, "third-party status is not running on this server")
}

// withThirdParty answers 503 when t is nil, else runs h.
func withThirdParty(t *thirdparty.Service, h func(w http.ResponseWriter, r *http.Request)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if t == nil {
			writeThirdPartyUnavailable(w)
			return
		}
		h(w, r)
	}
}

func (h *Handlers) listProviders(t *thirdparty.Service) http.HandlerFunc {
	return withThirdParty(t, func(w http.ResponseWriter, r *http.Request) {
		list, err := t.Catalog.List(r.Context())
		if err != nil {
			core.WriteErr(w, r, err)
			return
		}
		for i := range list {
			if list[i].StatusPageURL == "" {
				list[i].StatusPageURL = strings.TrimRight(list[i].URL, "/")
			}
		}
		httpjson.Write(w, http.StatusOK, list)
	})
}

func (h *Handlers) getProvider(t *thirdparty.Service) http.HandlerFunc {
	return withThirdParty(t, func(w http.ResponseWriter, r *http.Request) {
		d, err := t.Details(r.Context(), chi.URLParam(r, "providerId"))
		switch {
		case errors.Is(err, thirdparty.ErrUnknownProvider):
			core.WriteNotFound(w, "Provider")
		case err != nil:
			core.WriteError(w, http.StatusBadGateway, CodeThirdPartyUnavailable, "could not read the provider's status: "+err.Error())
		default:
			httpjson.Write(w, http.StatusOK, d)
		}
	})
}

// The answers extend the stored records with the provider's name, so they
// are declared here rather than in restapi (which may not import the store).

// FollowedProvider is a followed provider: the subscription and the
// provider's name.
type FollowedProvider struct {
	store.ThirdPartySubscription
	ProviderName string `json:"provider_name"`
}

func (h *Handlers) subJSON(r *http.Request, t *thirdparty.Service, sub store.ThirdPartySubscription) FollowedProvider {
	out := FollowedProvider{ThirdPartySubscription: sub, ProviderName: sub.ProviderID}
	if p, ok, err := t.Catalog.Get(r.Context(), sub.ProviderID); err == nil && ok {
		out.ProviderName = p.Name
	}
	return out
}

func (h *Handlers) listSubs(t *thirdparty.Service) http.HandlerFunc {
	return withThirdParty(t, func(w http.ResponseWriter, r *http.Request) {
		subs, err := h.st.ListThirdPartySubscriptions(r.Context(), core.CallerFrom(r.Context()).Namespace)
		if err != nil {
			core.WriteErr(w, r, err)
			return
		}
		out := make([]FollowedProvider, 0, len(subs))
		for _, sub := range subs {
			out = append(out, h.subJSON(r, t, sub))
		}
		httpjson.Write(w, http.StatusOK, out)
	})
}

// applySub validates b and copies the sent fields onto sub.
func applySub(b *restapi.ThirdPartySubscriptionBody, sub *store.ThirdPartySubscription) []core.FieldError {
	var errs []core.FieldError
	if b.ComponentIDs != nil {
		ids := core.Dedupe(*b.ComponentIDs)
		switch {
		case len(ids) > maxComponentIDs:
			errs = append(errs, core.FieldErr("component_ids", "at most %d components", maxComponentIDs))
		default:
			for _, id := range ids {
				if len(id) > maxComponentID {
					errs = append(errs, core.FieldErr("component_ids", "component ids are at most %d characters", maxComponentID))
					break
				}
			}
		}
		sub.ComponentIDs = ids
	}
	if b.Keywords != nil {
		kws := core.Dedupe(*b.Keywords)
		if len(kws) > maxKeywords {
			errs = append(errs, core.FieldErr("keywords", "at most %d keywords", maxKeywords))
		}
		for _, k := range kws {
			if len([]rune(k)) > maxKeyword {
				errs = append(errs, core.FieldErr("keywords", "keywords are at most %d characters", maxKeyword))
				break
			}
		}
		sub.Keywords = kws
	}
	if b.Notify != nil {
		sub.Notify = *b.Notify
	}
	if b.NotifyMaintenance != nil {
		sub.NotifyMaintenance = *b.NotifyMaintenance
	}
	if b.MinSeverity != nil {
		switch *b.MinSeverity {
		case thirdparty.SeverityMinor, thirdparty.SeverityMajor, thirdparty.SeverityCritical:
			sub.MinSeverity = *b.MinSeverity
		default:
			errs = append(errs, core.FieldErr("min_severity", "must be minor, major or critical"))
		}
	}
	return errs
}

func (h *Handlers) createSub(t *thirdparty.Service) http.HandlerFunc {
	return withThirdParty(t, func(w http.ResponseWriter, r *http.Request) {
		var b restapi.ThirdPartySubscriptionBody
		if err := core.DecodeJSON(r, &b, true); err != nil {
			core.WriteErr(w, r, err)
			return
		}
		sub := store.ThirdPartySubscription{Namespace: core.CallerFrom(r.Context()).Namespace, Notify: true,
			MinSeverity: thirdparty.SeverityMinor, CreatedAt: h.d.Clock.Now(), UpdatedAt: h.d.Clock.Now()}
		var errs []core.FieldError
		switch {
		case b.ProviderID == nil || strings.TrimSpace(*b.ProviderID) == "":
			errs = append(errs, core.FieldErr("provider_id", "is required"))
		case len(*b.ProviderID) > maxProviderID:
			errs = append(errs, core.FieldErr("provider_id", "at most %d characters", maxProviderID))
		default:
			_, ok, err := t.Catalog.Get(r.Context(), *b.ProviderID)
			if err != nil {
				core.WriteErr(w, r, err)
				return
			}
			if !ok {
				errs = append(errs, core.FieldErr("provider_id", "unknown provider; see GET /third-party-status/providers"))
			}
			sub.ProviderID = *b.ProviderID
		}
		errs = append(errs, applySub(&b, &sub)...)
		if len(errs) > 0 {
			core.WriteValidation(w, errs...)
			return
		}
		created, err := h.st.InsertThirdPartySubscription(r.Context(), sub)
		if errors.Is(err, store.ErrSubscriptionExists) {
			core.WriteError(w, http.StatusConflict, core.CodeConflict, "this workspace already follows the provider; change subscription "+created.ID+" instead")
			return
		}
		if err != nil {
			core.WriteErr(w, r, err)
			return
		}
		httpjson.Write(w, http.StatusCreated, h.subJSON(r, t, created))
	})
}

// pathThirdPartySub finds the subscription of the {id} path value in the
// caller's workspace.
func (h *Handlers) pathThirdPartySub(w http.ResponseWriter, r *http.Request) (store.ThirdPartySubscription, bool) {
	sub, err := h.st.GetThirdPartySubscription(r.Context(), chi.URLParam(r, "id"))
	if errors.Is(err, store.ErrNotFound) || (err == nil && sub.Namespace != core.CallerFrom(r.Context()).Namespace) {
		core.WriteNotFound(w, "Subscription")
		return sub, false
	}
	if err != nil {
		core.WriteErr(w, r, err)
		return sub, false
	}
	return sub, true
}

func (h *Handlers) patchSub(t *thirdparty.Service) http.HandlerFunc {
	return withThirdParty(t, func(w http.ResponseWriter, r *http.Request) {
		sub, ok := h.pathThirdPartySub(w, r)
		if !ok {
			return
		}
		var b restapi.ThirdPartySubscriptionBody
		if err := core.DecodeJSON(r, &b, true); err != nil {
			core.WriteErr(w, r, err)
			return
		}
		errs := applySub(&b, &sub)
		if b.ProviderID != nil && *b.ProviderID != sub.ProviderID {
			errs = append(errs, core.FieldErr("provider_id", "cannot change; follow the other provider instead"))
		}
		if len(errs) > 0 {
			core.WriteValidation(w, errs...)
			return
		}
		sub.UpdatedAt = h.d.Clock.Now()
		updated, err := h.st.UpdateThirdPartySubscription(r.Context(), sub)
		if errors.Is(err, store.ErrNotFound) {
			core.WriteNotFound(w, "Subscription")
			return
		}
		if err != nil {
			core.WriteErr(w, r, err)
			return
		}
		httpjson.Write(w, http.StatusOK, h.subJSON(r, t, updated))
	})
}

func (h *Handlers) deleteSub(t *thirdparty.Service) http.HandlerFunc {
	return withThirdParty(t, func(w http.ResponseWriter, r *http.Request) {
		sub, ok := h.pathThirdPartySub(w, r)
		if !ok {
			return
		}
		err := h.st.DeleteThirdPartySubscription(r.Context(), sub.ID)
		if errors.Is(err, store.ErrNotFound) {
			core.WriteNotFound(w, "Subscription")
			return
		}
		if err != nil {
			core.WriteErr(w, r, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// pathStatusPageID finds the status page of the {statusPageId} path value in
// the caller's workspace.
func (h *Handlers) pathStatusPageID(w http.ResponseWriter, r *http.Request) *monv1.StatusPage {
	return core.PathObject[*monv1.StatusPage](h.d, w, r, &monv1.StatusPageList{}, "statusPageId", "Status page")
}

// PageService is a third-party service shown on a status page, with the
// provider's name and status page.
type PageService struct {
	store.ThirdPartyService
	ProviderName  string `json:"provider_name"`
	StatusPageURL string `json:"status_page_url"`
}

// PageServicesBody is the body that sets the services shown on a status
// page, in order; an absent list clears them. Unknown fields are rejected.
type PageServicesBody struct {
	_        struct{}                  `openapi:"strict"`
	Services []store.ThirdPartyService `json:"services,omitempty" openapi:"max=50"`
}

// PageServices are the third-party services shown on a status page.
type PageServices struct {
	StatusPageID string        `json:"status_page_id" openapi:"format=uuid"`
	Services     []PageService `json:"services"`
}

func (h *Handlers) writePageServices(w http.ResponseWriter, r *http.Request, t *thirdparty.Service, p store.ThirdPartyPage) {
	out := make([]PageService, 0, len(p.Services))
	for _, svc := range p.Services {
		o := PageService{ThirdPartyService: svc, ProviderName: svc.ProviderID}
		if pr, ok, err := t.Catalog.Get(r.Context(), svc.ProviderID); err == nil && ok {
			o.ProviderName, o.StatusPageURL = pr.Name, pr.StatusPageURL
			if o.StatusPageURL == "" {
				o.StatusPageURL = strings.TrimRight(pr.URL, "/")
			}
		}
		out = append(out, o)
	}
	httpjson.Write(w, http.StatusOK, PageServices{StatusPageID: p.PageUID, Services: out})
}

func (h *Handlers) getPageServices(t *thirdparty.Service) http.HandlerFunc {
	return withThirdParty(t, func(w http.ResponseWriter, r *http.Request) {
		page := h.pathStatusPageID(w, r)
		if page == nil {
			return
		}
		p, err := h.st.GetThirdPartyPage(r.Context(), string(page.UID))
		if err != nil {
			core.WriteErr(w, r, err)
			return
		}
		h.writePageServices(w, r, t, p)
	})
}

func (h *Handlers) putPageServices(t *thirdparty.Service) http.HandlerFunc {
	return withThirdParty(t, func(w http.ResponseWriter, r *http.Request) {
		page := h.pathStatusPageID(w, r)
		if page == nil {
			return
		}
		var b PageServicesBody
		if err := core.DecodeJSON(r, &b, true); err != nil {
			core.WriteErr(w, r, err)
			return
		}
		var errs []core.FieldError
		if len(b.Services) > maxPageServices {
			errs = append(errs, core.FieldErr("services", "at most %d services", maxPageServices))
		}
		seen := map[string]bool{}
		for i, svc := range b.Services {
			f := fmt.Sprintf("services[%d]", i)
			_, ok, err := t.Catalog.Get(r.Context(), svc.ProviderID)
			if err != nil {
				core.WriteErr(w, r, err)
				return
			}
			switch {
			case !ok:
				errs = append(errs, core.FieldErr(f+".provider_id", "unknown provider"))
			case seen[svc.ProviderID]:
				errs = append(errs, core.FieldErr(f+".provider_id", "listed twice"))
			}
			seen[svc.ProviderID] = true
			b.Services[i].ComponentIDs = core.Dedupe(svc.ComponentIDs)
			if len(b.Services[i].ComponentIDs) > maxComponentIDs {
				errs = append(errs, core.FieldErr(f+".component_ids", "at most %d components", maxComponentIDs))
			}
			if len([]rune(svc.DisplayName)) > maxServiceNameSize {
				errs = append(errs, core.FieldErr(f+".display_name", "at most %d characters", maxServiceNameSize))
			}
		}
		if len(errs) > 0 {
			core.WriteValidation(w, errs...)
			return
		}
		p, err := h.st.PutThirdPartyPage(r.Context(), store.ThirdPartyPage{PageUID: string(page.UID), Namespace: page.Namespace,
			Services: b.Services, UpdatedAt: h.d.Clock.Now()})
		if err != nil {
			core.WriteErr(w, r, err)
			return
		}
		h.writePageServices(w, r, t, p)
	})
}
