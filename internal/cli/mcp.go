package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/uptime-operator/uptime-operator/internal/httpserver"
	"github.com/uptime-operator/uptime-operator/internal/mcpserver"
	"github.com/uptime-operator/uptime-operator/internal/trust"
)

// mcpConfig is the tool server's configuration from its environment
// variables (spec/mcp.md, Configuration variables).
type mcpConfig struct {
	opts mcpserver.Options
	http bool
	addr string
}

// loadMCPConfig reads the configuration through getenv; httpFlag is --http.
func loadMCPConfig(getenv func(string) string, httpFlag bool) (*mcpConfig, error) {
	c := &mcpConfig{opts: mcpserver.Options{
		APIURL:                 strings.TrimSpace(getenv("SERVICE_API_URL")),
		APIKey:                 strings.TrimSpace(getenv("SERVICE_API_KEY")),
		ReadOnly:               mcpserver.Truthy(getenv("SERVICE_READ_ONLY")),
		AllowDestructive:       mcpserver.Truthy(getenv("SERVICE_ALLOW_DESTRUCTIVE")),
		AllowDestructiveHeader: mcpserver.Truthy(getenv("SERVICE_HTTP_ALLOW_DESTRUCTIVE_HEADER")),
		AllowedOrigins:         splitList(getenv("MCP_ALLOWED_ORIGINS")),
		AllowedHosts:           splitList(getenv("MCP_ALLOWED_HOSTS")),
		Version:                Version,
	}}
	if c.opts.APIURL == "" {
		c.opts.APIURL = mcpserver.DefaultAPIURL
	}
	if err := mcpserver.CheckAPIURL(c.opts.APIURL); err != nil {
		return nil, err
	}
	for _, v := range []struct {
		name string
		dst  *int
	}{
		{"SERVICE_MAX_WRITES_PER_MINUTE", &c.opts.MaxWritesPerMinute},
		{"SERVICE_MAX_WRITES_PER_HOUR", &c.opts.MaxWritesPerHour},
		{"SERVICE_MAX_PAUSES_PER_HOUR", &c.opts.MaxPausesPerHour},
	} {
		raw := strings.TrimSpace(getenv(v.name))
		if raw == "" {
			continue
		}
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%s must be a positive integer, got %q", v.name, raw)
		}
		*v.dst = n
	}
	switch t := strings.ToLower(strings.TrimSpace(getenv("TRANSPORT"))); t {
	case "", "stdio":
		c.http = httpFlag
	case "http":
		c.http = true
	default:
		return nil, fmt.Errorf("TRANSPORT must be stdio or http, got %q", t)
	}
	if !c.http {
		if c.opts.APIKey == "" {
			return nil, errors.New("SERVICE_API_KEY is not set: the stdio transport needs a workspace API key (sk_...)")
		}
		return c, nil
	}
	oauthOff := strings.EqualFold(strings.TrimSpace(getenv("MCP_OAUTH")), "off")
	if strings.EqualFold(strings.TrimSpace(getenv("NODE_ENV")), "production") && !oauthOff && getenv("OAUTH_RESOURCE_PROXY_SECRET") == "" {
		return nil, errors.New("NODE_ENV=production: the HTTP server does not start unless OAUTH_RESOURCE_PROXY_SECRET is set or MCP_OAUTH=off")
	}
	host, port := strings.TrimSpace(getenv("HOST")), strings.TrimSpace(getenv("PORT"))
	if host == "" {
		host = "127.0.0.1"
	}
	if port == "" {
		port = "3333"
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return nil, fmt.Errorf("PORT must be a port number, got %q", port)
	}
	c.opts.ListenHost = host
	c.addr = net.JoinHostPort(strings.Trim(host, "[]"), port)
	return c, nil
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// runMCPServer is `uptime-operator mcp`: the MCP tool server over stdio, or
// over Streamable HTTP with --http or TRANSPORT=http. Configuration comes
// from the environment (see docs/mcp.md).
func runMCPServer(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("mcp", stderr)
	httpFlag := fs.Bool("http", false, "serve Streamable HTTP on HOST:PORT (default 127.0.0.1:3333) instead of stdio; same as TRANSPORT=http")
	trustedCA := fs.String("trusted-ca-file", "", "PEM bundle of private CA certificates trusted in addition to the system roots, for an API URL (SERVICE_API_URL) served with a private CA's certificate")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: uptime-operator mcp [--http]")
		fmt.Fprintln(stderr, "\nEnvironment: SERVICE_API_KEY, SERVICE_API_URL, SERVICE_READ_ONLY, SERVICE_ALLOW_DESTRUCTIVE,")
		fmt.Fprintln(stderr, "SERVICE_HTTP_ALLOW_DESTRUCTIVE_HEADER, SERVICE_MAX_WRITES_PER_MINUTE, SERVICE_MAX_WRITES_PER_HOUR,")
		fmt.Fprintln(stderr, "SERVICE_MAX_PAUSES_PER_HOUR, MCP_OAUTH, TRANSPORT, HOST, PORT, MCP_ALLOWED_HOSTS, MCP_ALLOWED_ORIGINS.")
		fs.PrintDefaults()
	}
	if ok, err := parse(fs, args); !ok || err != nil {
		return err
	}
	cfg, err := loadMCPConfig(os.Getenv, *httpFlag)
	if err != nil {
		return err
	}
	if *trustedCA != "" {
		if err := trust.LoadFile(*trustedCA); err != nil {
			return fmt.Errorf("--trusted-ca-file: %w", err)
		}
		cfg.opts.HTTPClient = trustingClient(60 * time.Second)
	}
	srv, err := mcpserver.New(cfg.opts)
	if err != nil {
		return err
	}
	if !cfg.http {
		err := srv.Run(ctx, &mcp.IOTransport{Reader: os.Stdin, Writer: nopWriteCloser{stdout}})
		if errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
			return nil
		}
		return err
	}
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.addr, err)
	}
	fmt.Fprintf(stderr, "uptime-operator MCP server %s listening on http://%s/mcp (API %s)\n", Version, ln.Addr(), cfg.opts.APIURL)
	return serveUntilDone(ctx, ln, srv.HTTPHandler())
}

// serveUntilDone serves h on ln until ctx ends, then shuts down gracefully.
func serveUntilDone(ctx context.Context, ln net.Listener, h http.Handler) error {
	hs := httpserver.New(h, httpserver.Limits{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(shutdown)
	}()
	err := hs.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		<-done
		return nil
	}
	return err
}

// trustingClient is the client that `mcp` and `apply` call the REST API
// with: the default transport's settings (proxy from the environment,
// keep-alives, HTTP/2) verifying servers against trust.Roots, so that
// --trusted-ca-file reaches an API served with a private CA's certificate.
func trustingClient(timeout time.Duration) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = trust.ClientConfig()
	return &http.Client{Timeout: timeout, Transport: t}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
