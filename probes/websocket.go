package probes

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

// ErrorClosed is the error type of a websocket check whose connection the
// server closed before replying.
const ErrorClosed = "closed"

const (
	// maxWebSocketReply bounds the reply read; a longer one is down.
	maxWebSocketReply = 1 << 20
	// wsCloseGrace is how long a check waits for the server's answer to
	// its close frame before it drops the connection.
	wsCloseGrace = time.Second
)

// wsParams is what a websocket check runs: the monitor's config with its
// header values read from their Secrets.
type wsParams struct {
	URL          string
	Headers      map[string]string
	Subprotocols []string
	// Message is sent once connected; empty sends nothing and waits for
	// nothing.
	Message string
	// ExpectedReply is text the reply must contain.
	ExpectedReply string
	// Assertions read the reply as an api check's assertions read a
	// response.
	Assertions []monv1.Assertion
	// MaxRedirects is the redirect limit of the opening handshake.
	MaxRedirects int
	// MaxResponseTimeMs and DegradedResponseTimeMs are the thresholds; zero
	// is unset.
	MaxResponseTimeMs, DegradedResponseTimeMs int64
}

// wsDetails is Result.Details of websocket checks.
type wsDetails struct {
	// URL is where the handshake ended, after redirects.
	URL         string            `json:"url,omitempty"`
	Redirects   int               `json:"redirects"`
	Subprotocol string            `json:"subprotocol,omitempty"`
	ReplyBytes  int               `json:"reply_bytes,omitempty"`
	Binary      bool              `json:"reply_binary,omitempty"`
	CloseCode   int               `json:"close_code,omitempty"`
	Assertions  []assertionResult `json:"assertions,omitempty"`
}

// wsConns records the connections of one check's handshake (one per
// redirect hop) so that the check can drop them when the server does not
// answer its close frame, and the timings of the last one.
type wsConns struct {
	mu       sync.Mutex
	conns    []net.Conn
	timings  probeapi.Timings
	start    time.Time
	connect  time.Time
	tlsStart time.Time
}

func (w *wsConns) dial(d *net.Dialer) func(context.Context, string, string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err == nil {
			w.mu.Lock()
			w.conns = append(w.conns, c)
			w.mu.Unlock()
		}
		return c, err
	}
}

func (w *wsConns) closeAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range w.conns {
		_ = c.Close()
	}
}

// trace measures the last hop of the handshake.
func (w *wsConns) trace() *httptrace.ClientTrace {
	since := func(t time.Time) float64 { return fms(time.Since(t)) }
	return &httptrace.ClientTrace{
		ConnectStart: func(string, string) { w.mu.Lock(); w.connect = time.Now(); w.mu.Unlock() },
		ConnectDone: func(_, _ string, err error) {
			w.mu.Lock()
			if err == nil {
				w.timings.ConnectMs = since(w.connect)
			}
			w.mu.Unlock()
		},
		TLSHandshakeStart: func() { w.mu.Lock(); w.tlsStart = time.Now(); w.mu.Unlock() },
		TLSHandshakeDone: func(_ tls.ConnectionState, err error) {
			w.mu.Lock()
			if err == nil {
				w.timings.TLSMs = since(w.tlsStart)
			}
			w.mu.Unlock()
		},
		GotFirstResponseByte: func() { w.mu.Lock(); w.timings.FirstByteMs = since(w.start); w.mu.Unlock() },
	}
}

func init() { register(checkWebSocket, monv1.MonitorWebSocket) }

// checkWebSocket runs a websocket monitor's assignment: its config with
// header values already read from their Secrets by the manager.
func checkWebSocket(ctx context.Context, a *probeapi.Assignment, env *Env) probeapi.Result {
	c := a.Config.WebSocket
	if c == nil {
		return failure(probeapi.StatusUnknown, probeapi.ErrorInvalidConfig, errors.New("url is required"))
	}
	return probeWebSocket(ctx, env, &wsParams{URL: c.URL, Headers: probeapi.HeaderText(c.Headers), Subprotocols: c.Subprotocols,
		Message: c.Message, ExpectedReply: c.ExpectedReply, Assertions: c.Assertions, MaxRedirects: maxRedirects(c.MaxRedirects),
		MaxResponseTimeMs: orZero(c.MaxResponseTimeMs), DegradedResponseTimeMs: orZero(c.DegradedResponseTimeMs)})
}

// probeWebSocket opens a WebSocket connection to p.URL, sends p.Message
// when set and reads one reply, which must contain p.ExpectedReply and
// pass p.Assertions; then the response-time thresholds, and a normal
// close. The handshake dials through the address guard on every redirect
// hop; wss:// is verified against the agent's roots.
func probeWebSocket(ctx context.Context, env *Env, p *wsParams) probeapi.Result {
	u, err := url.Parse(p.URL)
	if err != nil || (u.Scheme != "ws" && u.Scheme != "wss") || u.Host == "" {
		return failure(probeapi.StatusUnknown, probeapi.ErrorInvalidConfig, errors.New("url must be a ws:// or wss:// URL"))
	}
	if err := validHeaders(p.Headers); err != nil {
		return failure(probeapi.StatusUnknown, probeapi.ErrorInvalidConfig, err)
	}
	conns := &wsConns{start: time.Now()}
	client := &http.Client{
		Transport: &http.Transport{
			DialContext:            conns.dial(env.checkDialer()),
			TLSClientConfig:        env.tlsConfig(""),
			DisableKeepAlives:      true,
			TLSNextProto:           map[string]func(string, *tls.Conn) http.RoundTripper{},
			MaxResponseHeaderBytes: maxResponseHeaderBytes,
			Proxy:                  nil, // a proxy would connect past the guard
		},
		CheckRedirect: func(_ *http.Request, via []*http.Request) error {
			if len(via) > p.MaxRedirects {
				return errTooManyRedirects
			}
			return nil
		},
	}
	header := http.Header{"User-Agent": {userAgent}}
	if env.Region != "" {
		header.Set(RegionHeader, env.Region)
	}
	host := ""
	for k, v := range p.Headers {
		if strings.EqualFold(k, "Host") {
			host = v
			continue
		}
		header.Set(k, v)
	}
	start := conns.start
	c, resp, err := websocket.Dial(httptrace.WithClientTrace(ctx, conns.trace()), p.URL,
		&websocket.DialOptions{HTTPClient: client, HTTPHeader: header, Host: host, Subprotocols: p.Subprotocols})
	d := wsDetails{}
	if resp != nil && resp.Request != nil {
		d.URL = wsURL(resp.Request.URL)
		for r := resp.Request; r.Response != nil; r = r.Response.Request {
			d.Redirects++
		}
	}
	if err != nil {
		res := wsHandshakeError(err, resp)
		res.ResponseTimeMs = ms(time.Since(start))
		res.Details = details(d)
		return res
	}
	defer func() {
		// A server that never answers the close frame must not hold the
		// check: its connection is dropped after wsCloseGrace.
		t := time.AfterFunc(wsCloseGrace, conns.closeAll)
		_ = c.Close(websocket.StatusNormalClosure, "")
		t.Stop()
	}()
	c.SetReadLimit(maxWebSocketReply)
	d.Subprotocol = c.Subprotocol()
	res := probeapi.Result{Status: probeapi.StatusUp, TLS: tlsInfo(resp.TLS)}
	conns.mu.Lock()
	timings := conns.timings
	conns.mu.Unlock()
	res.Timings = &timings
	if p.Message == "" {
		elapsed := time.Since(start)
		res.ResponseTimeMs = ms(elapsed)
		applyResponseTime(&res, elapsed.Milliseconds(), p.MaxResponseTimeMs, p.DegradedResponseTimeMs)
		res.Details = details(d)
		return res
	}
	reply, binary, err := wsExchange(ctx, c, p.Message)
	elapsed := time.Since(start)
	res.ResponseTimeMs = ms(elapsed)
	if err != nil {
		status, typ, msg := wsReadError(ctx, err)
		res.Status, res.ErrorType, res.ErrorMessage = status, typ, msg
		if code := websocket.CloseStatus(err); code != -1 {
			d.CloseCode = int(code)
		}
		res.Details = details(d)
		return res
	}
	d.ReplyBytes, d.Binary = len(reply), binary
	if p.ExpectedReply != "" && !strings.Contains(string(reply), p.ExpectedReply) {
		res.Status, res.ErrorType = probeapi.StatusDown, probeapi.ErrorResponseMismatch
		res.ErrorMessage = fmt.Sprintf("reply does not contain %q", truncateString(p.ExpectedReply, 64))
	}
	if len(p.Assertions) > 0 {
		var msg string
		d.Assertions, msg = evaluateAssertions(p.Assertions, &response{StatusCode: resp.StatusCode, Header: resp.Header, Body: reply, Elapsed: elapsed})
		if msg != "" && res.Status == probeapi.StatusUp {
			res.Status, res.ErrorType, res.ErrorMessage = probeapi.StatusDown, probeapi.ErrorAssertion, msg
		}
	}
	applyResponseTime(&res, elapsed.Milliseconds(), p.MaxResponseTimeMs, p.DegradedResponseTimeMs)
	res.Details = details(d)
	return res
}

// wsExchange sends msg as a text message and reads the next data message.
func wsExchange(ctx context.Context, c *websocket.Conn, msg string) ([]byte, bool, error) {
	if err := c.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
		return nil, false, err
	}
	typ, reply, err := c.Read(ctx)
	return reply, typ == websocket.MessageBinary, err
}

// wsHandshakeError classifies a failed opening handshake: the guard, the
// network and TLS as for http checks, a status other than 101 as an HTTP
// status error, any other refusal as a protocol error.
func wsHandshakeError(err error, resp *http.Response) probeapi.Result {
	var ue *url.Error
	switch {
	case errors.Is(err, errTooManyRedirects):
		return failure(probeapi.StatusDown, ErrorRedirects, err)
	case errors.As(err, &ue):
		res := fromError(ue.Err)
		res.ErrorMessage = "handshake: " + ue.Err.Error()
		return res
	case resp != nil && resp.StatusCode != http.StatusSwitchingProtocols:
		code := resp.StatusCode
		res := failure(probeapi.StatusDown, probeapi.ErrorHTTPStatus,
			fmt.Errorf("handshake answered %d, not 101 Switching Protocols", code))
		res.StatusCode = &code
		return res
	case resp != nil:
		return failure(probeapi.StatusDown, probeapi.ErrorProtocol, fmt.Errorf("handshake: %w", err))
	}
	return fromError(err)
}

// wsReadError classifies a failed exchange: the server closing the
// connection, a reply over the size limit, the timeout.
func wsReadError(ctx context.Context, err error) (probeapi.Status, string, string) {
	var ce websocket.CloseError
	switch {
	case errors.As(err, &ce):
		msg := fmt.Sprintf("the server closed the connection before replying (%d %s)", int(ce.Code), ce.Code)
		if ce.Reason != "" {
			msg += ": " + truncateString(ce.Reason, 128)
		}
		return probeapi.StatusDown, ErrorClosed, msg
	case errors.Is(err, websocket.ErrMessageTooBig):
		return probeapi.StatusDown, probeapi.ErrorProtocol, fmt.Sprintf("reply larger than %d bytes", maxWebSocketReply)
	case ctx.Err() != nil:
		return probeapi.StatusDown, probeapi.ErrorNoResponse, "no reply before the timeout"
	}
	status, typ := classify(err)
	return status, typ, err.Error()
}

// wsURL shows a handshake URL with its ws scheme again.
func wsURL(u *url.URL) string {
	v := *u
	switch v.Scheme {
	case "http":
		v.Scheme = "ws"
	case "https":
		v.Scheme = "wss"
	}
	v.User = nil
	return v.String()
}
