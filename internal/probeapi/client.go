package probeapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/backoff"
)

// Client is the agent side of the probe API.
type Client struct {
	// BaseURL is the manager's probe API address, for example
	// https://uptime-operator.uptime-system.svc:8443.
	BaseURL string
	// Token returns the bearer token per request, so rotated ServiceAccount
	// tokens are picked up. Nil sends no token.
	Token func() (string, error)
	// HTTPClient defaults to a client without a global timeout (long polls
	// are bounded by their context and wait).
	HTTPClient *http.Client
	// MaxRetries is the number of retries after the first attempt (default 3;
	// negative disables retries).
	MaxRetries int
	// Backoff is the first retry delay, doubled per retry (default 200ms);
	// half of each delay is random (package backoff), so agents that failed
	// together do not retry together.
	Backoff time.Duration
	// AgentID names the agent in its long polls (the agent=… parameter), as
	// result batches name it, so the manager counts one agent, not two.
	AgentID string
}

// TokenFile returns a Client.Token func that rereads path on every call.
func TokenFile(path string) func() (string, error) {
	return func() (string, error) {
		b, err := os.ReadFile(path)
		if err != nil {
			return "", fmt.Errorf("read token file: %w", err)
		}
		return strings.TrimSpace(string(b)), nil
	}
}

// StatusError is a non-success answer from the server.
type StatusError struct {
	StatusCode int
	Code       string
	Message    string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("probe api answered %d %s: %s", e.StatusCode, e.Code, e.Message)
}

func (e *StatusError) retryable() bool {
	return e.StatusCode == http.StatusTooManyRequests || e.StatusCode >= 500
}

// Assignments long-polls for the region's assignments. It returns
// (nil, nil) when the revision is unchanged after wait.
func (c *Client) Assignments(ctx context.Context, region, revision string, wait time.Duration) (*AssignmentList, error) {
	q := url.Values{"region": {region}, "revision": {revision}, "wait": {wait.String()}}
	if c.AgentID != "" {
		q.Set("agent", c.AgentID)
	}
	var list AssignmentList
	notModified := false
	err := c.do(ctx, http.MethodGet, PathAssignments+"?"+q.Encode(), nil, func(resp *http.Response) error {
		if resp.StatusCode == http.StatusNotModified {
			notModified = true
			return nil
		}
		return json.NewDecoder(resp.Body).Decode(&list)
	})
	if err != nil || notModified {
		return nil, err
	}
	return &list, nil
}

// PushResults posts a batch. Retrying is safe: the server skips result ids
// it already has.
func (c *Client) PushResults(ctx context.Context, batch *ResultBatch) (ResultsResponse, error) {
	body := batch.AppendJSON(make([]byte, 0, 64+320*len(batch.Results)))
	var out ResultsResponse
	err := c.do(ctx, http.MethodPost, PathResults, body, func(resp *http.Response) error {
		return json.NewDecoder(resp.Body).Decode(&out)
	})
	return out, err
}

func (c *Client) do(ctx context.Context, method, path string, body []byte, decode func(*http.Response) error) error {
	retries := c.MaxRetries
	if retries == 0 {
		retries = 3
	}
	retry := backoff.Policy{Base: c.Backoff, Jitter: 0.5}
	if retry.Base <= 0 {
		retry.Base = 200 * time.Millisecond
	}
	var err error
	for attempt := 0; ; attempt++ {
		err = c.once(ctx, method, path, body, decode)
		var se *StatusError
		if err == nil || ctx.Err() != nil || (errors.As(err, &se) && !se.retryable()) || attempt >= retries {
			return err
		}
		t := time.NewTimer(retry.Delay(attempt))
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}

func (c *Client) once(ctx context.Context, method, path string, body []byte, decode func(*http.Response) error) error {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.BaseURL, "/")+path, rd)
	if err != nil {
		return fmt.Errorf("build probe api request: %w", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.Token != nil {
		tok, err := c.Token()
		if err != nil {
			return err
		}
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
	}
	hc := c.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("call probe api %s: %w", path, err)
	}
	defer drain(resp.Body)
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusNotModified {
		se := &StatusError{StatusCode: resp.StatusCode}
		var eb errorBody
		if json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&eb) == nil {
			se.Code, se.Message = eb.Error.Code, eb.Error.Message
		}
		return se
	}
	if err := decode(resp); err != nil {
		return fmt.Errorf("decode probe api answer: %w", err)
	}
	return nil
}
