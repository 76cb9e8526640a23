package localcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/uptime-operator/uptime-operator/internal/certs"
)

// The control plane is two child processes, etcd and kube-apiserver, run
// from the binaries AssetsDir finds, with the flags that a single-node test
// control plane needs (the ones controller-runtime's envtest sets, which
// this package used until the `dev` subcommand linked envtest and its
// test-only helpers into the release binary). Every credential is made
// here, at each start: kube-apiserver's serving certificate, the CA its
// client certificates are checked against, the service-account signing key,
// the front-proxy client certificate and the admission webhooks' serving
// certificate.

// WebhookServing is where the manager must serve the admission webhooks
// for kube-apiserver to reach them: Host:Port, with the certificate and key
// in CertDir (tls.crt, tls.key), which kube-apiserver trusts.
type WebhookServing struct {
	Host    string
	Port    int
	CertDir string
}

// ControlPlane is a local etcd and kube-apiserver. New prepares one, Start
// runs it, Stop ends it.
type ControlPlane struct {
	opts Options
	// Config reaches kube-apiserver as an administrator (group
	// system:masters); set by Start.
	Config *rest.Config
	// EtcdURL is etcd's client URL; set by Start.
	EtcdURL string
	// Webhook is where the manager serves admission webhooks; set by New
	// (a free port when Options.WebhookPort is 0).
	Webhook WebhookServing

	// root holds the directories below; removed on Stop when temporary.
	root          string
	temporary     bool
	etcdDir       string
	certDir       string
	frontProxyDir string
	logs          map[string]io.Writer
	clientCA      *certs.CA
	webhookCA     *certs.CA

	mu    sync.Mutex
	procs []*process
}

// process is a started child and the channel closed when it exits.
type process struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	// tail keeps the end of its output for the error of a failed start.
	tail *tail
}

// tail is an io.Writer that keeps the last tailSize bytes written.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

const tailSize = 2048

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if len(t.buf) > tailSize {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-tailSize:]...)
	}
	return len(b), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(bytes.TrimSpace(t.buf))
}

// New prepares a control plane: its directories (Options.StateDir, or a
// temporary one) and the webhook serving address and certificate.
func New(opts Options) (*ControlPlane, error) {
	p := &ControlPlane{opts: opts, root: opts.StateDir, logs: map[string]io.Writer{"etcd": io.Discard, "kube-apiserver": io.Discard}}
	if p.root == "" {
		dir, err := os.MkdirTemp("", "uptime-localcp-")
		if err != nil {
			return nil, fmt.Errorf("create control plane directory: %w", err)
		}
		p.root, p.temporary = dir, true
	} else {
		logs, err := openLogs(p.root)
		if err != nil {
			return nil, err
		}
		p.logs = logs
	}
	// StopLeftovers finds the processes of a state directory by these two
	// paths on their command lines.
	p.etcdDir, p.certDir = filepath.Join(p.root, "etcd"), filepath.Join(p.root, "apiserver")
	p.frontProxyDir = filepath.Join(p.root, "front-proxy")
	for _, d := range []string{p.etcdDir, p.certDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			p.cleanup()
			return nil, fmt.Errorf("create state dir: %w", err)
		}
	}
	if err := p.prepareWebhook(); err != nil {
		p.cleanup()
		return nil, err
	}
	return p, nil
}

// prepareWebhook picks the webhook address and writes its serving
// certificate, signed by a CA that the webhook configurations carry.
func (p *ControlPlane) prepareWebhook() error {
	host := p.opts.WebhookHost
	if host == "" {
		host = "127.0.0.1"
	}
	port := p.opts.WebhookPort
	if port == 0 {
		var err error
		if port, err = freePort(host); err != nil {
			return err
		}
	}
	ca, err := certs.NewCA("uptime-operator-local-webhook-ca")
	if err != nil {
		return err
	}
	names, ips := []string{"localhost"}, []net.IP{net.IPv4(127, 0, 0, 1)}
	if ip := net.ParseIP(host); ip != nil {
		ips = append(ips, ip)
	} else {
		names = append(names, host)
	}
	crt, key, err := ca.Issue("uptime-operator-webhook", names, ips, false)
	if err != nil {
		return err
	}
	dir := filepath.Join(p.root, "webhook")
	if err := certs.WriteFiles(dir, map[string][]byte{"tls.crt": crt, "tls.key": key}); err != nil {
		return fmt.Errorf("write webhook certificate: %w", err)
	}
	p.webhookCA, p.Webhook = ca, WebhookServing{Host: host, Port: port, CertDir: dir}
	return nil
}

// Start runs etcd and kube-apiserver, waits until both answer, and
// installs the CRDs and webhook configurations. It returns the
// administrator's configuration (also in Config).
func (p *ControlPlane) Start() (*rest.Config, error) {
	timeout := p.opts.StartTimeout
	if timeout == 0 {
		timeout = 2 * time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cfg, err := p.start(ctx)
	if err != nil {
		_ = p.Stop()
		return nil, err
	}
	return cfg, nil
}

func (p *ControlPlane) start(ctx context.Context) (*rest.Config, error) {
	assets, err := AssetsDir(p.opts.Progress)
	if err != nil {
		return nil, err
	}
	etcdPort, err := freePort("127.0.0.1")
	if err != nil {
		return nil, err
	}
	p.EtcdURL = "http://127.0.0.1:" + strconv.Itoa(etcdPort)
	etcdFlags := map[string]string{
		"data-dir":              p.etcdDir,
		"listen-client-urls":    p.EtcdURL,
		"advertise-client-urls": p.EtcdURL,
		// A single member: its peer listener is never dialled, and port 0
		// keeps two control planes from contending for one.
		"listen-peer-urls": "http://localhost:0",
		"unsafe-no-fsync":  "true",
	}
	etcd, err := p.run(filepath.Join(assets, "etcd"), "etcd", etcdFlags, p.opts.EtcdFlags)
	if err != nil {
		return nil, err
	}
	if err := waitFor(ctx, etcd, func() bool {
		resp, err := http.Get(p.EtcdURL + "/health")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode == http.StatusOK && bytes.Contains(body, []byte(`"true"`))
	}); err != nil {
		return nil, err
	}

	apiPort, err := freePort("127.0.0.1")
	if err != nil {
		return nil, err
	}
	apiFlags, err := p.apiServerFlags(apiPort)
	if err != nil {
		return nil, err
	}
	apiServer, err := p.run(filepath.Join(assets, "kube-apiserver"), "kube-apiserver", apiFlags, nil)
	if err != nil {
		return nil, err
	}
	if p.Config, err = p.UserConfig("uptime-operator-local-admin", "system:masters"); err != nil {
		return nil, err
	}
	hc, err := rest.HTTPClientFor(p.Config)
	if err != nil {
		return nil, fmt.Errorf("kube-apiserver client: %w", err)
	}
	if err := waitFor(ctx, apiServer, func() bool {
		resp, err := hc.Get(p.Config.Host + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}); err != nil {
		return nil, err
	}
	if err := p.install(ctx); err != nil {
		return nil, err
	}
	return rest.CopyConfig(p.Config), nil
}

// apiServerFlags writes kube-apiserver's credentials into certDir and
// returns its flags.
func (p *ControlPlane) apiServerFlags(port int) (map[string]string, error) {
	serving, err := certs.NewCA("uptime-operator-local-apiserver-ca")
	if err != nil {
		return nil, err
	}
	crt, key, err := serving.Issue("kube-apiserver", []string{"localhost"}, []net.IP{net.IPv4(127, 0, 0, 1)}, false)
	if err != nil {
		return nil, err
	}
	if p.clientCA, err = certs.NewCA("uptime-operator-local-client-ca"); err != nil {
		return nil, err
	}
	// Service-account tokens (TokenRequest, the probe agents' projected
	// tokens) are signed with an EC key; the file holds the private key,
	// whose public half kube-apiserver verifies them with.
	sa, err := certs.NewCA("service-accounts")
	if err != nil {
		return nil, err
	}
	saKey, err := sa.KeyPEM()
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{"apiserver.crt": crt, "apiserver.key": key, "serving-ca.crt": serving.CertPEM,
		"client-ca.crt": p.clientCA.CertPEM, "sa.key": saKey}
	if err := certs.WriteFiles(p.certDir, files); err != nil {
		return nil, fmt.Errorf("write kube-apiserver credentials: %w", err)
	}
	host := "https://127.0.0.1:" + strconv.Itoa(port)
	flags := map[string]string{
		"bind-address":                     "127.0.0.1",
		"secure-port":                      strconv.Itoa(port),
		"etcd-servers":                     p.EtcdURL,
		"cert-dir":                         p.certDir,
		"tls-cert-file":                    filepath.Join(p.certDir, "apiserver.crt"),
		"tls-private-key-file":             filepath.Join(p.certDir, "apiserver.key"),
		"client-ca-file":                   filepath.Join(p.certDir, "client-ca.crt"),
		"service-account-issuer":           host + "/",
		"service-account-key-file":         filepath.Join(p.certDir, "sa.key"),
		"service-account-signing-key-file": filepath.Join(p.certDir, "sa.key"),
		"service-cluster-ip-range":         "10.0.0.0/24",
		"allow-privileged":                 "true",
		"authorization-mode":               "RBAC",
		// No controller-manager makes the default ServiceAccounts, which
		// this admission plugin would require of every Pod.
		"disable-admission-plugins": "ServiceAccount",
	}
	aggregation, err := aggregationFlags(p.frontProxyDir)
	if err != nil {
		return nil, err
	}
	for k, v := range aggregation {
		flags[k] = v
	}
	p.Config = &rest.Config{Host: host, TLSClientConfig: rest.TLSClientConfig{CAData: serving.CertPEM}}
	return flags, nil
}

// UserConfig returns a configuration that authenticates to kube-apiserver
// as user name in groups, with a client certificate of its own.
func (p *ControlPlane) UserConfig(name string, groups ...string) (*rest.Config, error) {
	if p.clientCA == nil || p.Config == nil {
		return nil, errors.New("the control plane is not started")
	}
	crt, key, err := p.clientCA.IssueUser(name, groups)
	if err != nil {
		return nil, fmt.Errorf("client certificate of %s: %w", name, err)
	}
	cfg := &rest.Config{Host: p.Config.Host, TLSClientConfig: rest.TLSClientConfig{
		CAData: p.Config.CAData, CertData: crt, KeyData: key}}
	return cfg, nil
}

// Kubeconfig renders a kubeconfig for user name in groups (see
// UserConfig), for kubectl and processes of their own.
func (p *ControlPlane) Kubeconfig(name string, groups ...string) ([]byte, error) {
	cfg, err := p.UserConfig(name, groups...)
	if err != nil {
		return nil, err
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["local"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData}
	kc.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: name}
	kc.CurrentContext = "local"
	raw, err := clientcmd.Write(*kc)
	if err != nil {
		return nil, fmt.Errorf("render kubeconfig of %s: %w", name, err)
	}
	return raw, nil
}

// run starts binary with flags (extra overriding them), its output to the
// process's log.
func (p *ControlPlane) run(binary, name string, flags, extra map[string]string) (*process, error) {
	merged := map[string]string{}
	for _, m := range []map[string]string{flags, extra} {
		for k, v := range m {
			merged[k] = v
		}
	}
	keys := make([]string, 0, len(merged))
	for k := range merged {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	args := make([]string, 0, len(keys))
	for _, k := range keys {
		args = append(args, "--"+k+"="+merged[k])
	}
	cmd := exec.Command(binary, args...)
	out := &tail{}
	cmd.Stdout = io.MultiWriter(p.logs[name], out)
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	proc := &process{name: name, cmd: cmd, done: make(chan struct{}), tail: out}
	go func() {
		_ = cmd.Wait()
		close(proc.done)
	}()
	p.mu.Lock()
	p.procs = append(p.procs, proc)
	p.mu.Unlock()
	return proc, nil
}

// waitFor polls ready until it holds, the process exits or ctx ends.
func waitFor(ctx context.Context, proc *process, ready func() bool) error {
	for {
		if ready() {
			return nil
		}
		select {
		case <-proc.done:
			return fmt.Errorf("%s exited at start-up: %s: %s", proc.name, proc.cmd.ProcessState, proc.tail)
		case <-ctx.Done():
			return fmt.Errorf("%s did not become ready: %w", proc.name, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Stop ends kube-apiserver, then etcd (each SIGTERM, then SIGKILL after
// 20 s), and removes a temporary directory.
func (p *ControlPlane) Stop() error {
	p.mu.Lock()
	procs := p.procs
	p.procs = nil
	p.mu.Unlock()
	var errs []error
	for _, proc := range slices.Backward(procs) {
		if err := proc.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
			errs = append(errs, fmt.Errorf("stop %s: %w", proc.name, err))
		}
		select {
		case <-proc.done:
		case <-time.After(20 * time.Second):
			_ = proc.cmd.Process.Kill()
			<-proc.done
		}
	}
	p.cleanup()
	return errors.Join(errs...)
}

// cleanup removes a temporary directory.
func (p *ControlPlane) cleanup() {
	if p.temporary {
		_ = os.RemoveAll(p.root)
	}
}

// freePort returns a TCP port free on host at the time of the call.
func freePort(host string) (int, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
