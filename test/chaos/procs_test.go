//go:build chaos

package chaos

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/pem"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/localcp"
	"github.com/uptime-operator/uptime-operator/internal/manager"
	"github.com/uptime-operator/uptime-operator/internal/probeserver"
)

var binaryFlag = flag.String("chaos.binary", "", "the uptime-operator binary the process scenarios run (empty: the suite builds it once with go build)")

var (
	binaryOnce sync.Once
	binaryPath string
	binaryErr  error
)

// operatorBinary returns the real uptime-operator binary: -chaos.binary, or
// one `go build` of the repository for the whole run.
func operatorBinary(t *testing.T) string {
	t.Helper()
	binaryOnce.Do(func() {
		if *binaryFlag != "" {
			binaryPath, binaryErr = filepath.Abs(*binaryFlag)
			return
		}
		dir, err := os.MkdirTemp("", "uptime-chaos-bin-")
		if err != nil {
			binaryErr = err
			return
		}
		binaryPath = filepath.Join(dir, "uptime-operator")
		out, err := exec.Command("go", "build", "-o", binaryPath, "../..").CombinedOutput()
		if err != nil {
			binaryErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binaryErr != nil {
		t.Fatal(binaryErr)
	}
	return binaryPath
}

// controlPlane is an envtest kube-apiserver and etcd with the CRDs and
// webhook configuration installed and no manager: the test runs managers as
// processes of their own against kubeconfig.
type controlPlane struct {
	env        *localcp.ControlPlane
	client     client.Client
	kubeconfig string
}

func startControlPlane(t *testing.T) *controlPlane {
	t.Helper()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set; run `make chaos`")
	}
	env, err := localcp.New(localcp.Options{WebhookHost: "127.0.0.1"})
	must(t, err)
	startMu.Lock() // one start-up at a time (see startEnv)
	cfg, err := env.Start()
	startMu.Unlock()
	must(t, err)
	t.Cleanup(func() { _ = env.Stop() })
	raw, err := env.Kubeconfig("chaos-admin", "system:masters")
	must(t, err)
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	must(t, os.WriteFile(kc, raw, 0o600))
	c, err := client.New(cfg, client.Options{Scheme: manager.Scheme()})
	must(t, err)
	return &controlPlane{env: env, client: c, kubeconfig: kc}
}

// proc is a child process whose output goes to a log file.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

func startProc(t *testing.T, name string, env []string, cmd *exec.Cmd) *proc {
	t.Helper()
	p := &proc{name: name, cmd: cmd, log: filepath.Join(t.TempDir(), name+".log"), done: make(chan struct{})}
	f, err := os.Create(p.log)
	must(t, err)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = append(os.Environ(), env...)
	// Its own process group, so that a kill reaches nothing else.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	must(t, cmd.Start())
	go func() { _ = cmd.Wait(); f.Close(); close(p.done) }()
	t.Cleanup(func() { p.kill(); p.dumpOnFailure(t) })
	return p
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *proc) kill() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

func (p *proc) output() string {
	b, _ := os.ReadFile(p.log)
	return string(b)
}

func (p *proc) dumpOnFailure(t *testing.T) {
	if !t.Failed() {
		return
	}
	out := p.output()
	if len(out) > 6000 {
		out = "…" + out[len(out)-6000:]
	}
	t.Logf("%s output (tail):\n%s", p.name, out)
}

// balancer is a loopback TCP load balancer in front of backends, as a
// Service is in front of manager Pods: a client address sticks to one
// backend (chosen by a hash of the address, like sessionAffinity ClientIP),
// and when that backend refuses a connection the next one gets it, as
// once kube-proxy drops a dead endpoint.
type balancer struct {
	ln       net.Listener
	backends []string
	mu       sync.Mutex
	// conns counts accepted connections per client IP and backend index.
	conns map[string][]int
	// last is when each client IP last connected to each backend.
	last map[string][]time.Time
	open map[net.Conn]struct{}
}

func newBalancer(t *testing.T, listen string, backends ...string) *balancer {
	t.Helper()
	ln, err := net.Listen("tcp", listen)
	must(t, err)
	b := &balancer{ln: ln, backends: backends, conns: map[string][]int{}, last: map[string][]time.Time{}, open: map[net.Conn]struct{}{}}
	go b.serve()
	t.Cleanup(b.close)
	return b
}

func (b *balancer) addr() string { return b.ln.Addr().String() }

func (b *balancer) close() {
	_ = b.ln.Close()
	b.mu.Lock()
	defer b.mu.Unlock()
	for c := range b.open {
		_ = c.Close()
	}
}

func (b *balancer) serve() {
	for {
		c, err := b.ln.Accept()
		if err != nil {
			return
		}
		go b.forward(c)
	}
}

func (b *balancer) forward(c net.Conn) {
	ip, _, _ := net.SplitHostPort(c.RemoteAddr().String())
	h := fnv.New32a()
	_, _ = h.Write([]byte(ip))
	first := int(h.Sum32() % uint32(len(b.backends)))
	var up net.Conn
	idx := -1
	for i := range b.backends {
		j := (first + i) % len(b.backends)
		conn, err := net.DialTimeout("tcp", b.backends[j], 2*time.Second)
		if err == nil {
			up, idx = conn, j
			break
		}
	}
	if up == nil {
		_ = c.Close()
		return
	}
	b.mu.Lock()
	if b.conns[ip] == nil {
		b.conns[ip] = make([]int, len(b.backends))
		b.last[ip] = make([]time.Time, len(b.backends))
	}
	b.conns[ip][idx]++
	b.last[ip][idx] = time.Now()
	b.open[c], b.open[up] = struct{}{}, struct{}{}
	b.mu.Unlock()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if tc, ok := dst.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		done <- struct{}{}
	}
	go pipe(up, c)
	go pipe(c, up)
	<-done
	<-done
	_ = c.Close()
	_ = up.Close()
	b.mu.Lock()
	delete(b.open, c)
	delete(b.open, up)
	b.mu.Unlock()
}

// usage returns the connections of client ip per backend and when it last
// connected to each.
func (b *balancer) usage(ip string) ([]int, []time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]int(nil), b.conns[ip]...), append([]time.Time(nil), b.last[ip]...)
}

// backendFor returns the backend a client address is sent to while every
// backend is up.
func (b *balancer) backendFor(ip string) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(ip))
	return int(h.Sum32() % uint32(len(b.backends)))
}

// remoteRegion creates a ProbeRegion with a region token and returns the
// path of a token file for its agents.
func remoteRegion(t *testing.T, ctx context.Context, c client.Client, ns, code string) string {
	t.Helper()
	token := monv1.NewHeartbeatToken()
	must(t, c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tok-" + code, Namespace: ns},
		Data: map[string][]byte{probeserver.RegionTokenKey: []byte(token)}}))
	createWhenAdmitted(t, ctx, c, &monv1.ProbeRegion{ObjectMeta: metav1.ObjectMeta{Name: code}, Spec: monv1.ProbeRegionSpec{
		Placement: monv1.ProbePlacement{Mode: monv1.PlacementRemote, TokenSecretRef: &monv1.SecretKeySelector{Name: "tok-" + code, Key: probeserver.RegionTokenKey}}}})
	tokenFile := filepath.Join(t.TempDir(), code+".token")
	must(t, os.WriteFile(tokenFile, []byte(token), 0o600))
	return tokenFile
}

// createWhenAdmitted creates obj, retrying for a minute while admission
// does not answer yet (a manager process still starting its webhook server).
func createWhenAdmitted(t *testing.T, ctx context.Context, c client.Client, obj client.Object) {
	t.Helper()
	var err error
	deadline := time.Now().Add(time.Minute)
	for {
		if err = c.Create(ctx, obj.DeepCopyObject().(client.Object)); err == nil || apierrors.IsAlreadyExists(err) {
			return
		}
		if apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || time.Now().After(deadline) {
			t.Fatalf("create %s: %v", obj.GetName(), err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// switchTarget is an HTTP target whose health the test flips.
type switchTarget struct {
	*httptest.Server
	mu   sync.Mutex
	down bool
}

func newSwitchTarget(t *testing.T, listen string) *switchTarget {
	st := &switchTarget{}
	st.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st.mu.Lock()
		down := st.down
		st.mu.Unlock()
		if down {
			http.Error(w, "outage", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok"))
	}))
	if listen != "" {
		ln, err := net.Listen("tcp", listen)
		must(t, err)
		st.Server.Listener.Close()
		st.Server.Listener = ln
	}
	st.Start()
	t.Cleanup(st.Close)
	return st
}

func (s *switchTarget) set(down bool) {
	s.mu.Lock()
	s.down = down
	s.mu.Unlock()
}

// hookReceiver is a webhook endpoint (HTTPS, httptest's certificate for
// 127.0.0.1) that verifies each delivery's signature and records when each
// delivery id arrived. stop and start take it down and bring it back on the
// same address.
type hookReceiver struct {
	addr    string
	secret  func() []byte
	mu      sync.Mutex
	srv     *httptest.Server
	arrived map[string][]time.Time
	bad     int
	// delay is how long each answer takes (a receiver doing some work).
	delay time.Duration
}

func newHookReceiver(t *testing.T) *hookReceiver {
	r := &hookReceiver{arrived: map[string][]time.Time{}}
	r.addr = freeAddr(t)
	r.start(t)
	t.Cleanup(func() { r.stop() })
	return r
}

func (r *hookReceiver) start(t *testing.T) {
	t.Helper()
	ln, err := net.Listen("tcp", r.addr)
	must(t, err)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(r.serve))
	srv.Listener.Close()
	srv.Listener = ln
	srv.StartTLS()
	r.mu.Lock()
	r.srv = srv
	r.mu.Unlock()
}

func (r *hookReceiver) stop() {
	r.mu.Lock()
	srv := r.srv
	r.srv = nil
	r.mu.Unlock()
	if srv != nil {
		srv.CloseClientConnections()
		srv.Close()
	}
}

func (r *hookReceiver) url() string { return "https://" + r.addr + "/hook" }

func (r *hookReceiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	got := time.Now()
	time.Sleep(r.delay)
	id := req.Header.Get("X-Service-Delivery")
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.secret != nil {
		mac := hmac.New(sha256.New, r.secret())
		mac.Write([]byte(req.Header.Get("X-Service-Timestamp") + "."))
		mac.Write(body)
		if !hmac.Equal([]byte("sha256="+hex.EncodeToString(mac.Sum(nil))), []byte(req.Header.Get("X-Service-Signature"))) {
			r.bad++
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
	}
	r.arrived[id] = append(r.arrived[id], got)
	w.WriteHeader(http.StatusNoContent)
}

// snapshot returns a copy of the arrivals by delivery id and the count of
// requests with a bad signature.
func (r *hookReceiver) snapshot() (map[string][]time.Time, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string][]time.Time, len(r.arrived))
	for id, at := range r.arrived {
		out[id] = append([]time.Time(nil), at...)
	}
	return out, r.bad
}

// receiverCAFile writes the certificate of httptest's TLS servers (the same
// for all of them) as a PEM bundle for --trusted-ca-file.
func receiverCAFile(t *testing.T) string {
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "receiver-ca.pem")
	must(t, os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644))
	return path
}

// webhookChannel creates a webhook AlertChannel for every monitor of ns and
// waits for its signing secret.
func webhookChannel(t *testing.T, ctx context.Context, c client.Client, ns, name, url string) []byte {
	t.Helper()
	ch := &monv1.AlertChannel{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: monv1.AlertChannelSpec{Type: monv1.ChannelWebhook, WebhookURL: url}}
	must(t, c.Create(ctx, ch))
	var secret []byte
	waitFor(t, "the channel's signing secret", 60*time.Second, func() bool {
		if err := c.Get(ctx, client.ObjectKeyFromObject(ch), ch); err != nil || ch.Status.SigningSecretName == "" {
			return false
		}
		var s corev1.Secret
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: ch.Status.SigningSecretName}, &s); err != nil {
			return false
		}
		secret = s.Data[monv1.SigningSecretKey]
		return len(secret) > 0
	})
	return secret
}

// logContains reports whether a process log has a line with every needle.
func logContains(p *proc, needles ...string) bool {
	for _, line := range strings.Split(p.output(), "\n") {
		all := true
		for _, n := range needles {
			all = all && strings.Contains(line, n)
		}
		if all {
			return true
		}
	}
	return false
}
