package domainssl

import (
	"errors"
	"net/http"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/apidoc"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/expiry"
	"github.com/uptime-operator/uptime-operator/internal/httpjson"
	"github.com/uptime-operator/uptime-operator/internal/ratelimit"
)

// CodeExpiryUnavailable answers domain/SSL endpoints on a server built
// without an expiry checker (not a code of the specification).
const CodeExpiryUnavailable = "EXPIRY_UNAVAILABLE"

// Handlers serve /monitors/{id}/domain-ssl: the certificate and domain
// expiry of a monitor's target.
type Handlers struct {
	d *core.Deps
	// x checks expiry; nil answers 503.
	x *expiry.Checker
}

// New returns the handlers; x may be nil (the endpoints then answer 503).
func New(d *core.Deps, x *expiry.Checker) *Handlers { return &Handlers{d: d, x: x} }

// Routes registers the certificate and domain expiry endpoints.
func (h *Handlers) Routes(rt *core.Router) {
	// Domain/SSL refresh: 20 per 15 minutes per account (counted per
	// workspace), plain-text 429 like the other exports and discoveries.
	refresh := core.NewLimiter("domain-ssl-refresh", 20, 15*time.Minute, core.PerWorkspace, ratelimit.Plain)
	rt.Handle(http.MethodGet, "/monitors/{id}/domain-ssl", h.details, core.Doc(apidoc.Op{
		Tag:     "Domain and DNS",
		Summary: "Certificate and domain expiry as last recorded",
		Resp:    expiry.Details{},
		Extra:   []int{503},
	}))
	rt.Handle(http.MethodPost, "/monitors/{id}/domain-ssl/refresh", h.refresh, core.WithLimit(refresh), core.Doc(apidoc.Op{
		Tag:     "Domain and DNS",
		Summary: "Re-check certificate and domain expiry now",
		Resp:    apidoc.M{"allOf": []any{apidoc.Ref("ExpiryDetails"), apidoc.Obj("", apidoc.M{"refresh_error": apidoc.Null(apidoc.Str("Why fetching the certificate failed."))}, "refresh_error")}},
		Extra:   []int{503},
	}))
}

func writeExpiryUnavailable(w http.ResponseWriter) {
	core.WriteError(w, http.StatusServiceUnavailable, CodeExpiryUnavailable, "certificate and domain expiry checks are not running on this server")
}

// details answers the certificate and domain expiry of a monitor, as last
// recorded; it looks nothing up.
func (h *Handlers) details(w http.ResponseWriter, r *http.Request) {
	m := h.d.PathMonitor(w, r)
	if m == nil {
		return
	}
	if h.x == nil {
		writeExpiryUnavailable(w)
		return
	}
	d, err := h.x.Details(r.Context(), m)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, d)
}

// refreshedDetails is the refresh answer: the details plus why fetching the
// certificate failed, if it did.
type refreshedDetails struct {
	expiry.Details
	RefreshError *string `json:"refresh_error"`
}

// refresh re-checks the certificate (from the manager, through the
// address guard) and the domain registration now.
func (h *Handlers) refresh(w http.ResponseWriter, r *http.Request) {
	m := h.d.PathMonitor(w, r)
	if m == nil {
		return
	}
	if h.x == nil {
		writeExpiryUnavailable(w)
		return
	}
	if !expiry.Applies(m) {
		core.WriteValidation(w, core.FieldErr("type", "domain and certificate expiry apply to monitors that check a URL or make a TLS handshake (docs/expiry.md); this monitor does neither"))
		return
	}
	d, err := h.x.Refresh(r.Context(), m)
	var fe *expiry.FetchError
	switch {
	case errors.As(err, &fe):
		msg := fe.Error()
		httpjson.Write(w, http.StatusOK, refreshedDetails{Details: d, RefreshError: &msg})
	case err != nil:
		core.WriteErr(w, r, err)
	default:
		httpjson.Write(w, http.StatusOK, refreshedDetails{Details: d})
	}
}
