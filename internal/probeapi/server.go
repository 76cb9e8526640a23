package probeapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/httpjson"
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
// with its store and TokenReview; MemoryServer is a small in-memory
// implementation for tests and dev mode.
type Server interface {
	// Authorize checks the bearer token (possibly empty) for the region.
	Authorize(ctx context.Context, token, region string) error
	// Assignments returns the region's list at once when its revision differs
	// from known, else blocks until it does or ctx ends. When ctx ends it
	// returns ctx.Err() or ErrNotModified.
	Assignments(ctx context.Context, region, known string) (*AssignmentList, error)
	// IngestResults stores a batch, skipping results whose id is already
	// stored, and reports how many were stored and skipped.
	IngestResults(ctx context.Context, batch *ResultBatch) (ResultsResponse, error)
}

// NewHandler serves the probe API endpoints on top of srv.
func NewHandler(srv Server) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+PathAssignments, func(w http.ResponseWriter, r *http.Request) {
		region := r.URL.Query().Get("region")
		if region == "" {
			writeError(w, http.StatusBadRequest, "VALIDATION_ERROR", "region is required")
			return
		}
		if !authorize(w, r, srv, region) {
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
		list, err := srv.Assignments(ctx, region, r.URL.Query().Get("revision"))
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
	})
	mux.HandleFunc("POST "+PathResults, func(w http.ResponseWriter, r *http.Request) {
		var batch ResultBatch
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, MaxBatchBytes))
		if err := dec.Decode(&batch); err != nil {
			writeError(w, http.StatusBadRequest, "VALIDATION_ERROR", "decode result batch: "+textutil.Truncate(err.Error(), 200))
			return
		}
		if batch.Region == "" {
			writeError(w, http.StatusBadRequest, "VALIDATION_ERROR", "region is required")
			return
		}
		if !authorize(w, r, srv, batch.Region) {
			return
		}
		for i := range batch.Results {
			res := &batch.Results[i]
			if res.ID == "" || res.MonitorID == "" {
				writeError(w, http.StatusBadRequest, "VALIDATION_ERROR", fmt.Sprintf("results[%d]: id and monitor_id are required", i))
				return
			}
			if res.Region == "" {
				res.Region = batch.Region
			}
		}
		resp, err := srv.IngestResults(r.Context(), &batch)
		if err != nil {
			serverError(w, err)
			return
		}
		httpjson.Write(w, http.StatusOK, resp)
	})
	return mux
}

func authorize(w http.ResponseWriter, r *http.Request, srv Server, region string) bool {
	token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	err := srv.Authorize(r.Context(), strings.TrimSpace(token), region)
	switch {
	case err == nil:
		return true
	case errors.Is(err, ErrForbidden):
		writeError(w, http.StatusForbidden, "FORBIDDEN", "token may not act for region "+region)
	case errors.Is(err, ErrUnauthorized):
		writeError(w, http.StatusUnauthorized, "UNAUTHORIZED", "missing or invalid token")
	default:
		serverError(w, err)
	}
	return false
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
