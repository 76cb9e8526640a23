package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestPROJECTFile checks the kubebuilder PROJECT file against the tree: one
// resource per CRD with its scope, controller: true exactly for the kinds
// with a reconciler in controllers/, and the webhook flags exactly as the
// webhook markers in webhooks/ register them.
func TestPROJECTFile(t *testing.T) {
	var project struct {
		Domain    string   `json:"domain"`
		Layout    []string `json:"layout"`
		Repo      string   `json:"repo"`
		Resources []struct {
			API struct {
				Namespaced bool `json:"namespaced"`
			} `json:"api"`
			Controller bool   `json:"controller"`
			Domain     string `json:"domain"`
			Group      string `json:"group"`
			Kind       string `json:"kind"`
			Path       string `json:"path"`
			Version    string `json:"version"`
			Webhooks   struct {
				Defaulting bool `json:"defaulting"`
				Validation bool `json:"validation"`
			} `json:"webhooks"`
		} `json:"resources"`
	}
	raw, err := os.ReadFile("PROJECT")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, &project); err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(mod), "module "+project.Repo+"\n") {
		t.Errorf("repo %q is not the module", project.Repo)
	}
	if !slices.Equal(project.Layout, []string{"go.kubebuilder.io/v3"}) {
		t.Errorf("layout %v: the tree has the v3 layout (main.go and controllers/ at the root)", project.Layout)
	}
	for _, p := range []string{"main.go", "controllers", "api/v1alpha1"} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("the v3 layout needs %s: %v", p, err)
		}
	}

	// The CRDs as generated.
	type crd struct {
		Spec struct {
			Group string `json:"group"`
			Names struct {
				Kind string `json:"kind"`
			} `json:"names"`
			Scope string `json:"scope"`
		} `json:"spec"`
	}
	crds := map[string]crd{}
	files, _ := filepath.Glob("config/crd/bases/*.yaml")
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var c crd
		if err := yaml.Unmarshal(raw, &c); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		crds[c.Spec.Names.Kind] = c
	}
	markers, err := filepath.Glob("webhooks/*.go")
	if err != nil {
		t.Fatal(err)
	}
	var webhookSrc strings.Builder
	for _, f := range markers {
		raw, _ := os.ReadFile(f)
		webhookSrc.Write(raw)
	}
	seen := map[string]bool{}
	for _, r := range project.Resources {
		seen[r.Kind] = true
		c, ok := crds[r.Kind]
		if !ok {
			t.Errorf("%s: no CRD in config/crd/bases", r.Kind)
			continue
		}
		if got := r.Group + "." + r.Domain; got != c.Spec.Group || r.Domain != project.Domain {
			t.Errorf("%s: group %s, the CRD's is %s", r.Kind, got, c.Spec.Group)
		}
		if r.API.Namespaced != (c.Spec.Scope == "Namespaced") {
			t.Errorf("%s: namespaced %v, the CRD's scope is %s", r.Kind, r.API.Namespaced, c.Spec.Scope)
		}
		if r.Path != project.Repo+"/api/"+r.Version {
			t.Errorf("%s: path %s", r.Kind, r.Path)
		}
		lower := strings.ToLower(r.Kind)
		_, err := os.Stat(filepath.Join("controllers", lower+"_controller.go"))
		if r.Controller != (err == nil) {
			t.Errorf("%s: controller %v, but controllers/%s_controller.go exists: %v", r.Kind, r.Controller, lower, err == nil)
		}
		for _, w := range []struct {
			flag bool
			verb string
		}{{r.Webhooks.Defaulting, "mutate"}, {r.Webhooks.Validation, "validate"}} {
			re := regexp.MustCompile(`path=/` + w.verb + `-monitoring-uptime-operator-io-` + r.Version + `-` + lower + `,`)
			if found := re.MatchString(webhookSrc.String()); found != w.flag {
				t.Errorf("%s: %s webhook %v in PROJECT, marker present: %v", r.Kind, w.verb, w.flag, found)
			}
		}
	}
	for kind := range crds {
		if !seen[kind] {
			t.Errorf("CRD %s is not in PROJECT", kind)
		}
	}
}

// builtinShortNames are the short names of the resources every Kubernetes
// 1.37 cluster serves (`kubectl api-resources`). A CRD short name equal to
// one shadows the built-in for kubectl users: `kubectl get ep` listed
// EscalationPolicies instead of Endpoints (issue 28 row 8).
var builtinShortNames = []string{
	"cm", "cs", "ep", "ev", "limits", "no", "ns", "po", "pv", "pvc", "quota", "rc", "sa", "svc",
	"crd", "crds", "deploy", "ds", "rs", "sts", "hpa", "cj", "csr", "ing", "netpol", "pdb", "pc", "sc", "vac",
}

// commonCRDShortNames are short names of CRDs that clusters often run next to
// this operator, with whose they are. kubectl resolves a short name to one
// resource only, so a clash makes `kubectl get <short>` list one or the
// other depending on discovery order: ProbeRegion's `pr` was Tekton's
// PipelineRun's (issue 41).
var commonCRDShortNames = map[string]string{
	"pr": "Tekton PipelineRun", "prs": "Tekton PipelineRun", "tr": "Tekton TaskRun", "trs": "Tekton TaskRun",
	"cert": "cert-manager Certificate", "certs": "cert-manager Certificate", "cr": "cert-manager CertificateRequest", "crs": "cert-manager CertificateRequest",
	"app": "Argo CD Application", "apps": "Argo CD Application", "appproj": "Argo CD AppProject", "ro": "Argo Rollouts Rollout",
	"ks": "Flux Kustomization", "hr": "Flux HelmRelease", "gitrepo": "Flux GitRepository", "helmrepo": "Flux HelmRepository", "hc": "Flux HelmChart",
	"smon": "Prometheus Operator ServiceMonitor", "pmon": "Prometheus Operator PodMonitor", "promrule": "Prometheus Operator PrometheusRule",
	"prom": "Prometheus Operator Prometheus", "am": "Prometheus Operator Alertmanager", "prb": "Prometheus Operator Probe",
	"vs": "Istio VirtualService", "dr": "Istio DestinationRule", "gw": "Istio Gateway", "se": "Istio ServiceEntry",
	"ksvc": "Knative Service", "so": "KEDA ScaledObject", "sj": "KEDA ScaledJob",
	"cpol": "Kyverno ClusterPolicy", "pol": "Kyverno Policy", "es": "External Secrets ExternalSecret", "ss": "External Secrets SecretStore",
	"cl": "Cluster API Cluster", "ma": "Cluster API Machine", "md": "Cluster API MachineDeployment", "ms": "Cluster API MachineSet",
}

// TestCRDShortNames checks that no CRD's short names shadow a built-in
// resource's or a common CRD's.
func TestCRDShortNames(t *testing.T) {
	files, err := filepath.Glob("config/crd/bases/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs in config/crd/bases: %v", err)
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var crd struct {
			Spec struct {
				Names struct {
					Kind       string   `json:"kind"`
					ShortNames []string `json:"shortNames"`
				} `json:"names"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal(raw, &crd); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, s := range crd.Spec.Names.ShortNames {
			if slices.Contains(builtinShortNames, s) {
				t.Errorf("%s: short name %q of %s shadows a built-in resource's", f, s, crd.Spec.Names.Kind)
			}
			if other, ok := commonCRDShortNames[s]; ok {
				t.Errorf("%s: short name %q of %s is also %s's", f, s, crd.Spec.Names.Kind, other)
			}
		}
	}
}

// TestDocLinks checks that README.md and docs/*.md point only at files the
// repository has: every relative Markdown link, and every `path/file.md`
// they name in code spans (they cited spec/webhooks.md, which is not in the
// repository; issue 28 row 8).
func TestDocLinks(t *testing.T) {
	files, _ := filepath.Glob("docs/*.md")
	files = append(files, "README.md", "CHANGELOG.md")
	link := regexp.MustCompile(`\]\(([^)\s#]+)(#[^)]*)?\)`)
	named := regexp.MustCompile("`([A-Za-z0-9_./-]+/[A-Za-z0-9_.-]+\\.md)`")
	code := regexp.MustCompile("(?s)```.*?```|`[^`\n]*`")
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		prose := code.ReplaceAllString(string(raw), "")
		for _, m := range link.FindAllStringSubmatch(prose, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(f), target)); err != nil {
				t.Errorf("%s links to %s, which does not exist", f, target)
			}
		}
		for _, m := range named.FindAllStringSubmatch(string(raw), -1) {
			_, errRoot := os.Stat(m[1])
			_, errHere := os.Stat(filepath.Join(filepath.Dir(f), m[1]))
			if errRoot != nil && errHere != nil {
				t.Errorf("%s names %s, which is not in the repository", f, m[1])
			}
		}
	}
}
