//go:build e2e

// Package e2e proves the product on a real single-node Kubernetes cluster
// (hack/cluster.sh): the release built here (`make release`: the chart
// package and the image), `helm install` of that package into a namespace
// that enforces Pod Security "restricted", a CRD upgrade with the chart, probe
// Pods per region, incidents confirmed by both regions, signed webhook
// deliveries to a Pod, the aggregated API with RBAC, a manager Pod restart,
// `helm upgrade` and `helm uninstall`, and HA replicas on PostgreSQL.
//
// Run it with `make e2e`. The test binary starts on the host: it brings the
// cluster up (or reuses it), builds and loads the images, and then re-executes
// itself inside the node's network namespace, where the apiserver, Service
// IPs and Pod IPs are reachable and nothing else is.
package e2e

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// envInside marks the re-executed test binary inside the node's namespace.
const envInside = "UPTIME_E2E_INSIDE"

// repoRoot is the clone the suite runs from (test/e2e is two levels down).
var repoRoot = func() string {
	wd, _ := os.Getwd()
	return filepath.Clean(filepath.Join(wd, "..", ".."))
}()

func TestMain(m *testing.M) {
	if os.Getenv(envInside) == "" {
		if err := prepareAndEnter(); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
			os.Exit(1)
		}
		return // not reached: prepareAndEnter execs
	}
	os.Exit(m.Run())
}

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "uptime-operator end to end")
}

// prepareAndEnter brings the cluster up, builds and loads the operator and
// test images, and execs this binary again inside the node's network
// namespace with the cluster's kubeconfig and tools on PATH.
func prepareAndEnter() error {
	say := func(f string, a ...any) { fmt.Fprintf(os.Stderr, "e2e: "+f+"\n", a...) }
	run := func(name string, args ...string) (string, error) {
		cmd := exec.Command(name, args...)
		cmd.Dir = repoRoot
		cmd.Stderr = os.Stderr
		// Static binaries: the images have no libc.
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
		}
		return string(out), nil
	}
	// Prometheus builds (once; minutes on a cold cache) while the cluster
	// comes up and the release is built.
	say("building Prometheus from its Go module in the background (hack/prom-binary.sh; cached)")
	prom := startBuild(repoRoot, "hack/prom-binary.sh", "prometheus")
	say("bringing the cluster up (hack/cluster.sh up)")
	if _, err := run("hack/cluster.sh", "up"); err != nil {
		return err
	}
	// The suite installs what a user installs: the chart package and the
	// image archive of `make release`, at the chart's own version.
	version, err := chartVersion()
	if err != nil {
		return err
	}
	say("building release %s (make release: chart package and operator image) and the test server image", version)
	// One platform: the cluster runs this machine's, and the second
	// architecture (a full cross-compile) is tested by make test-release.
	if _, err := run("make", "--no-print-directory", "release", "VERSION="+version, "RELEASE_DIR="+releaseDir,
		"RELEASE_PLATFORMS=linux/"+runtime.GOARCH, "PLATFORMS=linux/"+runtime.GOARCH); err != nil {
		return err
	}
	imageTar := filepath.Join(releaseDir, "uptime-operator-image-"+version+".tar")
	// The remote specs run the agent as a plain process (a region on a VM).
	if _, err := run("go", "build", "-trimpath", "-o", filepath.Join(repoRoot, "bin", "e2e", "uptime-operator"), "."); err != nil {
		return err
	}
	if _, err := run("go", "build", "-trimpath", "-o", filepath.Join(repoRoot, "bin", "e2e", "testserver"), "./test/e2e/testserver"); err != nil {
		return err
	}
	if _, err := run("go", "run", "./hack/ociimage", "-o", testImageTar, "-tag", testImage,
		"-file", "bin/e2e/testserver:/testserver:0755", "-entrypoint", "/testserver", "-user", "65532:65532"); err != nil {
		return err
	}
	// The previous release, which the upgrade spec installs first: built
	// once per pinned commit and cached outside the clone. Without it (a
	// shallow clone lacks the commit) the spec fails with the reason; the
	// other specs run.
	say("building the previous release (hack/previous-release.sh; cached by commit)")
	images := []string{imageTar, testImageTar}
	previous, prevErr := previousRelease()
	if prevErr == nil {
		images = append(images, previous.image)
	}
	promBin, err := prom.wait()
	if err != nil {
		return err
	}
	say("loading the images into the node")
	if _, err := run("hack/cluster.sh", append([]string{"load"}, images...)...); err != nil {
		return err
	}
	envOut, err := run("hack/cluster.sh", "env")
	if err != nil {
		return err
	}
	set := map[string]string{}
	for _, kv := range strings.Fields(strings.TrimPrefix(strings.TrimSpace(envOut), "export ")) {
		k, v, _ := strings.Cut(kv, "=")
		set[k] = strings.ReplaceAll(v, "$PATH", os.Getenv("PATH"))
	}
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); set[k] == "" {
			env = append(env, kv)
		}
	}
	for k, v := range set {
		env = append(env, k+"="+v)
	}
	env = append(env, envInside+"=1", envChart+"="+filepath.Join(releaseDir, "uptime-operator-"+version+".tgz"),
		envPrometheus+"="+strings.TrimSpace(promBin), envPrevious+"="+previous.dir)
	if prevErr != nil {
		env = append(env, envPreviousError+"="+prevErr.Error())
	}
	netns := "uptime-k8s"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "UPTIME_CLUSTER_NETNS="); ok {
			netns = v
		}
	}
	nsenter, err := exec.LookPath("nsenter")
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	say("entering network namespace %s", netns)
	args := append([]string{"nsenter", "--net=/run/netns/" + netns, "--", self}, os.Args[1:]...)
	return syscall.Exec(nsenter, args, env)
}

// previousBuild is the previous release hack/previous-release.sh built:
// its directory and image archive.
type previousBuild struct{ dir, image string }

// previousRelease builds (or finds in its cache) the previous release; the
// error carries the script's own words (a shallow clone lacks the commit).
func previousRelease() (previousBuild, error) {
	var stderr strings.Builder
	cmd := exec.Command("hack/previous-release.sh")
	cmd.Dir = repoRoot
	cmd.Stderr = io.MultiWriter(os.Stderr, &stderr)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		return previousBuild{}, fmt.Errorf("hack/previous-release.sh: %w: %s", err, lastLine(stderr.String()))
	}
	dir := strings.TrimSpace(string(out))
	tars, _ := filepath.Glob(filepath.Join(dir, "uptime-operator-image-*.tar"))
	if len(tars) != 1 {
		return previousBuild{}, fmt.Errorf("hack/previous-release.sh: %s holds %d image archives, want 1", dir, len(tars))
	}
	return previousBuild{dir: dir, image: tars[0]}, nil
}

// build is a command run beside the preparation; wait returns its output.
type build struct {
	cmd  *exec.Cmd
	out  strings.Builder
	err  error
	done chan struct{}
}

func startBuild(dir, name string, args ...string) *build {
	b := &build{cmd: exec.Command(name, args...), done: make(chan struct{})}
	b.cmd.Dir, b.cmd.Stdout, b.cmd.Stderr = dir, &b.out, os.Stderr
	go func() {
		defer close(b.done)
		if err := b.cmd.Run(); err != nil {
			b.err = fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
		}
	}()
	return b
}

func (b *build) wait() (string, error) {
	<-b.done
	return b.out.String(), b.err
}

var (
	releaseDir   = filepath.Join(repoRoot, "bin", "e2e", "release")
	testImageTar = filepath.Join(repoRoot, "bin", "e2e", "testserver-image.tar")
)

// envChart names the packaged chart for the re-executed binary.
const envChart = "UPTIME_E2E_CHART"

// chartPackage is the chart package `make release` built, which every spec
// installs and upgrades.
func chartPackage() string { return os.Getenv(envChart) }

// chartVersion is the version in charts/uptime-operator/Chart.yaml.
func chartVersion() (string, error) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "charts", "uptime-operator", "Chart.yaml"))
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "version: "); ok {
			return strings.Trim(strings.TrimSpace(v), `"`), nil
		}
	}
	return "", fmt.Errorf("no version in Chart.yaml")
}

const testImage = "uptime-e2e/testserver:dev"
