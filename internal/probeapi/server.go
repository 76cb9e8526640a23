package probeapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/httpjson"
	"github.com/uptime-operator/uptime-operator/internal/ratelimit"
	"github.com/uptime-operator/uptime-operator/internal/textutil"
)

// Paths of the probe API.
const (
	PathAssignments = "/probe/v1/assignments"
	PathResults     = "/probe/v1/results"
)

// Long-poll bounds.
const (
	DefaultWait = 30 * time.Second
	MaxWait     = 60 * time.Second
)

// MaxBatchBytes bounds a ResultBatch request body.
const MaxBatchBytes = 8 << 20

// Errors a Server returns to select the HTTP answer.
var (
	// ErrUnauthorized means the token is missing or invalid (401).
	ErrUnauthorized = errors.New("unauthorized")
	// ErrForbidden means the token may not act for the region (403).
	ErrForbidden = errors.New("forbidden")
	// ErrNotModified may be returned by Server.Assignments when the wait
	// elapsed without a change (304).
	ErrNotModified = errors.New("not modified")
)

// Server is the manager side of the probe API. The manager implements it
// (package probeserver) with region tokens, TokenReview and the engine;
// MemoryServer is a small in-memory implementation for tests.
type Server interface {
	// Authenticate returns the one region the bearer token (possibly
	// empty) speaks for, or ErrUnauthorized. It sees only the token: the
	// handler calls it before it reads a request body, so a caller without
	// a token costs no more than this call.
	Authenticate(ctx context.Context, token string) (region string, err error)
	// Recognize returns the region of a token the server already knows to
	// be good, from what it holds in memory (region token Secrets as last
	// read, tokens it verified before), or "" when it cannot tell without
	// the work Authenticate may do (a TokenReview). The handler asks it
	// before the per-address failure limit, so a good token is answered
	// whatever other clients of its address did; it must cost no more per
	// made-up token than a few constant-time comparisons.
	Recognize(ctx context.Context, token string) (region string, err error)
	// Assignments returns the region's list at once when its revision differs
	// from known, else blocks until it does or ctx ends. When ctx ends it
	// returns ctx.Err() or ErrNotModified.
	Assignments(ctx context.Context, region, known string) (*AssignmentList, error)
	// IngestResults stores a batch an agent of region sent, skipping
	// results whose id is already stored, and reports how many were stored,
	// skipped and refused. A batch with a result of another region is
	// refused whole (an error wrapping ErrForbidden).
	IngestResults(ctx context.Context, region string, batch *ResultBatch) (ResultsResponse, error)
}

// RegionError is a batch, or one of its results, naming a region other than
// the one its token speaks for.
type RegionError struct {
	// Index is the result's index, -1 for the batch's own region.
	Index   int
	Claimed string
	Region  string
}

func (e *RegionError) Error() string {
	what := "the batch"
	if e.Index >= 0 {
		what = fmt.Sprintf("results[%d]", e.Index)
	}
	return fmt.Sprintf("%s claims region %q; the token speaks for region %q only", what, e.Claimed, e.Region)
}

// Unwrap makes a RegionError an ErrForbidden.
func (e *RegionError) Unwrap() error { return ErrForbidden }

// CheckRegion checks that batch and each of its results name region, the
// one the batch's token speaks for, filling in the regions left empty.
func (batch *ResultBatch) CheckRegion(region string) error {
	if batch.Region == "" {
		batch.Region = region
	}
	if batch.Region != region {
		return &RegionError{Index: -1, Claimed: batch.Region, Region: region}
	}
	for i := range batch.Results {
		res := &batch.Results[i]
		if res.Region == "" {
			res.Region = region
		}
		if res.Region != region {
			return &RegionError{Index: i, Claimed: res.Region, Region: region}
		}
	}
	return nil
}

// NewHandler serves the probe API endpoints on top of srv. Every request
// is authenticated from its headers before anything else is done. A token
// srv recognizes is always accepted; any other from a client address that
// failed FailureLimit times in FailureWindow is answered 429 without being
// looked at further.
func NewHandler(srv Server) http.Handler {
	return newHandler(srv, time.Now)
}

func newHandler(srv Server, now func() time.Time) http.Handler {
	h := &handler{srv: srv, now: now, failures: ratelimit.New(FailureLimit, FailureWindow)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+PathAssignments, h.assignments)
	mux.HandleFunc("POST "+PathResults, h.results)
	return mux
}

type handler struct {
	srv Server
	now func() time.Time
	// failures counts the failed requests (401, 403) per client address.
	failures *ratelimit.Limiter
}

func (h *handler) assignments(w http.ResponseWriter, r *http.Request) {
	region, ok := h.authenticate(w, r)
	if !ok {
		return
	}
	asked := r.URL.Query().Get("region")
	if asked == "" {
		writeError(w, http.StatusBadRequest, "VALIDATION_ERROR", "region is required")
		return
	}
	if asked != region {
		h.fail(r)
		writeError(w, http.StatusForbidden, "FORBIDDEN", (&RegionError{Index: -1, Claimed: asked, Region: region}).Error())
		return
	}
	wait := DefaultWait
	if s := r.URL.Query().Get("wait"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			writeError(w, http.StatusBadRequest, "VALIDATION_ERROR", "wait must be a duration such as 30s")
			return
		}
		wait = min(d, MaxWait)
	}
	ctx, cancel := context.WithTimeout(WithAgent(r.Context(), r.URL.Query().Get("agent")), wait)
	defer cancel()
	list, err := h.srv.Assignments(ctx, region, r.URL.Query().Get("revision"))
	switch {
	case err == nil && list != nil:
		httpjson.Write(w, http.StatusOK, list)
	case err == nil, errors.Is(err, ErrNotModified), errors.Is(err, context.DeadlineExceeded) && r.Context().Err() == nil:
		w.WriteHeader(http.StatusNotModified)
	case r.Context().Err() != nil:
		// The agent went away; nobody reads the answer.
	default:
		serverError(w, err)
	}
}

func (h *handler) results(w http.ResponseWriter, r *http.Request) {
	region, ok := h.authenticate(w, r)
	if !ok {
		return
	}
	var batch ResultBatch
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, MaxBatchBytes))
	if err := dec.Decode(&batch); err != nil {
		writeError(w, http.StatusBadRequest, "VALIDATION_ERROR", "decode result batch: "+textutil.Truncate(err.Error(), 200))
		return
	}
	for i := range batch.Results {
		if res := &batch.Results[i]; res.ID == "" || res.MonitorID == "" {
			writeError(w, http.StatusBadRequest, "VALIDATION_ERROR", fmt.Sprintf("results[%d]: id and monitor_id are required", i))
			return
		}
	}
	resp, err := h.srv.IngestResults(r.Context(), region, &batch)
	switch {
	case err == nil:
		httpjson.Write(w, http.StatusOK, resp)
	case errors.Is(err, ErrForbidden):
		h.fail(r)
		writeError(w, http.StatusForbidden, "FORBIDDEN", textutil.Truncate(err.Error(), 300))
	default:
		serverError(w, err)
	}
}

// authenticate returns the region the request's bearer token speaks for.
// A token the server recognizes from memory is accepted at once, so a good
// token never waits for other clients' failures (behind an Ingress without
// trusted proxies every agent shares the proxy's address). Any other token
// is looked at only while its client address is under its failure limit,
// else answered 429; a refusal counts against the address. It reads
// nothing but the headers.
func (h *handler) authenticate(w http.ResponseWriter, r *http.Request) (string, bool) {
	token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	token = strings.TrimSpace(token)
	region, err := h.srv.Recognize(r.Context(), token)
	if err != nil {
		serverError(w, err)
		return "", false
	}
	if region != "" {
		return region, true
	}
	if d := h.failures.Peek(ratelimit.ClientKey(r), h.now()); !d.Allowed {
		secs := strconv.Itoa(ratelimit.Seconds(d.Reset))
		w.Header().Set("Retry-After", secs)
		writeError(w, http.StatusTooManyRequests, "RATE_LIMITED", "too many failed requests from this address; retry in "+secs+" s")
		return "", false
	}
	region, err = h.srv.Authenticate(r.Context(), token)
	switch {
	case err == nil && region != "":
		return region, true
	case err == nil, errors.Is(err, ErrUnauthorized), errors.Is(err, ErrForbidden):
		h.fail(r)
		writeError(w, http.StatusUnauthorized, "UNAUTHORIZED", "missing or invalid token")
	default:
		serverError(w, err)
	}
	return "", false
}

// fail counts a failed request against r's client address.
func (h *handler) fail(r *http.Request) {
	h.failures.Take(ratelimit.ClientKey(r), h.now())
}

// errorBody is the JSON error envelope of the probe API.
type errorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func serverError(w http.ResponseWriter, err error) {
	if errors.Is(err, ErrUnauthorized) {
		writeError(w, http.StatusUnauthorized, "UNAUTHORIZED", "missing or invalid token")
		return
	}
	writeError(w, http.StatusInternalServerError, "INTERNAL_ERROR", "internal error")
}

func writeError(w http.ResponseWriter, code int, kind, msg string) {
	var b errorBody
	b.Error.Code, b.Error.Message = kind, msg
	httpjson.Write(w, code, b)
}

// drain reads and discards a little of body so the connection can be reused.
func drain(body io.ReadCloser) {
	_, _ = io.Copy(io.Discard, io.LimitReader(body, 64<<10))
	_ = body.Close()
}

type agentKey struct{}

// WithAgent tags a request context with the calling agent's id (the agent=…
// parameter of a long poll), for the server's contact tracking.
func WithAgent(ctx context.Context, agent string) context.Context {
	if agent == "" {
		return ctx
	}
	return context.WithValue(ctx, agentKey{}, agent)
}

// AgentFrom returns the agent id WithAgent put on ctx, or "".
func AgentFrom(ctx context.Context) string {
	a, _ := ctx.Value(agentKey{}).(string)
	return a
}
