package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/uptime-operator/uptime-operator/internal/manager"
	"github.com/uptime-operator/uptime-operator/internal/statuspage"
)

// TestDevFailsFastOnBusyPort checks that a port in use stops `dev` before
// the control plane starts, naming the flag.
func TestDevFailsFastOnBusyPort(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	dir := t.TempDir()
	for _, args := range [][]string{
		{"--api-listen", busy.Addr().String()},
		{"--api-listen", "127.0.0.1:0", "--aggregated-listen", busy.Addr().String()},
	} {
		var stderr bytes.Buffer
		start := time.Now()
		err := Main(t.Context(), append([]string{"dev", "--state-dir", dir}, args...), &bytes.Buffer{}, &stderr)
		if err == nil || !strings.Contains(err.Error(), busy.Addr().String()+": the address is already in use") {
			t.Fatalf("%v: err = %v", args, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "etcd")); !os.IsNotExist(err) {
			t.Errorf("%v: the control plane was started (etcd dir: %v)", args, err)
		}
		t.Logf("%v: failed in %v: %v", args, time.Since(start), err)
	}
}

// TestDevStartsCleanly runs `uptime-operator dev` as `make run` does, twice
// on one state directory: it must come up without an error line, in
// readable console lines, with the manager's namespace and the status
// pages' signing key Secret, and keep that key across the restart.
func TestDevStartsCleanly(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" && os.Getenv("CI") != "true" {
		t.Skip("KUBEBUILDER_ASSETS is not set (make test sets it)")
	}
	dir := t.TempDir()
	run := func() (key []byte) {
		t.Helper()
		_, stderr, stop := startDev(t, dir)
		ctx := t.Context()
		defer stop()
		time.Sleep(2 * time.Second) // let start-up work that runs after "ready" log too
		out := stderr.String()
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, "ERROR") || strings.Contains(line, `"level":"error"`) || strings.HasPrefix(line, "{") {
				t.Errorf("dev printed an error or JSON line: %s", line)
			}
		}
		if !strings.Contains(out, "dev: aggregated API on 127.0.0.1:") {
			t.Errorf("dev did not say where the aggregated API listens:\n%s", out)
		}
		cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dir, "kubeconfig"))
		if err != nil {
			t.Fatal(err)
		}
		c, err := client.New(cfg, client.Options{Scheme: manager.Scheme()})
		if err != nil {
			t.Fatal(err)
		}
		var s corev1.Secret
		if err := c.Get(ctx, client.ObjectKey{Namespace: devNamespace, Name: manager.SigningKeySecret}, &s); err != nil {
			t.Fatalf("signing key Secret: %v", err)
		}
		return s.Data["key"]
	}
	first := run()
	second := run()
	if len(first) < 32 || !bytes.Equal(first, second) {
		t.Errorf("the signing key changed across a restart (%x, then %x)", first, second)
	}
}

// TestDevOIDCProvider: --oidc-test-provider serves a provider that the
// status pages' settings point at, discoverable at its issuer.
func TestDevOIDCProvider(t *testing.T) {
	prov, cfg, err := startDevOIDC("127.0.0.1:0", "http://127.0.0.1:8080")
	if err != nil {
		t.Fatal(err)
	}
	defer prov.Close()
	if msg := statuspage.SSOUnavailable(cfg, "http://127.0.0.1:8080"); msg != "" || cfg.IssuerURL != prov.Issuer {
		t.Fatalf("settings %+v: %s", cfg, msg)
	}
	resp, err := http.Get(prov.Issuer + "/.well-known/openid-configuration")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		Issuer string `json:"issuer"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil || resp.StatusCode != 200 || doc.Issuer != prov.Issuer {
		t.Fatalf("discovery: %d %+v %v", resp.StatusCode, doc, err)
	}
}

// startDev runs `uptime-operator dev` on dir with the API on a free
// loopback port and waits until it says it is ready. stop ends it and
// reports an error it returned.
func startDev(t *testing.T, dir string) (addr string, stderr *syncBuffer, stop func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr = ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(t.Context())
	stderr = &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- Main(ctx, []string{"dev", "--state-dir", dir, "--api-listen", addr}, &bytes.Buffer{}, stderr)
	}()
	stop = func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("dev: %v", err)
		}
	}
	deadline := time.After(3 * time.Minute)
	for !strings.Contains(stderr.String(), "dev: press Ctrl-C to stop") {
		select {
		case err := <-done:
			done <- err
			t.Fatalf("dev stopped: %v\n%s", err, stderr.String())
		case <-deadline:
			stop()
			t.Fatalf("dev not ready after 3 minutes:\n%s", stderr.String())
		case <-time.After(200 * time.Millisecond):
		}
	}
	return addr, stderr, stop
}
