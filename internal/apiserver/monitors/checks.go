package monitors

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/httpjson"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// history serves the records of a monitor's checks kept in the store:
// checks, step runs and DNS records.
type history struct {
	d  *core.Deps
	st Store
}

// checksPage reads the page of check history a request asks for: region,
// limit (default def, 1 to max) and the before cursor; errs lists the bad
// parameters.
func checksPage(r *http.Request, m *monv1.Monitor, def, max int) (q store.ChecksQuery, errs []core.FieldError) {
	q = store.ChecksQuery{MonitorID: string(m.UID), Region: r.URL.Query().Get("region")}
	limit, fe := core.IntParam(r, "limit", def, 1, max)
	if fe != nil {
		errs = append(errs, *fe)
	}
	q.Limit = limit
	if v := r.URL.Query().Get("before"); v != "" {
		t, ok := core.ParseCursor(v)
		if !ok {
			errs = append(errs, core.FieldErr("before", "must be a UTC timestamp YYYY-MM-DDTHH:MM:SS[.ffffff][Z]"))
		}
		q.Before = &t
	}
	return q, errs
}

// checkStatusParam reads the status filter; problem selects every non-up check.
func checkStatusParam(v string) (store.CheckStatus, bool) {
	st := store.CheckStatus(v)
	return st, v == "" || st == store.StatusProblem || st.Valid()
}

func (h *history) listChecks(w http.ResponseWriter, r *http.Request) {
	m := h.d.PathMonitor(w, r)
	if m == nil {
		return
	}
	q, errs := checksPage(r, m, 50, 500)
	st, ok := checkStatusParam(r.URL.Query().Get("status"))
	if !ok {
		errs = append(errs, core.FieldErr("status", "must be one of up, down, degraded, blocked, unknown, problem"))
	}
	q.Status = st
	if len(errs) > 0 {
		core.WriteValidation(w, errs...)
		return
	}
	items, next, err := h.st.ListChecks(r.Context(), q)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, restapi.CheckPage{Items: core.CheckRecords(items), NextBefore: core.ISOTimePtr(next)})
}

// checkScreenshot serves the JPEG stored with a failed browser check, to
// whoever may read the monitor (PathMonitor resolves it in the caller's
// workspace, and the store reads the screenshot by monitor and check id).
func (h *history) checkScreenshot(w http.ResponseWriter, r *http.Request) {
	m := h.d.PathSharedMonitor(w, r)
	if m == nil {
		return
	}
	img, err := h.st.CheckScreenshot(r.Context(), string(m.UID), chi.URLParam(r, "checkId"))
	if errors.Is(err, store.ErrNotFound) {
		core.WriteNotFound(w, "Screenshot")
		return
	}
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "image/jpeg")
	hdr.Set("Content-Length", strconv.Itoa(len(img)))
	hdr.Set("Cache-Control", "private, max-age=86400")
	hdr.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(img)
}

// maxExportRows is the most rows of a CSV export.
const maxExportRows = 50000

func (h *history) checksCSV(w http.ResponseWriter, r *http.Request) {
	m := h.d.PathMonitor(w, r)
	if m == nil {
		return
	}
	q := store.ChecksQuery{MonitorID: string(m.UID), Region: r.URL.Query().Get("region"), Limit: maxExportRows}
	var errs []core.FieldError
	for _, p := range []struct {
		name string
		dst  **time.Time
	}{{"from", &q.From}, {"to", &q.To}} {
		if v := r.URL.Query().Get(p.name); v != "" {
			t, ok := core.ParseISO(v)
			if !ok {
				errs = append(errs, core.FieldErr(p.name, "must be an ISO 8601 timestamp"))
				continue
			}
			*p.dst = &t
		}
	}
	st, ok := checkStatusParam(r.URL.Query().Get("status"))
	if !ok {
		errs = append(errs, core.FieldErr("status", "must be one of up, down, degraded, blocked, unknown, problem"))
	}
	q.Status = st
	if len(errs) > 0 {
		core.WriteValidation(w, errs...)
		return
	}
	items, next, err := h.st.ListChecks(r.Context(), q)
	if err != nil {
		core.WriteErr(w, r, err)
		return
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "text/csv; charset=utf-8")
	hdr.Set("Content-Disposition", `attachment; filename="checks-`+string(m.UID)+`.csv"`)
	if next != nil || len(items) > maxExportRows {
		hdr.Set("X-Export-Truncated", "true")
	}
	if len(items) > maxExportRows {
		items = items[:maxExportRows]
	}
	w.WriteHeader(http.StatusOK)
	cw := core.NewCSVExport(w)
	cw.Row("id", "checked_at", "region", "status", "status_code", "response_time_ms", "error_type", "error_message")
	for _, c := range items {
		code := ""
		if c.StatusCode != nil {
			code = strconv.Itoa(*c.StatusCode)
		}
		cw.Row(c.ID, core.ISOTime(c.CheckedAt), c.Region, string(c.Status), code,
			strconv.FormatInt(c.ResponseTimeMs, 10), c.ErrorType, c.ErrorMessage)
	}
	cw.Flush()
}
