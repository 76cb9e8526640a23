package main

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/hack/internal/benchproc"
	"github.com/uptime-operator/uptime-operator/internal/apikeys"
	"github.com/uptime-operator/uptime-operator/internal/engine"
	"github.com/uptime-operator/uptime-operator/internal/localcp"
	"github.com/uptime-operator/uptime-operator/internal/manager"
	"github.com/uptime-operator/uptime-operator/internal/probeserver"
)

// managerNS is the manager's namespace; monitors live in workspaceNS.
const (
	managerNS   = "uptime-operator-system"
	workspaceNS = "default"
	regionCode  = "local"
)

// cluster is one measured setup: kube-apiserver and etcd (envtest
// binaries), the manager and one agent as processes of their own.
type cluster struct {
	dir     string
	env     *localcp.ControlPlane
	cfg     *rest.Config
	c       client.Client
	manager *proc
	agent   *proc
	apiURL  string
	// managerMetrics and agentMetrics are the /metrics URLs.
	managerMetrics, agentMetrics string
	// pprof is the manager's /debug/pprof/ URL.
	pprof string
	keys  []string
	// existing is how many Monitors the control plane held before the
	// manager started (a kept -data directory), and baseline the time a
	// bare informer took to list and sync them.
	existing int
	baseline time.Duration
	// managerStarted is when the manager process was started.
	managerStarted time.Time
}

// startCluster starts the control plane, the manager with store and the
// agent of region "local". With data set, etcd keeps its data there across
// runs: Monitors created by an earlier run are in place before the manager
// starts, and a bare informer's sync of them is timed first (the cold
// start's baseline).
func startCluster(ctx context.Context, bin, dir, store string, keys int, data string) (_ *cluster, err error) {
	cl := &cluster{dir: dir}
	defer func() {
		if err != nil {
			cl.stop()
		}
	}()
	env, err := localcp.New(localcp.Options{WebhookHost: "127.0.0.1", StateDir: data,
		// 100,000 Monitors and their status revisions outgrow etcd's
		// default 2 GiB quota between kube-apiserver's compactions.
		EtcdFlags: map[string]string{"quota-backend-bytes": strconv.Itoa(8 << 30)},
		// A busy machine starts kube-apiserver slowly.
		StartTimeout: 3 * time.Minute,
	})
	if err != nil {
		return nil, err
	}
	cl.env = env
	say("starting etcd and kube-apiserver %s", localcp.KubernetesVersion)
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("start control plane: %w", err)
	}
	// The harness creates monitors as fast as the apiserver takes them.
	cfg.QPS, cfg.Burst = 1e6, 1e6
	cl.cfg = cfg
	if cl.c, err = client.New(cfg, client.Options{Scheme: manager.Scheme()}); err != nil {
		return nil, err
	}
	raw, err := env.Kubeconfig("bench-admin", "system:masters")
	if err != nil {
		return nil, err
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, raw, 0o600); err != nil {
		return nil, err
	}
	if err := cl.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: managerNS}}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	token := engine.NewHeartbeatToken() + engine.NewHeartbeatToken()
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "uptime-probe-" + regionCode, Namespace: managerNS},
		Data: map[string][]byte{probeserver.RegionTokenKey: []byte(token)}}
	if err := cl.c.Create(ctx, secret); apierrors.IsAlreadyExists(err) {
		// A kept -data directory: the region's token is the one made before.
		if err := cl.c.Get(ctx, client.ObjectKeyFromObject(secret), secret); err != nil {
			return nil, fmt.Errorf("read region token: %w", err)
		}
		token = string(secret.Data[probeserver.RegionTokenKey])
	} else if err != nil {
		return nil, fmt.Errorf("create region token: %w", err)
	}
	tokenFile := filepath.Join(dir, "probe-token")
	if err := os.WriteFile(tokenFile, []byte(token), 0o600); err != nil {
		return nil, err
	}

	if data != "" {
		// The first list after kube-apiserver started also waits for it to
		// fill its watch cache from etcd; the second is the baseline.
		first := time.Duration(0)
		for range 2 {
			first = cmp.Or(first, cl.baseline)
			if cl.existing, cl.baseline, err = informerSync(ctx, cfg); err != nil {
				return nil, err
			}
		}
		say("%d Monitors in place; a bare informer listed and synced them in %s (the first, while kube-apiserver filled its cache, in %s)",
			cl.existing, cl.baseline.Round(time.Millisecond), first.Round(time.Millisecond))
	}
	ports, err := freePorts(5)
	if err != nil {
		return nil, err
	}
	apiAddr := fmt.Sprintf("127.0.0.1:%d", ports[0])
	cl.apiURL = "http://" + apiAddr
	cl.managerMetrics = fmt.Sprintf("http://127.0.0.1:%d/metrics", ports[1])
	cl.agentMetrics = fmt.Sprintf("http://127.0.0.1:%d/metrics", ports[3])
	cl.pprof = fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/", ports[4])
	wo := env.Webhook
	say("starting the manager (store %s, profiles at %s)", redact(store), cl.pprof)
	cl.managerStarted = time.Now()
	cl.manager, err = startProc(bin, []string{"manager",
		"--store", store,
		"--webhook-port", strconv.Itoa(wo.Port),
		"--webhook-cert-dir", wo.CertDir,
		"--api-listen", apiAddr,
		"--public-url", cl.apiURL,
		"--metrics-bind-address", fmt.Sprintf("127.0.0.1:%d", ports[1]), "--metrics-secure=false",
		"--health-probe-bind-address", fmt.Sprintf("127.0.0.1:%d", ports[2]),
		"--pprof-bind-address", fmt.Sprintf("127.0.0.1:%d", ports[4]),
		"--allow-private-targets",
		"--namespace", managerNS,
	}, []string{"KUBECONFIG=" + kubeconfig}, filepath.Join(dir, "manager.log"))
	if err != nil {
		return nil, err
	}
	// The region is created once the admission webhooks answer, which
	// proves the manager serves them.
	region := &monv1.ProbeRegion{ObjectMeta: metav1.ObjectMeta{Name: regionCode}}
	region.Spec = monv1.ProbeRegionSpec{
		DisplayName: "Local", City: "localhost",
		Placement: monv1.ProbePlacement{Mode: monv1.PlacementRemote, Namespace: managerNS,
			TokenSecretRef: &monv1.SecretKeySelector{Name: secret.Name, Key: probeserver.RegionTokenKey}},
	}
	if err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		if cl.manager.exited() {
			return false, fmt.Errorf("the manager exited; see %s", cl.manager.logPath)
		}
		err := cl.c.Create(ctx, region.DeepCopy())
		return err == nil || apierrors.IsAlreadyExists(err), nil
	}); err != nil {
		return nil, fmt.Errorf("create region (is the manager up? %s): %w", cl.manager.logPath, err)
	}
	if err := waitHTTP(ctx, cl.apiURL+"/healthz", 3*time.Minute); err != nil {
		return nil, fmt.Errorf("REST API: %w", err)
	}
	// The per-key limit (1,200 requests a minute) stays on: the REST
	// measurement spreads its requests over many keys.
	for i := range keys {
		k, _, err := apikeys.Create(ctx, cl.c, workspaceNS, fmt.Sprintf("bench-%d", i), apikeys.Standard)
		if err != nil {
			return nil, fmt.Errorf("create api key: %w", err)
		}
		cl.keys = append(cl.keys, k)
	}
	say("starting the agent of region %s", regionCode)
	cl.agent, err = startProc(bin, []string{"probe",
		"--region", regionCode,
		"--server", cl.apiURL,
		"--token-file", tokenFile,
		"--allow-private",
		"--buffer-dir", filepath.Join(dir, "probe-buffer"),
		"--listen", fmt.Sprintf("127.0.0.1:%d", ports[3]),
	}, nil, filepath.Join(dir, "agent.log"))
	if err != nil {
		return nil, err
	}
	if err := waitHTTP(ctx, strings.TrimSuffix(cl.agentMetrics, "/metrics")+"/healthz", time.Minute); err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	return cl, nil
}

func (cl *cluster) stop() {
	if cl.agent != nil {
		cl.agent.stop()
	}
	if cl.manager != nil {
		cl.manager.stop()
	}
	if cl.env != nil {
		if err := cl.env.Stop(); err != nil {
			say("stop control plane: %v", err)
		}
	}
}

// redact hides a DSN's password in output.
func redact(dsn string) string {
	if i := strings.Index(dsn, "://"); i >= 0 {
		if at := strings.Index(dsn, "@"); at > i {
			if colon := strings.Index(dsn[i+3:at], ":"); colon >= 0 {
				return dsn[:i+3+colon+1] + "***" + dsn[at:]
			}
		}
	}
	return dsn
}

func waitHTTP(ctx context.Context, url string, timeout time.Duration) error {
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		resp, err := http.Get(url)
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
}

func freePorts(n int) ([]int, error) {
	var out []int
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		lns = append(lns, ln)
		out = append(out, ln.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}

// proc is a started process of the measured binary.
type proc struct {
	cmd     *exec.Cmd
	log     *os.File
	logPath string
	done    chan struct{}
}

func startProc(bin string, args, env []string, logPath string) (*proc, error) {
	cmd, logf, err := benchproc.Start(bin, args, env, logPath)
	if err != nil {
		return nil, err
	}
	p := &proc{cmd: cmd, log: logf, logPath: logPath, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	return p, nil
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func (p *proc) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	p.log.Close()
}

// userHZ is the unit of utime and stime in /proc/<pid>/stat.
const userHZ = 100

// usage is a process's CPU time (user plus system) and resident memory.
type usage struct {
	cpu time.Duration
	rss int64 // bytes
}

func (p *proc) usage() (usage, error) { return pidUsage(p.cmd.Process.Pid) }

func pidUsage(pid int) (usage, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return usage{}, err
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 22 {
		return usage{}, fmt.Errorf("short /proc stat line")
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	pages, _ := strconv.ParseInt(f[21], 10, 64)
	return usage{cpu: time.Duration(utime+stime) * time.Second / userHZ, rss: pages * int64(os.Getpagesize())}, nil
}

// informerSync is the cold start's baseline: the time a bare informer takes
// to list and sync every Monitor from kube-apiserver, which any controller
// pays before its first reconcile. It also counts them.
func informerSync(ctx context.Context, cfg *rest.Config) (int, time.Duration, error) {
	c, err := cache.New(cfg, cache.Options{Scheme: manager.Scheme()})
	if err != nil {
		return 0, 0, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	t0 := time.Now()
	if _, err := c.GetInformer(ctx, &monv1.Monitor{}); err != nil {
		return 0, 0, err
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		return 0, 0, fmt.Errorf("the bare informer never synced")
	}
	took := time.Since(t0)
	var list monv1.MonitorList
	if err := c.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		return 0, 0, err
	}
	return len(list.Items), took, nil
}

// controlPlaneUsage is the CPU time and RSS of this program's child
// process named comm (kube-apiserver or etcd, which envtest starts).
func controlPlaneUsage(comm string) (usage, error) {
	self := os.Getpid()
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		return usage{}, err
	}
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		st := string(b)
		open, end := strings.IndexByte(st, '('), strings.LastIndexByte(st, ')')
		if open < 0 || end < open || st[open+1:end] != comm {
			continue
		}
		if f := strings.Fields(st[end+1:]); len(f) > 1 && f[1] == strconv.Itoa(self) {
			return pidUsage(pid)
		}
	}
	return usage{}, fmt.Errorf("no %s process of this program", comm)
}
