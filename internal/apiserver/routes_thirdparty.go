package apiserver

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/httpjson"
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

// registerThirdPartyRoutes registers the third-party status endpoints. The
// catalog can be read with any key; following providers and showing them on
// status pages needs the third-party-status plan feature. t may be nil: the
// endpoints then answer 503.
func (s *Server) registerThirdPartyRoutes(t *thirdparty.Service) {
	feature := core.WithFeature(monv1.FeatureThirdPartyStatus)
	s.rt.Handle(http.MethodGet, "/third-party-status/providers", s.listProviders(t))
	s.rt.Handle(http.MethodGet, "/third-party-status/providers/{providerId}", s.getProvider(t))
	s.rt.Handle(http.MethodGet, "/third-party-status/subscriptions", s.listThirdPartySubs(t), feature)
	s.rt.Handle(http.MethodPost, "/third-party-status/subscriptions", s.createThirdPartySub(t), feature)
	s.rt.Handle(http.MethodPatch, "/third-party-status/subscriptions/{id}", s.patchThirdPartySub(t), feature)
	s.rt.Handle(http.MethodDelete, "/third-party-status/subscriptions/{id}", s.deleteThirdPartySub(t), feature)
	s.rt.Handle(http.MethodGet, "/third-party-status/status-pages/{statusPageId}", s.getPageServices(t), feature)
	s.rt.Handle(http.MethodPut, "/third-party-status/status-pages/{statusPageId}", s.putPageServices(t), feature)
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

func (s *Server) listProviders(t *thirdparty.Service) http.HandlerFunc {
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

func (s *Server) getProvider(t *thirdparty.Service) http.HandlerFunc {
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

// thirdPartySubJSON is a subscription as the API shows it.
type thirdPartySubJSON struct {
	store.ThirdPartySubscription
	ProviderName string `json:"provider_name"`
}

func (s *Server) subJSON(r *http.Request, t *thirdparty.Service, sub store.ThirdPartySubscription) thirdPartySubJSON {
	out := thirdPartySubJSON{ThirdPartySubscription: sub, ProviderName: sub.ProviderID}
	if p, ok, err := t.Catalog.Get(r.Context(), sub.ProviderID); err == nil && ok {
		out.ProviderName = p.Name
	}
	return out
}

func (s *Server) listThirdPartySubs(t *thirdparty.Service) http.HandlerFunc {
	return withThirdParty(t, func(w http.ResponseWriter, r *http.Request) {
		subs, err := s.opts.Store.ListThirdPartySubscriptions(r.Context(), core.CallerFrom(r.Context()).Namespace)
		if err != nil {
			core.WriteErr(w, r, err)
			return
		}
		out := make([]thirdPartySubJSON, 0, len(subs))
		for _, sub := range subs {
			out = append(out, s.subJSON(r, t, sub))
		}
		httpjson.Write(w, http.StatusOK, out)
	})
}

// thirdPartySubBody is the create and PATCH body; nil fields are not sent.
type thirdPartySubBody struct {
	ProviderID        *string   `json:"provider_id"`
	ComponentIDs      *[]string `json:"component_ids"`
	Keywords          *[]string `json:"keywords"`
	Notify            *bool     `json:"notify"`
	NotifyMaintenance *bool     `json:"notify_maintenance"`
	MinSeverity       *string   `json:"min_severity"`
}

// apply validates b and copies the sent fields onto sub.
func (b *thirdPartySubBody) apply(sub *store.ThirdPartySubscription) []core.FieldError {
	var errs []core.FieldError
	if b.ComponentIDs != nil {
		ids := dedupe(*b.ComponentIDs)
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
		kws := dedupe(*b.Keywords)
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

func (s *Server) createThirdPartySub(t *thirdparty.Service) http.HandlerFunc {
	return withThirdParty(t, func(w http.ResponseWriter, r *http.Request) {
		var b thirdPartySubBody
		if err := core.DecodeJSON(r, &b, true); err != nil {
			core.WriteErr(w, r, err)
			return
		}
		sub := store.ThirdPartySubscription{Namespace: core.CallerFrom(r.Context()).Namespace, Notify: true,
			MinSeverity: thirdparty.SeverityMinor, CreatedAt: s.clock.Now(), UpdatedAt: s.clock.Now()}
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
		errs = append(errs, b.apply(&sub)...)
		if len(errs) > 0 {
			core.WriteValidation(w, errs...)
			return
		}
		created, err := s.opts.Store.InsertThirdPartySubscription(r.Context(), sub)
		if errors.Is(err, store.ErrSubscriptionExists) {
			core.WriteError(w, http.StatusConflict, core.CodeConflict, "this workspace already follows the provider; change subscription "+created.ID+" instead")
			return
		}
		if err != nil {
			core.WriteErr(w, r, err)
			return
		}
		httpjson.Write(w, http.StatusCreated, s.subJSON(r, t, created))
	})
}

// pathThirdPartySub finds the subscription of the {id} path value in the
// caller's workspace.
func (s *Server) pathThirdPartySub(w http.ResponseWriter, r *http.Request) (store.ThirdPartySubscription, bool) {
	sub, err := s.opts.Store.GetThirdPartySubscription(r.Context(), chi.URLParam(r, "id"))
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

func (s *Server) patchThirdPartySub(t *thirdparty.Service) http.HandlerFunc {
	return withThirdParty(t, func(w http.ResponseWriter, r *http.Request) {
		sub, ok := s.pathThirdPartySub(w, r)
		if !ok {
			return
		}
		var b thirdPartySubBody
		if err := core.DecodeJSON(r, &b, true); err != nil {
			core.WriteErr(w, r, err)
			return
		}
		errs := b.apply(&sub)
		if b.ProviderID != nil && *b.ProviderID != sub.ProviderID {
			errs = append(errs, core.FieldErr("provider_id", "cannot change; follow the other provider instead"))
		}
		if len(errs) > 0 {
			core.WriteValidation(w, errs...)
			return
		}
		sub.UpdatedAt = s.clock.Now()
		updated, err := s.opts.Store.UpdateThirdPartySubscription(r.Context(), sub)
		if errors.Is(err, store.ErrNotFound) {
			core.WriteNotFound(w, "Subscription")
			return
		}
		if err != nil {
			core.WriteErr(w, r, err)
			return
		}
		httpjson.Write(w, http.StatusOK, s.subJSON(r, t, updated))
	})
}

func (s *Server) deleteThirdPartySub(t *thirdparty.Service) http.HandlerFunc {
	return withThirdParty(t, func(w http.ResponseWriter, r *http.Request) {
		sub, ok := s.pathThirdPartySub(w, r)
		if !ok {
			return
		}
		err := s.opts.Store.DeleteThirdPartySubscription(r.Context(), sub.ID)
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
func (s *Server) pathStatusPageID(w http.ResponseWriter, r *http.Request) *monv1.StatusPage {
	return core.PathObject[*monv1.StatusPage](s.Deps, w, r, &monv1.StatusPageList{}, "statusPageId", "Status page")
}

// pageServiceJSON is a service shown on a status page, with the provider's
// name and page.
type pageServiceJSON struct {
	store.ThirdPartyService
	ProviderName  string `json:"provider_name"`
	StatusPageURL string `json:"status_page_url"`
}

func (s *Server) writePageServices(w http.ResponseWriter, r *http.Request, t *thirdparty.Service, p store.ThirdPartyPage) {
	out := make([]pageServiceJSON, 0, len(p.Services))
	for _, svc := range p.Services {
		o := pageServiceJSON{ThirdPartyService: svc, ProviderName: svc.ProviderID}
		if pr, ok, err := t.Catalog.Get(r.Context(), svc.ProviderID); err == nil && ok {
			o.ProviderName, o.StatusPageURL = pr.Name, pr.StatusPageURL
			if o.StatusPageURL == "" {
				o.StatusPageURL = strings.TrimRight(pr.URL, "/")
			}
		}
		out = append(out, o)
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"status_page_id": p.PageUID, "services": out})
}

func (s *Server) getPageServices(t *thirdparty.Service) http.HandlerFunc {
	return withThirdParty(t, func(w http.ResponseWriter, r *http.Request) {
		page := s.pathStatusPageID(w, r)
		if page == nil {
			return
		}
		p, err := s.opts.Store.GetThirdPartyPage(r.Context(), string(page.UID))
		if err != nil {
			core.WriteErr(w, r, err)
			return
		}
		s.writePageServices(w, r, t, p)
	})
}

func (s *Server) putPageServices(t *thirdparty.Service) http.HandlerFunc {
	return withThirdParty(t, func(w http.ResponseWriter, r *http.Request) {
		page := s.pathStatusPageID(w, r)
		if page == nil {
			return
		}
		var b struct {
			Services []store.ThirdPartyService `json:"services"`
		}
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
			b.Services[i].ComponentIDs = dedupe(svc.ComponentIDs)
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
		p, err := s.opts.Store.PutThirdPartyPage(r.Context(), store.ThirdPartyPage{PageUID: string(page.UID), Namespace: page.Namespace,
			Services: b.Services, UpdatedAt: s.clock.Now()})
		if err != nil {
			core.WriteErr(w, r, err)
			return
		}
		s.writePageServices(w, r, t, p)
	})
}
