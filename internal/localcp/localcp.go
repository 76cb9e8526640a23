// Package localcp starts a local Kubernetes control plane (etcd and
// kube-apiserver, the binaries envtest suites use) with uptime-operator's
// CRDs and admission webhook configuration installed. `uptime-operator dev`
// runs on it with a persistent state directory; the envtest suites run on
// it with a temporary one. One function builds both, so tests exercise what
// users run. It starts the processes itself rather than through
// controller-runtime's envtest, which is test-only code the release binary
// must not link (imports_test.go checks).
package localcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/uptime-operator/uptime-operator/config"
	"github.com/uptime-operator/uptime-operator/internal/certs"
)

// KubernetesVersion is the version of the control-plane binaries.
const KubernetesVersion = "1.37.2"

// Options configure the control plane.
type Options struct {
	// StateDir keeps etcd data across restarts, and the processes' logs
	// (logs/etcd.log, logs/kube-apiserver.log). Empty means a temporary
	// directory removed on Stop, and no logs.
	StateDir string
	// WebhookHost and WebhookPort are where the manager serves admission
	// webhooks; host "" is 127.0.0.1, port 0 picks a free one.
	WebhookHost string
	WebhookPort int
	// Progress receives progress lines (may be nil).
	Progress io.Writer
	// EtcdFlags are added to etcd's flags, or replace them (name without
	// dashes, value).
	EtcdFlags map[string]string
	// StartTimeout bounds Start (2 minutes when 0).
	StartTimeout time.Duration
}

// openLogs opens <state>/logs/{etcd,kube-apiserver}.log for appending, so a
// control plane that fails to start can be diagnosed.
func openLogs(stateDir string) (map[string]io.Writer, error) {
	dir := filepath.Join(stateDir, "logs")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	out := map[string]io.Writer{}
	for _, name := range []string{"etcd", "kube-apiserver"} {
		f, err := os.OpenFile(filepath.Join(dir, name+".log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			return nil, err
		}
		out[name] = f
	}
	return out, nil
}

// FrontProxyClientName is the common name of kube-apiserver's front-proxy
// client certificate, the only name the aggregated API accepts.
const FrontProxyClientName = "front-proxy-client"

// aggregationFlags gives kube-apiserver a front-proxy CA and client
// certificate, written into dir, so it can proxy aggregated APIs with the
// caller's identity in X-Remote-* headers (the flags a kubeadm cluster
// sets).
func aggregationFlags(dir string) (map[string]string, error) {
	ca, err := certs.NewCA("front-proxy-ca")
	if err != nil {
		return nil, err
	}
	certPEM, keyPEM, err := ca.Issue(FrontProxyClientName, nil, nil, true)
	if err != nil {
		return nil, err
	}
	if err := certs.WriteFiles(dir, map[string][]byte{"ca.crt": ca.CertPEM, "client.crt": certPEM, "client.key": keyPEM}); err != nil {
		return nil, err
	}
	return map[string]string{
		"requestheader-client-ca-file":       filepath.Join(dir, "ca.crt"),
		"requestheader-allowed-names":        FrontProxyClientName,
		"requestheader-username-headers":     "X-Remote-User",
		"requestheader-uid-headers":          "X-Remote-Uid",
		"requestheader-group-headers":        "X-Remote-Group",
		"requestheader-extra-headers-prefix": "X-Remote-Extra-",
		"proxy-client-cert-file":             filepath.Join(dir, "client.crt"),
		"proxy-client-key-file":              filepath.Join(dir, "client.key"),
	}, nil
}

// DefaultAssetsDir is where setup-envtest (and hack/envtest-binaries.sh)
// install the binaries.
func DefaultAssetsDir() string {
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".local", "share", "kubebuilder-envtest", "k8s", KubernetesVersion+"-linux-amd64")
}

// AssetsDir returns the directory holding kube-apiserver, etcd and kubectl:
// $KUBEBUILDER_ASSETS, else the default install location. When the binaries
// are missing and hack/envtest-binaries.sh is reachable from the working
// directory, it builds them first, streaming its progress.
func AssetsDir(progress io.Writer) (string, error) {
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		dir = DefaultAssetsDir()
	}
	if haveBinaries(dir) {
		return dir, nil
	}
	script := filepath.Join("hack", "envtest-binaries.sh")
	if _, err := os.Stat(script); err != nil {
		return "", fmt.Errorf("kube-apiserver, etcd and kubectl are not in %s: run hack/envtest-binaries.sh from the source tree (or set KUBEBUILDER_ASSETS)", dir)
	}
	if progress == nil {
		progress = io.Discard
	}
	fmt.Fprintf(progress, "building the control-plane binaries with %s (about 10 minutes the first time)\n", script)
	cmd := exec.Command("bash", script)
	cmd.Stderr = progress
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build control-plane binaries: %w", err)
	}
	lines := bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n"))
	dir = string(lines[len(lines)-1])
	if !haveBinaries(dir) {
		return "", errors.New("control-plane binaries still missing after the build")
	}
	return dir, nil
}

func haveBinaries(dir string) bool {
	for _, b := range []string{"kube-apiserver", "etcd", "kubectl"} {
		if st, err := os.Stat(filepath.Join(dir, b)); err != nil || st.IsDir() {
			return false
		}
	}
	return true
}

// CRDs decodes the embedded CustomResourceDefinitions.
func CRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var out []*apiextensionsv1.CustomResourceDefinition
	err := fs.WalkDir(config.CRDs, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := config.CRDs.ReadFile(path)
		if err != nil {
			return err
		}
		return decodeAll(raw, func(dec *utilyaml.YAMLOrJSONDecoder) error {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := dec.Decode(crd); err != nil {
				return err
			}
			if crd.Name != "" {
				out = append(out, crd)
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("decode embedded crds: %w", err)
	}
	return out, nil
}

// Webhooks decodes the embedded webhook configurations.
func Webhooks() ([]*admissionv1.MutatingWebhookConfiguration, []*admissionv1.ValidatingWebhookConfiguration, error) {
	raw, err := config.Webhooks.ReadFile("webhook/manifests.yaml")
	if err != nil {
		return nil, nil, err
	}
	var mut []*admissionv1.MutatingWebhookConfiguration
	var val []*admissionv1.ValidatingWebhookConfiguration
	docs := bytes.Split(raw, []byte("\n---"))
	for _, doc := range docs {
		doc = bytes.TrimSpace(bytes.TrimPrefix(bytes.TrimSpace(doc), []byte("---")))
		if len(doc) == 0 {
			continue
		}
		var probe struct{ Kind string }
		if err := utilyaml.Unmarshal(doc, &probe); err != nil {
			return nil, nil, fmt.Errorf("decode webhook manifests: %w", err)
		}
		switch probe.Kind {
		case "MutatingWebhookConfiguration":
			m := &admissionv1.MutatingWebhookConfiguration{}
			if err := utilyaml.Unmarshal(doc, m); err != nil {
				return nil, nil, err
			}
			mut = append(mut, m)
		case "ValidatingWebhookConfiguration":
			v := &admissionv1.ValidatingWebhookConfiguration{}
			if err := utilyaml.Unmarshal(doc, v); err != nil {
				return nil, nil, err
			}
			val = append(val, v)
		}
	}
	return mut, val, nil
}

func decodeAll(raw []byte, each func(*utilyaml.YAMLOrJSONDecoder) error) error {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	for {
		if err := each(dec); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// RegisterAPIService points the APIService v1.api.uptime-operator.io at an
// aggregated API listening on addr (host:port on this machine) through an
// ExternalName Service for localhost in namespace ns, with caPEM as the
// caBundle. The aggregator accepts ExternalName Services when it is not told
// to route to endpoints, and verifies the serving certificate against the
// name <service>.<ns>.svc.
func RegisterAPIService(ctx context.Context, c client.Client, ns, addr string, caPEM []byte) error {
	_, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return err
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: AggregatedServiceName, Namespace: ns}}
	if _, err := controllerutil.CreateOrUpdate(ctx, c, svc, func() error {
		svc.Spec.Type = corev1.ServiceTypeExternalName
		svc.Spec.ExternalName = "localhost"
		svc.Spec.Ports = []corev1.ServicePort{{Name: "https", Port: int32(port), Protocol: corev1.ProtocolTCP}}
		return nil
	}); err != nil {
		return fmt.Errorf("apply aggregated service: %w", err)
	}
	apisvc := &unstructured.Unstructured{}
	apisvc.SetAPIVersion("apiregistration.k8s.io/v1")
	apisvc.SetKind("APIService")
	apisvc.SetName("v1.api.uptime-operator.io")
	if _, err := controllerutil.CreateOrUpdate(ctx, c, apisvc, func() error {
		apisvc.Object["spec"] = map[string]any{
			"group": "api.uptime-operator.io", "version": "v1",
			"groupPriorityMinimum": int64(1000), "versionPriority": int64(15),
			"caBundle": base64.StdEncoding.EncodeToString(caPEM),
			"service":  map[string]any{"name": svc.Name, "namespace": ns, "port": int64(port)},
		}
		return nil
	}); err != nil {
		return fmt.Errorf("apply apiservice: %w", err)
	}
	return nil
}

// AggregatedServiceName is the Service of the aggregated API.
const AggregatedServiceName = "uptime-operator-aggregated"
