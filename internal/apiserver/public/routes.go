package public

import (
	"context"
	"net/http"

	"github.com/uptime-operator/uptime-operator/internal/apidoc"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/engine"
	"github.com/uptime-operator/uptime-operator/internal/statuspage"
	"k8s.io/utils/clock"
)

// Status serves the public status page endpoints. rest is "",
// "history", "badge.svg" or "feed.xml".
type Status interface {
	ServeStatus(w http.ResponseWriter, r *http.Request, slug, rest string)
	ServeHTML(w http.ResponseWriter, r *http.Request, slug string)
	// The page's forms: password sign-in, sign-out and subscriptions.
	ServeLogin(w http.ResponseWriter, r *http.Request, slug string)
	ServeLogout(w http.ResponseWriter, r *http.Request, slug string)
	// Single sign-on of sso pages: the start and the provider's redirect
	// back (one URL for every page).
	ServeSSOStart(w http.ResponseWriter, r *http.Request, slug string)
	ServeSSOCallback(w http.ResponseWriter, r *http.Request)
	ServeSubscribe(w http.ResponseWriter, r *http.Request, slug string)
	ServeConfirm(w http.ResponseWriter, r *http.Request, slug string)
	ServeUnsubscribe(w http.ResponseWriter, r *http.Request, slug string)
}

// HeartbeatRecorder records the ping of a cron monitor by its token
// (the engine).
type HeartbeatRecorder interface {
	// HeartbeatByToken records a ping for the cron monitor owning token;
	// engine.ErrUnknownToken when none does.
	HeartbeatByToken(ctx context.Context, token string, p engine.Ping) error
}

// Handlers serve the endpoints that need no API key: the token in a
// heartbeat URL is its credential, and status pages need none.
type Handlers struct {
	clock clock.PassiveClock
	// engine records pings; nil answers 503.
	engine HeartbeatRecorder
	// public serves the pages; nil answers 404.
	public Status
	// limits are the router's (heartbeat and public page rows); Routes
	// sets them.
	limits *core.Limits
}

// New returns the handlers; engine and pages may be nil.
func New(clk clock.PassiveClock, engine HeartbeatRecorder, pages Status) *Handlers {
	return &Handlers{clock: clk, engine: engine, public: pages}
}

// Routes registers /heartbeat/{token}, /status/{slug} and the HTML page
// /s/{slug} with its forms. They are not subject to the CORS rule of the
// authenticated API (status pages are read by browsers).
func (h *Handlers) Routes(rt *core.Router) {
	h.limits = rt.Limits
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodHead} {
		rt.Public(m, "/heartbeat/{token}", h.heartbeat, apidoc.Op{
			Tag: "Public", Summary: "Heartbeat ping (" + m + ")",
			Desc: "Records a heartbeat of a cron monitor. Request bodies are ignored. Pings of a paused monitor are ignored but answered 200.",
			Query: []apidoc.Param{
				apidoc.Q("status", apidoc.Str(""), "fail, failure, failed, down, error, err report failure; ok and similar values or none report success."),
				apidoc.Q("duration_ms", apidoc.Bounds(apidoc.Integer(""), 0, 604800000), "Run time of the job."),
			},
			Resp: apidoc.With(apidoc.Str(""), "const", "OK"), RespType: "text/plain",
			Extra: []int{503}, // no engine to record it (the heartbeat handler's own check)
		}, rt.Limits.HeartbeatToken, rt.Limits.HeartbeatFail)
	}
	rt.Public(http.MethodGet, "/status/{slug}", h.publicStatus, apidoc.Op{
		Tag:     "Public",
		Summary: "Published status page as JSON",
		Resp:    apidoc.Freeform("The published page: title, monitors with status, incidents, maintenance."),
	}, rt.Limits.Public)
	rt.Public(http.MethodGet, "/status/{slug}/{rest}", h.publicStatus, apidoc.Op{
		Tag:         "Public",
		Summary:     "Status page history, badge or feed",
		Desc:        "`history`: daily uptime per monitor (JSON; `days` up to 90). `badge.svg`: status badge (image/svg+xml). `feed.xml`: Atom feed of incidents and maintenance (application/atom+xml; unavailable for private pages).",
		Query:       []apidoc.Param{apidoc.Q("days", apidoc.Bounds(apidoc.Integer(""), 1, 90), "history only.")},
		Resp:        apidoc.Freeform("history: daily uptime per monitor."),
		MoreContent: apidoc.M{"image/svg+xml": apidoc.Str("badge.svg: the status badge."), "application/atom+xml": apidoc.Str("feed.xml: the Atom feed.")},
	}, rt.Limits.Public)
	rt.Public(http.MethodGet, "/s/{slug}", h.publicHTML, apidoc.Op{
		Tag:      "Public",
		Summary:  "Status page as HTML",
		Resp:     apidoc.Str("HTML page."),
		RespType: "text/html",
	}, rt.Limits.Public)
	rt.Public(http.MethodPost, "/s/{slug}/login", h.publicForm(Status.ServeLogin), apidoc.Op{
		Tag:      "Public",
		Summary:  "Password sign-in form of a private page",
		Resp:     apidoc.Str("HTML page or redirect."),
		RespType: "text/html",
		Extra:    []int{400},
	}, rt.Limits.Public)
	rt.Public(http.MethodPost, "/s/{slug}/logout", h.publicForm(Status.ServeLogout), apidoc.Op{
		Tag:      "Public",
		Summary:  "Sign out of a private page",
		Desc:     "Ends the visitor's session of a password or sso page in this browser (not at the identity provider).",
		Resp:     apidoc.Str("HTML page."),
		RespType: "text/html",
	}, rt.Limits.Public)
	rt.Public(http.MethodGet, "/s/{slug}/sso", h.publicForm(Status.ServeSSOStart), apidoc.Op{
		Tag:      "Public",
		Summary:  "Start single sign-on of an sso page",
		Desc:     "Redirects (303) to the install's OpenID Connect provider (authorization code with PKCE, state and nonce). `prompt=select_account` asks the provider to let the visitor choose an account. 503 with an HTML page when the provider cannot be used.",
		Query:    []apidoc.Param{apidoc.Q("prompt", apidoc.Enum("", "select_account"), "Let the visitor choose another account.")},
		Resp:     apidoc.Str("Redirect to the provider."),
		RespType: "text/html",
		Extra:    []int{503},
	}, rt.Limits.Public)
	rt.Public(http.MethodGet, statuspage.SSOCallbackPath, h.ssoCallback, apidoc.Op{
		Tag:     "Public",
		Summary: "Single sign-on redirect URI",
		Desc:    "Where the OpenID provider returns the visitor (register <public URL>/sso/callback). Checks state, redeems the code with the PKCE verifier, verifies the ID token and signs an allowed visitor in (303 to the page); 400 for an unknown, expired or used state, 401 for a refused code or token, 403 (naming the signed-in user) for a user the page does not allow, 503 when the provider cannot be used.",
		Query: []apidoc.Param{
			apidoc.Q("code", apidoc.Str(""), "Authorization code."),
			apidoc.Q("state", apidoc.Str(""), "The sign-in's state."),
		},
		Resp:     apidoc.Str("HTML page or redirect."),
		RespType: "text/html",
		Extra:    []int{400, 503},
	}, rt.Limits.Public)
	rt.Public(http.MethodPost, "/s/{slug}/subscribe", h.publicForm(Status.ServeSubscribe), apidoc.Op{
		Tag:      "Public",
		Summary:  "Subscribe to a page's updates (form)",
		Resp:     apidoc.Str("HTML page."),
		RespType: "text/html",
		Extra:    []int{400},
	}, rt.Limits.Public)
	rt.Public(http.MethodGet, "/s/{slug}/confirm", h.publicForm(Status.ServeConfirm), apidoc.Op{
		Tag:      "Public",
		Summary:  "Subscription confirmation page",
		Query:    []apidoc.Param{apidoc.Q("token", apidoc.Str(""), "Confirmation token.")},
		Desc:     "The link of a subscription confirmation message. Shows a button that POSTs to the same URL; fetching the link confirms nothing.",
		Resp:     apidoc.Str("HTML page."),
		RespType: "text/html",
	}, rt.Limits.Public)
	rt.Public(http.MethodPost, "/s/{slug}/confirm", h.publicForm(Status.ServeConfirm), apidoc.Op{
		Tag:      "Public",
		Summary:  "Confirm a subscription",
		Query:    []apidoc.Param{apidoc.Q("token", apidoc.Str(""), "Confirmation token.")},
		Desc:     "Confirms the pending subscriber of the token, once, within 48 hours; 404 for an unknown, used or expired token. JSON requests get {\"status\":\"confirmed\"}.",
		Resp:     apidoc.Str("HTML page."),
		RespType: "text/html",
		JSONResp: apidoc.Obj("", apidoc.M{"status": apidoc.Enum("", "confirmed")}, "status"),
	}, rt.Limits.Public)
	rt.Public(http.MethodGet, "/s/{slug}/unsubscribe", h.publicForm(Status.ServeUnsubscribe), apidoc.Op{
		Tag:      "Public",
		Summary:  "Unsubscribe page",
		Query:    []apidoc.Param{apidoc.Q("token", apidoc.Str(""), "Subscription token.")},
		Resp:     apidoc.Str("HTML page."),
		RespType: "text/html",
	}, rt.Limits.Public)
	rt.Public(http.MethodPost, "/s/{slug}/unsubscribe", h.publicForm(Status.ServeUnsubscribe), apidoc.Op{
		Tag:      "Public",
		Summary:  "Unsubscribe (form)",
		Resp:     apidoc.Str("HTML page."),
		RespType: "text/html",
		Extra:    []int{400},
	}, rt.Limits.Public)
}
