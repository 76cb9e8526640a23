package probes

import (
	"bufio"
	"compress/gzip"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

// httpSession performs the HTTP requests of one check. Each request opens a
// new connection (that is what measures DNS, connect and TLS time) and runs
// entirely in the calling goroutine: dial through the guard, optional TLS
// handshake, one HTTP/1.1 exchange with "Connection: close", bounded body
// read, close. It follows redirects the way net/http's Client does, and
// keeps cookies across requests when jar is set (multistep checks).
//
// A net/http Transport would do the same work with a connection pool, a
// dialing goroutine and a read and a write goroutine per connection; for a
// single request per connection that machinery was most of an HTTP check's
// CPU time (see docs/performance.md).
type httpSession struct {
	env          *Env
	maxRedirects int
	jar          http.CookieJar
	// reuse names the monitor whose connections are kept open for its
	// next check (http.reuseConnection; see httpreuse.go); empty: every
	// request opens and closes its own.
	reuse string
}

// bufReaders recycles the response readers of finished checks.
var bufReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 4<<10) }}

// fetch performs req, following redirects, and reads at most req.MaxBytes of
// the final body.
func (s *httpSession) fetch(ctx context.Context, req httpRequest) (*httpOutcome, error) {
	method := strings.ToUpper(req.Method)
	if method == "" {
		method = http.MethodGet
	}
	out := &httpOutcome{}
	start := time.Now()
	fail := func(err error) (*httpOutcome, error) {
		out.Elapsed = time.Since(start)
		return out, fmt.Errorf("%s: %w", strings.ToLower(method), err)
	}
	u, err := url.Parse(req.URL)
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	if err := validHeaders(req.Headers); err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	host, body := "", req.Body
	for k, v := range req.Headers {
		if strings.EqualFold(k, "Host") {
			host = v
		}
	}
	var referer string
	if err := credentialsMayGo(u, req.Bound); err != nil {
		return nil, err
	}
	for {
		sent := req
		sent.Headers = boundTo(u, req.Headers, req.Bound)
		x := httpExchange{session: s, method: method, url: u, host: host, body: body, referer: referer, req: &sent, out: out, start: start}
		resp, err := x.do(ctx)
		if err != nil {
			return fail(err)
		}
		next, redirect := s.redirect(resp, method, u)
		if !redirect {
			return out, x.readBody(resp)
		}
		x.close()
		out.Redirects++
		if out.Redirects > s.maxRedirects {
			return fail(errTooManyRedirects)
		}
		if next.method != method {
			body = ""
		}
		if body != "" && req.BodyBound != nil {
			// 307 and 308 send the body again: one holding a step's
			// secret goes to its own origin only.
			if origin, _ := probeapi.URLOrigin(next.url); *req.BodyBound == "" || origin != *req.BodyBound {
				return fail(&credentialOriginError{origin: origin, bound: *req.BodyBound})
			}
		}
		if host != "" && !next.absolute {
			// A relative Location keeps the caller's Host header, as
			// net/http's Client does.
		} else {
			host = ""
		}
		if u.Scheme == "https" && next.url.Scheme != "https" {
			referer = ""
		} else {
			referer = (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath, RawQuery: u.RawQuery}).String()
		}
		if !sameOrSubdomain(u.Hostname(), next.url.Hostname()) {
			req.Headers = withoutSensitive(req.Headers)
		}
		u, method = next.url, next.method
	}
}

// redirectTarget is where a redirect leads.
type redirectTarget struct {
	url      *url.URL
	method   string
	absolute bool
}

// redirect reports whether resp is a redirect to follow, with net/http's
// rules: 301, 302 and 303 turn other methods than GET and HEAD into GET;
// 307 and 308 keep method and body; a redirect without Location is the
// final answer; with maxRedirects 0 the first answer is final.
func (s *httpSession) redirect(resp *http.Response, method string, u *url.URL) (redirectTarget, bool) {
	switch resp.StatusCode {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther:
		if method != http.MethodGet && method != http.MethodHead {
			method = http.MethodGet
		}
	case http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
	default:
		return redirectTarget{}, false
	}
	loc := resp.Header.Get("Location")
	if loc == "" || s.maxRedirects == 0 {
		return redirectTarget{}, false
	}
	ref, err := url.Parse(loc)
	if err != nil {
		return redirectTarget{}, false
	}
	return redirectTarget{url: u.ResolveReference(ref), method: method, absolute: ref.IsAbs()}, true
}

// httpExchange is one request and response on its own connection.
type httpExchange struct {
	session       *httpSession
	method        string
	url           *url.URL
	host, body    string
	referer       string
	req           *httpRequest
	out           *httpOutcome
	start         time.Time
	conn          net.Conn
	br            *bufio.Reader
	stop          func() bool
	acceptedGzip  bool
	dnsAt, dialAt time.Time
	dnsMs, dialMs float64
	traceMu       sync.Mutex
}

// do dials, writes the request and reads the response head.
func (x *httpExchange) do(ctx context.Context) (*http.Response, error) {
	u := x.url
	port, def := u.Port(), probeapi.DefaultPort(u.Scheme)
	if def == "" {
		return nil, fmt.Errorf("unsupported protocol scheme %q", u.Scheme)
	}
	if port == "" {
		port = def
	}
	if u.Host == "" {
		return nil, errors.New("no host in request URL")
	}
	if p := takeParked(x.session.reuseKey(u)); p != nil {
		resp, err := x.exchange(ctx, p.conn, p.br, p.tls)
		if err == nil {
			return resp, nil
		}
		// The server closed it while it was parked (or it broke): the
		// request goes again on a new connection, within the same check.
		x.close()
	}
	env := x.session.env
	deadline, hasDeadline := ctx.Deadline()
	timeout := time.Until(deadline)
	if !hasDeadline {
		timeout = 0
	}
	conn, err := x.dial(ctx, env, timeout, u.Hostname(), port)
	if err != nil {
		return nil, err
	}
	var info *probeapi.TLSInfo
	if u.Scheme == "https" {
		tlsStart := time.Now()
		tc := tls.Client(conn, env.tlsConfig(u.Hostname()))
		if hasDeadline {
			_ = conn.SetDeadline(deadline)
		}
		err := tc.HandshakeContext(ctx)
		x.out.Timings.TLSMs += fms(time.Since(tlsStart))
		if err != nil {
			_ = conn.Close()
			return nil, err
		}
		conn = tc
		cs := tc.ConnectionState()
		info = tlsInfo(&cs)
	}
	return x.exchange(ctx, conn, bufReaders.Get().(*bufio.Reader), info)
}

// exchange writes the request on conn (a new connection, or a parked one
// with its reader br) and reads the response head; info is conn's
// certificate. conn and br are the exchange's from then on (x.close).
func (x *httpExchange) exchange(ctx context.Context, conn net.Conn, br *bufio.Reader, info *probeapi.TLSInfo) (*http.Response, error) {
	u := x.url
	x.conn, x.br, x.out.TLS = conn, br, info
	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline)
	}
	// Ending ctx (agent shutdown) aborts blocked reads and writes at once.
	x.stop = context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	if err := x.writeRequest(); err != nil {
		x.close()
		return nil, err
	}
	// Response headers are limited as net/http's MaxResponseHeaderBytes
	// limits them: the reader stops at the bound until the head is parsed.
	src := &headLimit{conn: x.conn, left: maxResponseHeaderBytes + 4<<10}
	x.br.Reset(src)
	if _, err := x.br.Peek(1); err != nil {
		x.close()
		return nil, err
	}
	x.out.Timings.FirstByteMs = fms(time.Since(x.start))
	hreq := &http.Request{Method: x.method, URL: u}
	for {
		resp, err := http.ReadResponse(x.br, hreq)
		if err != nil {
			x.close()
			if src.left == 0 {
				return nil, fmt.Errorf("server response headers exceeded %d bytes; aborted", maxResponseHeaderBytes)
			}
			return nil, err
		}
		// Informational answers (100 Continue, 103 Early Hints) precede
		// the real one.
		if resp.StatusCode >= 100 && resp.StatusCode < 200 && resp.StatusCode != http.StatusSwitchingProtocols {
			continue
		}
		src.left = -1
		if jar := x.session.jar; jar != nil {
			if rc := resp.Cookies(); len(rc) > 0 {
				jar.SetCookies(u, rc)
			}
		}
		return resp, nil
	}
}

// dial connects to host:port through the guard and adds the DNS and
// connect times to the outcome. An IP literal needs no resolution, so its
// connect time is the dial itself; a name is dialed with the trace hooks of
// net (the ones net/http's Transport uses), which may run on several
// goroutines with Happy Eyeballs, hence the lock.
func (x *httpExchange) dial(ctx context.Context, env *Env, timeout time.Duration, host, port string) (net.Conn, error) {
	d := env.checkDialer()
	if _, ok := ctx.Deadline(); !ok {
		d = env.dialer(timeout)
	}
	addr := x.url.Host
	if x.url.Port() == "" {
		addr = net.JoinHostPort(host, port)
	}
	if _, err := netip.ParseAddr(host); err == nil {
		t0 := time.Now()
		conn, err := d.DialContext(ctx, "tcp", addr)
		x.out.Timings.ConnectMs += fms(time.Since(t0))
		return conn, err
	}
	var (
		mu            sync.Mutex
		dnsAt, dialAt time.Time
		dnsMs, dialMs float64
	)
	trace := &httptrace.ClientTrace{
		DNSStart: func(httptrace.DNSStartInfo) { mu.Lock(); dnsAt = time.Now(); mu.Unlock() },
		DNSDone: func(httptrace.DNSDoneInfo) {
			mu.Lock()
			dnsMs += fms(time.Since(dnsAt))
			mu.Unlock()
		},
		ConnectStart: func(_, _ string) { mu.Lock(); dialAt = time.Now(); mu.Unlock() },
		ConnectDone: func(_, _ string, _ error) {
			mu.Lock()
			dialMs += fms(time.Since(dialAt))
			mu.Unlock()
		},
	}
	conn, err := d.DialContext(httptrace.WithClientTrace(ctx, trace), "tcp", addr)
	mu.Lock()
	x.out.Timings.DNSMs += dnsMs
	x.out.Timings.ConnectMs += dialMs
	mu.Unlock()
	return conn, err
}

// writeRequest writes the request head and body in one write.
func (x *httpExchange) writeRequest() error {
	u := x.url
	host := x.host
	if host == "" {
		host = u.Host
	}
	bp := requestBufs.Get().(*[]byte)
	defer func() { requestBufs.Put(bp) }()
	b := (*bp)[:0]
	b = append(b, x.method...)
	b = append(b, ' ')
	b = append(b, u.RequestURI()...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, host...)
	b = append(b, "\r\n"...)
	ua, referer := userAgent, x.referer
	for k, v := range x.req.Headers {
		switch {
		case strings.EqualFold(k, "User-Agent"):
			ua = v
		case strings.EqualFold(k, "Referer"):
			referer = ""
		}
	}
	b = appendHeader(b, "User-Agent", ua)
	if x.req.Region != "" {
		b = appendHeader(b, RegionHeader, x.req.Region)
	}
	gzipOK := x.method != http.MethodHead
	for k, v := range x.req.Headers {
		switch {
		case strings.EqualFold(k, "Host"), strings.EqualFold(k, "User-Agent"):
			continue
		case strings.EqualFold(k, "Accept-Encoding"), strings.EqualFold(k, "Range"):
			gzipOK = false
		case strings.EqualFold(k, "Content-Length"), strings.EqualFold(k, "Connection"), strings.EqualFold(k, "Transfer-Encoding"):
			continue
		}
		b = appendHeader(b, http.CanonicalHeaderKey(k), v)
	}
	if referer != "" {
		b = appendHeader(b, "Referer", referer)
	}
	if jar := x.session.jar; jar != nil {
		for _, c := range jar.Cookies(u) {
			b = appendHeader(b, "Cookie", c.String())
		}
	}
	switch {
	case x.body != "":
		b = appendHeader(b, "Content-Length", strconv.Itoa(len(x.body)))
	case x.method == http.MethodPost || x.method == http.MethodPut || x.method == http.MethodPatch:
		b = append(b, "Content-Length: 0\r\n"...)
	}
	if gzipOK {
		// As net/http's Transport does, ask for gzip and decompress
		// transparently, so keywords and assertions see the text.
		b = append(b, "Accept-Encoding: gzip\r\n"...)
		x.acceptedGzip = true
	}
	if x.session.reuse == "" {
		b = append(b, "Connection: close\r\n"...)
	}
	b = append(b, "\r\n"...)
	b = append(b, x.body...)
	_, err := x.conn.Write(b)
	if cap(b) <= 4<<10 {
		*bp = b
	}
	return err
}

// requestBufs recycles the buffers requests are written from.
var requestBufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// maxResponseHeaderBytes bounds a response head.
const maxResponseHeaderBytes = 64 << 10

// headLimit reads from conn, at most left bytes while left ≥ 0.
type headLimit struct {
	conn net.Conn
	left int64
}

func (h *headLimit) Read(p []byte) (int, error) {
	if h.left < 0 {
		return h.conn.Read(p)
	}
	if h.left == 0 {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), h.left)]
	n, err := h.conn.Read(p)
	h.left -= int64(n)
	return n, err
}

func appendHeader(b []byte, k, v string) []byte {
	b = append(b, k...)
	b = append(b, ": "...)
	b = append(b, v...)
	return append(b, "\r\n"...)
}

// readBody reads at most the request's byte limit of the final response
// body into out, then parks the connection for the monitor's next check
// when it reuses connections and the connection can carry another
// exchange, or closes it.
func (x *httpExchange) readBody(resp *http.Response) (err error) {
	defer func() {
		if err == nil && !x.out.Truncated && x.session.reuse != "" && reusable(resp, resp.Body) {
			x.park()
		}
		x.close()
	}()
	out := x.out
	limit := x.req.MaxBytes
	if limit <= 0 {
		limit = defaultMaxResponseBytes
	}
	limit = min(limit, maxMaxResponseBytes)
	var body io.Reader = resp.Body
	if x.acceptedGzip && strings.EqualFold(resp.Header.Get("Content-Encoding"), "gzip") && resp.ContentLength != 0 {
		zr, err := gzip.NewReader(resp.Body)
		if err != nil && !errors.Is(err, io.EOF) {
			return x.finish(resp, nil, fmt.Errorf("read response body: %w", err))
		}
		if zr != nil {
			body = zr
		}
		resp.Header.Del("Content-Encoding")
		resp.Header.Del("Content-Length")
	}
	b, err := readLimited(body, limit+1, resp.ContentLength)
	if int64(len(b)) > limit {
		b, out.Truncated = b[:limit], true
	}
	if err != nil {
		err = fmt.Errorf("read response body: %w", err)
	}
	return x.finish(resp, b, err)
}

func (x *httpExchange) finish(resp *http.Response, body []byte, err error) error {
	out := x.out
	out.Elapsed = time.Since(x.start)
	out.StatusCode, out.Header, out.Body = resp.StatusCode, resp.Header, body
	out.FinalURL = x.url.Redacted()
	return err
}

// readLimited reads up to n bytes of r, sizing its buffer from the
// announced length when there is one.
func readLimited(r io.Reader, n, announced int64) ([]byte, error) {
	size := int64(512)
	if announced >= 0 {
		size = min(announced+1, n)
	}
	b := make([]byte, 0, max(size, 1))
	lr := io.LimitedReader{R: r, N: n}
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		k, err := lr.Read(b[len(b):cap(b)])
		b = b[:len(b)+k]
		if err != nil {
			if errors.Is(err, io.EOF) {
				return b, nil
			}
			return b, err
		}
	}
}

// park hands the exchange's connection to the monitor's next check.
func (x *httpExchange) park() {
	if x.stop != nil && !x.stop() {
		return // ctx ended: the deadline is already in the past
	}
	x.stop = nil
	_ = x.conn.SetDeadline(time.Time{})
	park(x.session.reuseKey(x.url), &parkedConn{conn: x.conn, br: x.br, tls: x.out.TLS})
	x.conn, x.br = nil, nil
}

// close ends the exchange's connection and returns its reader.
func (x *httpExchange) close() {
	if x.stop != nil {
		x.stop()
	}
	if x.conn != nil {
		_ = x.conn.Close()
	}
	if x.br != nil {
		x.br.Reset(nil)
		bufReaders.Put(x.br)
		x.br = nil
	}
}

// validHeaders rejects header names and values that would break the
// request framing, as net/http does before sending.
func validHeaders(h map[string]string) error {
	for k, v := range h {
		if !httpguts.ValidHeaderFieldName(k) {
			return fmt.Errorf("invalid header field name %q", k)
		}
		if !httpguts.ValidHeaderFieldValue(v) {
			return fmt.Errorf("invalid header field value for %q", k)
		}
	}
	return nil
}

// sameOrSubdomain reports whether sensitive headers may follow a redirect
// from host to next: same host or a subdomain of it, as in net/http.
func sameOrSubdomain(host, next string) bool {
	host, next = strings.ToLower(host), strings.ToLower(next)
	return host == next || strings.HasSuffix(next, "."+host)
}

// withoutSensitive drops the headers net/http drops on a redirect to
// another domain.
func withoutSensitive(h map[string]string) map[string]string {
	out := make(map[string]string, len(h))
	for k, v := range h {
		switch http.CanonicalHeaderKey(k) {
		case "Authorization", "Www-Authenticate", "Cookie", "Cookie2", "Proxy-Authorization":
			continue
		}
		out[k] = v
	}
	return out
}

// credentialOriginError refuses a request that would carry a credential
// (a header value read from a Secret) to an origin other than the one it
// was stored for; the request is not sent.
type credentialOriginError struct {
	header, origin, bound string
}

func (e *credentialOriginError) Error() string {
	bound := e.bound
	if bound == "" {
		bound = "no fixed origin (the URL it was stored with starts with a {{variable}})"
	}
	what := "header " + e.header
	switch {
	case e.header == "":
		what = "the body"
	case strings.HasPrefix(e.header, "{{"):
		what = "secret " + e.header
	}
	return fmt.Sprintf("%s holds a credential stored for %s; not sent to %s", what, bound, e.origin)
}

// credentialsMayGo returns a *credentialOriginError when u, the URL a
// check is about to request (after templating), has another origin than a
// credential of bound (header name to origin, probeapi.Assignment.Bound).
func credentialsMayGo(u *url.URL, bound map[string]string) error {
	if len(bound) == 0 {
		return nil
	}
	origin, _ := probeapi.URLOrigin(u)
	for _, name := range slices.Sorted(maps.Keys(bound)) {
		if want := bound[name]; want == "" || want != origin {
			return &credentialOriginError{header: name, origin: origin, bound: want}
		}
	}
	return nil
}

// boundTo returns headers without the credentials of bound that are bound
// to another origin than u's: every request of a check, the first and
// each redirect, carries a credential only to its own origin (net/http's
// list of sensitive headers is not enough: X-Api-Key is as much a
// credential as Authorization).
func boundTo(u *url.URL, headers, bound map[string]string) map[string]string {
	if len(bound) == 0 {
		return headers
	}
	origin, _ := probeapi.URLOrigin(u)
	var out map[string]string
	for name, want := range bound {
		if _, ok := headers[name]; !ok || (want != "" && want == origin) {
			continue
		}
		if out == nil {
			out = maps.Clone(headers)
		}
		delete(out, name)
	}
	if out == nil {
		return headers
	}
	return out
}
