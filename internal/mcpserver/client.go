package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// maxResponseBytes bounds what the client reads from one API response.
const maxResponseBytes = 16 << 20

// Client is a small REST client of the documented API. It sends the
// caller's credential on every request, so a tool can do exactly what the
// key can do.
type Client struct {
	// BaseURL is the API base URL without a trailing slash.
	BaseURL string
	// Key is the bearer credential.
	Key string
	// HTTP sends the requests.
	HTTP *http.Client
	// beforeWrite, when set, is called before every request that is not a
	// GET; an error stops the request (the session write limits).
	beforeWrite func() error
}

// APIError is an error answer of the REST API in the specification's
// shape: `error`, `code`, `details`, and `errors` for validation failures.
type APIError struct {
	Status  int
	Code    string
	Message string
	Details any
	Fields  []FieldError
	// RequiredPlan is set on FEATURE_NOT_AVAILABLE.
	RequiredPlan string
	// RetryAfter is the Retry-After of a 429, in seconds (0 when absent).
	RetryAfter int
}

// FieldError is one entry of a validation error.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// Error renders the error for the assistant: status, code and message,
// field errors, and for a 429 when to retry.
func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "API error %d", e.Status)
	if e.Code != "" {
		fmt.Fprintf(&b, " %s", e.Code)
	}
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	for _, f := range e.Fields {
		fmt.Fprintf(&b, "; %s: %s", f.Field, f.Message)
	}
	if e.Details != nil {
		if raw, err := json.Marshal(e.Details); err == nil && string(raw) != "null" && string(raw) != `""` {
			fmt.Fprintf(&b, " (details: %s)", raw)
		}
	}
	if e.RequiredPlan != "" {
		fmt.Fprintf(&b, " (required plan: %s)", e.RequiredPlan)
	}
	switch e.Status {
	case http.StatusTooManyRequests:
		if e.RetryAfter > 0 {
			fmt.Fprintf(&b, ". Rate limited: retry after %d seconds (Retry-After).", e.RetryAfter)
		} else {
			b.WriteString(". Rate limited: retry later (see Retry-After).")
		}
	case http.StatusUnauthorized:
		b.WriteString(". The API key is missing, invalid, deleted or disabled.")
	}
	if e.Code == "READ_ONLY_ACCESS" {
		b.WriteString(". This API key is read-only: changes are refused.")
	}
	return b.String()
}

// IsStatus reports whether err is an APIError with the given status.
func IsStatus(err error, status int) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status == status
}

// newRequest builds a request to path (with query q) with an optional JSON
// body.
func (c *Client) newRequest(ctx context.Context, method, path string, q url.Values, body any) (*http.Request, error) {
	u := strings.TrimSuffix(c.BaseURL, "/") + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("encode request body: %w", err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "uptime-operator-mcp")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Key != "" {
		if c.Key != "" {
			req.Header.Set("Authorization", "Bearer "+c.Key)
		}
	}
	return req, nil
}

// Do sends one request and decodes a successful JSON answer into out (when
// out is non-nil and there is a body). Error answers become *APIError.
func (c *Client) Do(ctx context.Context, method, path string, q url.Values, body, out any) error {
	if method != http.MethodGet && c.beforeWrite != nil {
		if err := c.beforeWrite(); err != nil {
			return err
		}
	}
	req, err := c.newRequest(ctx, method, path, q, body)
	if err != nil {
		return err
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("call %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return fmt.Errorf("read answer of %s %s: %w", method, path, err)
	}
	if resp.StatusCode >= 300 {
		return decodeAPIError(resp, raw)
	}
	if out == nil || len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("decode answer of %s %s: %w", method, path, err)
	}
	return nil
}

// Get is Do with GET.
func (c *Client) Get(ctx context.Context, path string, q url.Values, out any) error {
	return c.Do(ctx, http.MethodGet, path, q, nil, out)
}

// decodeAPIError maps an error answer to *APIError. Bodies that are not
// JSON (some 429s are plain text) become the message.
func decodeAPIError(resp *http.Response, raw []byte) *APIError {
	e := &APIError{Status: resp.StatusCode}
	if ra := resp.Header.Get("Retry-After"); ra != "" {
		if n, err := strconv.Atoi(strings.TrimSpace(ra)); err == nil {
			e.RetryAfter = n
		} else if t, err := http.ParseTime(ra); err == nil {
			e.RetryAfter = max(1, int(time.Until(t).Seconds()))
		}
	}
	var body struct {
		Error        string          `json:"error"`
		Code         string          `json:"code"`
		Details      any             `json:"details"`
		Errors       []FieldError    `json:"errors"`
		RequiredPlan string          `json:"required_plan"`
		Message      json.RawMessage `json:"message"`
	}
	if err := json.Unmarshal(raw, &body); err == nil {
		e.Code, e.Message, e.Details, e.Fields, e.RequiredPlan = body.Code, body.Error, body.Details, body.Errors, body.RequiredPlan
	} else {
		e.Message = strings.TrimSpace(string(raw))
		if len(e.Message) > 500 {
			e.Message = e.Message[:500] + "…"
		}
	}
	if e.Message == "" {
		e.Message = http.StatusText(resp.StatusCode)
	}
	return e
}

// pathEscape escapes one path segment (ids and monitoring-as-code keys,
// which may contain '/').
func pathEscape(s string) string { return url.PathEscape(s) }
