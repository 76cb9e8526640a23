package probes

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

const (
	// defaultMaxResponseBytes bounds body reads when the monitor sets none.
	defaultMaxResponseBytes = 1 << 20
	// maxMaxResponseBytes is the largest max_response_bytes accepted.
	maxMaxResponseBytes = 10 << 20
	// defaultMaxRedirects is followed when max_redirects is unset.
	defaultMaxRedirects = 5
	// userAgent identifies probe requests to targets.
	userAgent = "uptime-operator-probe/1"
)

// ErrorRedirects is the error type of a redirect chain longer than
// max_redirects.
const ErrorRedirects = "too_many_redirects"

var errTooManyRedirects = errors.New("too many redirects")

// httpRequest is one request of an http, api or multistep check.
type httpRequest struct {
	Method   string
	URL      string
	Headers  map[string]string
	Body     string
	MaxBytes int64
	// Bound names the headers that hold credentials (values read from
	// Secrets) with the origin each may be sent to
	// (probeapi.Assignment.Bound); nil when there are none.
	Bound map[string]string
	// BodyBound is the origin a body holding a multistep step's secret may
	// be sent to ("" for none); nil when the body holds no secret.
	BodyBound *string
	// Region is sent as the RegionHeader so targets can tell vantage points
	// apart (firewall allow-lists, per-region debugging).
	Region string
}

// RegionHeader names the probe region in every HTTP request a check sends.
const RegionHeader = "X-Uptime-Probe-Region"

// httpOutcome is a fetched response with its measurements.
type httpOutcome struct {
	response
	FinalURL  string
	Redirects int
	Truncated bool
	Timings   probeapi.Timings
	TLS       *probeapi.TLSInfo
}

// newHTTPClient returns a net/http client for one mcp check (the MCP SDK
// needs an *http.Client): a fresh Transport dialing through the guard (so
// every redirect hop is checked), without keep-alive or HTTP/2. http, api
// and multistep checks use the lighter httpSession instead.
func newHTTPClient(env *Env, timeout time.Duration, maxRedirects int, jar http.CookieJar) *http.Client {
	tr := &http.Transport{
		DialContext:            env.dialer(timeout).DialContext,
		TLSClientConfig:        env.tlsConfig(""),
		TLSHandshakeTimeout:    timeout,
		DisableKeepAlives:      true,
		ForceAttemptHTTP2:      false,
		TLSNextProto:           map[string]func(string, *tls.Conn) http.RoundTripper{},
		MaxResponseHeaderBytes: maxResponseHeaderBytes,
		Proxy:                  nil,
	}
	return &http.Client{
		Transport: tr,
		Jar:       jar,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if maxRedirects == 0 {
				return http.ErrUseLastResponse
			}
			if len(via) > maxRedirects {
				return errTooManyRedirects
			}
			return nil
		},
	}
}

// newJar returns an empty cookie jar.
func newJar() http.CookieJar {
	jar, _ := cookiejar.New(nil)
	return jar
}

// unwrapURLError drops the *url.Error wrapper, whose message repeats the
// method and URL, keeping the cause.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s: %w", strings.ToLower(ue.Op), ue.Err)
	}
	return err
}

// statusOK applies expected_status_codes, or 2xx/3xx when none are set.
func statusOK(code int, expected []int32) bool {
	if len(expected) > 0 {
		return slices.Contains(expected, int32(code))
	}
	return code >= 200 && code < 400
}

// maxRedirects returns the configured redirect limit clamped to 0-5.
func maxRedirects(p *int32) int {
	if p == nil {
		return defaultMaxRedirects
	}
	return max(0, min(int(*p), defaultMaxRedirects))
}

// orZero is *p, or 0 for nil (an unset limit).
func orZero(p *int32) int64 {
	if p == nil {
		return 0
	}
	return int64(*p)
}

// httpDetails is Result.Details of http and api checks.
type httpDetails struct {
	FinalURL      string            `json:"final_url,omitempty"`
	Redirects     int               `json:"redirects"`
	BodyBytes     int               `json:"body_bytes"`
	BodyTruncated bool              `json:"body_truncated,omitempty"`
	Assertions    []assertionResult `json:"assertions,omitempty"`
}

func init() { register(checkHTTP, monv1.MonitorHTTP, monv1.MonitorAPI) }

// checkHTTP runs http and api monitors.
func checkHTTP(ctx context.Context, a *probeapi.Assignment, env *Env) probeapi.Result {
	cfg := a.Config.HTTP
	if cfg == nil {
		cfg = &monv1.HTTPConfig{}
	}
	if a.URL == "" {
		return failure(probeapi.StatusUnknown, probeapi.ErrorInvalidConfig, errors.New("url is required"))
	}
	s := &httpSession{env: env, maxRedirects: maxRedirects(cfg.MaxRedirects)}
	if cfg.ReuseConnection && reuseMethod(string(cfg.Method), cfg.Body) {
		s.reuse = a.ID
	}
	out, err := s.fetch(ctx, httpRequest{
		Method: string(cfg.Method), URL: a.URL, Headers: probeapi.HeaderText(cfg.Headers), Body: cfg.Body,
		MaxBytes: orZero(cfg.MaxResponseBytes), Region: env.Region, Bound: a.Bound(-1),
	})
	return httpVerdict(out, err, cfg.ExpectedStatusCodes, cfg)
}

// httpVerdict turns a fetched response into a result: status codes,
// keyword, assertions, then response-time thresholds.
func httpVerdict(out *httpOutcome, err error, expected []int32, cfg *monv1.HTTPConfig) probeapi.Result {
	if err != nil {
		res := fromError(err)
		if errors.Is(err, errTooManyRedirects) {
			res = failure(probeapi.StatusDown, ErrorRedirects, err)
		}
		if out != nil {
			res.ResponseTimeMs = ms(out.Elapsed)
			res.Timings = &out.Timings
		}
		return res
	}
	code := out.StatusCode
	res := probeapi.Result{
		Status: probeapi.StatusUp, StatusCode: &code, ResponseTimeMs: ms(out.Elapsed),
		Timings: &out.Timings, TLS: out.TLS,
	}
	d := httpDetails{FinalURL: out.FinalURL, Redirects: out.Redirects, BodyBytes: len(out.Body), BodyTruncated: out.Truncated}
	fail := func(typ, msg string) {
		if res.Status == probeapi.StatusUp {
			res.Status, res.ErrorType, res.ErrorMessage = probeapi.StatusDown, typ, msg
		}
	}
	if !statusOK(code, expected) {
		fail(probeapi.ErrorHTTPStatus, fmt.Sprintf("unexpected status code %d", code))
	}
	if cfg.Keyword != "" && !containsKeyword(out.Body, cfg.Keyword, cfg.KeywordCaseInsensitive) {
		fail(probeapi.ErrorKeyword, fmt.Sprintf("keyword %q not found in the first %d bytes", truncateString(cfg.Keyword, 64), len(out.Body)))
	}
	if len(cfg.Assertions) > 0 {
		var msg string
		d.Assertions, msg = evaluateAssertions(cfg.Assertions, &out.response)
		if msg != "" {
			fail(probeapi.ErrorAssertion, msg)
		}
	}
	applyResponseTime(&res, out.Elapsed.Milliseconds(), orZero(cfg.MaxResponseTimeMs), orZero(cfg.DegradedResponseTimeMs))
	res.Details = d.json()
	return res
}

// json encodes the details as json.Marshal does, without reflection for
// the common case of no assertions (every plain http check).
func (d *httpDetails) json() json.RawMessage {
	if len(d.Assertions) > 0 {
		return details(d)
	}
	b := make([]byte, 0, 64+len(d.FinalURL))
	if d.FinalURL != "" {
		b = append(b, `{"final_url":`...)
		b = probeapi.AppendString(b, d.FinalURL)
		b = append(b, `,"redirects":`...)
	} else {
		b = append(b, `{"redirects":`...)
	}
	b = strconv.AppendInt(b, int64(d.Redirects), 10)
	b = append(b, `,"body_bytes":`...)
	b = strconv.AppendInt(b, int64(d.BodyBytes), 10)
	if d.BodyTruncated {
		b = append(b, `,"body_truncated":true`...)
	}
	return append(b, '}')
}

func containsKeyword(body []byte, kw string, fold bool) bool {
	if fold {
		return strings.Contains(strings.ToLower(string(body)), strings.ToLower(kw))
	}
	return strings.Contains(string(body), kw)
}
