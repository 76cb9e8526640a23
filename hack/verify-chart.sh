#!/usr/bin/env bash
# Verifies the Helm chart charts/uptime-operator:
#
#  always (no helm needed):
#   1. its CRD templates (templates/crds) are config/crd/bases as made by
#      hack/sync-chart-crds.sh (`make manifests` runs it);
#   2. the manager ClusterRole and Role rules in templates/rbac-manager.yaml equal the
#      generated config/rbac/role.yaml;
#   3. every key of values.yaml is declared in values.schema.json (with a type),
#      every leaf is documented by a "# --" comment, and the values table in
#      docs/helm.md is the one generated from those comments;
#  with helm (helm on PATH, $HELM, or built from the Go module proxy into a cache):
#   4. `helm lint` and `helm template` of the default values and of every
#      ci/*-values.yaml (postgres+HA, cert-manager, remote mode, everything on);
#   5. every rendered document parses (Go YAML decoder and `kubectl annotate
#      --local`), has apiVersion, kind and name, and namespaced kinds carry the
#      release namespace; every Pod template passes Pod Security baseline and
#      restricted (k8s.io/pod-security-admission's evaluator);
#   6. the rendered manager ClusterRole and Role, access ClusterRoles, aggregate roles and
#      webhook configurations match config/rbac and config/webhook/manifests.yaml;
#   7. values the chart must refuse are refused (replicas > 1 on SQLite, unknown
#      top-level keys, remote mode without its settings).
#
# When no helm binary can be had, steps 4-7 are skipped with the reason printed
# and the script still exits 0; steps 1-3 always run and fail the script.
#
# Usage: hack/verify-chart.sh [--update-docs]
#   --update-docs  rewrite the values table in docs/helm.md instead of checking it
# Environment: HELM (helm binary), HELM_VERSION (module version to build,
#   default v3.19.0), KUBECTL, K8S_VERSION (default 1.37.2).
set -euo pipefail

cd "$(dirname "$0")/.."

CHART=charts/uptime-operator
NS=uptime-operator-system
RELEASE=uptime-operator
K8S_VERSION="${K8S_VERSION:-1.37.2}"
UPDATE_DOCS=false
[[ "${1:-}" == "--update-docs" ]] && UPDATE_DOCS=true

failed=0
fail() { echo "verify-chart: FAIL: $*" >&2; failed=1; }
ok() { echo "verify-chart: ok: $*"; }

work="$(mktemp -d)"
# The checker is Go (it imports sigs.k8s.io/yaml from this module), so it is
# written inside the module; dot-directories are ignored by ./... patterns.
checker_dir="$(mktemp -d "$PWD/.verify-chart.XXXXXX")"
trap 'rm -rf "$work" "$checker_dir"' EXIT

cat >"$checker_dir/main.go" <<'GO'
// Command verify-chart-checker holds the structural checks of
// hack/verify-chart.sh that need a YAML parser.
package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/go-logr/logr/funcr"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/uptime-operator/uptime-operator/internal/bootstrap"
	"github.com/uptime-operator/uptime-operator/internal/manager"
	"github.com/uptime-operator/uptime-operator/internal/podsecurity"
)

func main() {
	if len(os.Args) < 2 {
		fatalf("usage: checker rules|rendered|values|docs ...")
	}
	var errs []string
	switch os.Args[1] {
	case "rules":
		errs = checkTemplateRules(os.Args[2], os.Args[3])
	case "rendered":
		errs = checkRendered(os.Args[2], os.Args[3], os.Args[4], os.Args[5:])
	case "values":
		errs = checkValues(os.Args[2], os.Args[3])
	case "docs":
		fmt.Print(valuesTable(os.Args[2], os.Args[3]))
		return
	case "podsecurity":
		errs = checkPodSecurity(os.Args[2])
	case "strip":
		strip(os.Args[2], os.Args[3:])
		return
	case "serve":
		serve(os.Args[2], os.Args[3])
		return
	case "bootstrap":
		errs = applyBootstrap(os.Args[2], os.Args[3], os.Args[4], os.Args[5])
	default:
		fatalf("unknown command %q", os.Args[1])
	}
	for _, e := range errs {
		fmt.Fprintln(os.Stderr, e)
	}
	if len(errs) > 0 {
		os.Exit(1)
	}
}

// applyBootstrap applies a bootstrap file (the data of the chart's bootstrap
// ConfigMap) the way the manager does (--bootstrap-file, --bootstrap-release,
// --bootstrap-owner), with its code.
func applyBootstrap(kubeconfig, file, release, owner string) []string {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return []string{err.Error()}
	}
	c, err := client.New(cfg, client.Options{Scheme: manager.Scheme()})
	if err != nil {
		return []string{err.Error()}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	a := &bootstrap.Applier{Client: c, File: file, Release: release, OwnerWebhook: owner,
		Log: funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{})}
	if err := a.Start(ctx); err != nil {
		return []string{err.Error()}
	}
	if ctx.Err() != nil {
		return []string{"the bootstrap file was not applied within a minute"}
	}
	return nil
}

func fatalf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", a...)
	os.Exit(2)
}

func read(path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		fatalf("read %s: %v", path, err)
	}
	return b
}

// docs splits a multi-document YAML stream into decoded objects.
func docs(path string) []map[string]any {
	var out []map[string]any
	for i, d := range regexp.MustCompile(`(?m)^---[ \t]*$`).Split(string(read(path)), -1) {
		if strings.TrimSpace(stripComments(d)) == "" {
			continue
		}
		var m map[string]any
		if err := yaml.Unmarshal([]byte(d), &m); err != nil {
			fatalf("%s: document %d does not parse: %v", path, i, err)
		}
		if m != nil {
			out = append(out, m)
		}
	}
	return out
}

// strip prints the documents of path whose kind is not in kinds (objects of
// CRDs the test control plane does not have, such as cert-manager's).
func strip(path string, kinds []string) {
	for _, o := range docs(path) {
		skip := false
		for _, k := range kinds {
			skip = skip || o["kind"] == k
		}
		if !skip {
			b, _ := yaml.Marshal(o)
			fmt.Printf("---\n%s", b)
		}
	}
}

// serve starts a kube-apiserver and etcd (envtest, $KUBEBUILDER_ASSETS) with
// the CRDs of crdDir ("-": none), writes an admin kubeconfig and runs until stdin closes.
func serve(crdDir, kubeconfig string) {
	env := &envtest.Environment{}
	if crdDir != "-" {
		env.CRDDirectoryPaths, env.ErrorIfCRDPathMissing = []string{crdDir}, true
	}
	cfg, err := env.Start()
	if err != nil {
		fatalf("start envtest: %v", err)
	}
	defer func() { _ = env.Stop() }()
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: envtest
  cluster: {server: %q, certificate-authority-data: %q}
users:
- name: admin
  user: {client-certificate-data: %q, client-key-data: %q}
contexts:
- name: envtest
  context: {cluster: envtest, user: admin}
current-context: envtest
`, cfg.Host, b64(cfg.CAData), b64(cfg.CertData), b64(cfg.KeyData))
	if err := os.WriteFile(kubeconfig+".tmp", []byte(kc), 0o600); err != nil {
		fatalf("write kubeconfig: %v", err)
	}
	if err := os.Rename(kubeconfig+".tmp", kubeconfig); err != nil {
		fatalf("write kubeconfig: %v", err)
	}
	_, _ = io.Copy(io.Discard, os.Stdin)
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func stripComments(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

func find(objs []map[string]any, kind, name string) map[string]any {
	for _, o := range objs {
		if o["kind"] == kind && str(o, "metadata", "name") == name {
			return o
		}
	}
	return nil
}

func str(m map[string]any, path ...string) string {
	var cur any = m
	for _, p := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			return ""
		}
		cur = mm[p]
	}
	s, _ := cur.(string)
	return s
}

func canon(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// withoutSecrets drops Secrets from RBAC rules (and rules left empty).
func withoutSecrets(rules any) any {
	list, _ := rules.([]any)
	out := []any{}
	for _, r := range list {
		r, _ := r.(map[string]any)
		var res []any
		for _, x := range r["resources"].([]any) {
			if x != "secrets" {
				res = append(res, x)
			}
		}
		if len(res) == 0 {
			continue
		}
		c := map[string]any{}
		for k, v := range r {
			c[k] = v
		}
		c["resources"] = res
		out = append(out, c)
	}
	return out
}

// checkTemplateRules compares the rules between the BEGIN/END markers of the
// chart's manager roles with config/rbac/role.yaml: the ClusterRole's rules
// between the "rules" markers, the probe-namespace Role's between the
// "namespaced rules" markers.
func checkTemplateRules(roleFile, templateFile string) []string {
	var errs []string
	src := string(read(templateFile))
	for _, part := range []struct{ kind, markers string }{{"ClusterRole", "rules"}, {"Role", "namespaced rules"}} {
		var want []map[string]any
		for _, d := range docs(roleFile) {
			if str(d, "kind") == part.kind {
				want = append(want, d)
			}
		}
		if len(want) != 1 {
			errs = append(errs, fmt.Sprintf("%s: want one %s, found %d", roleFile, part.kind, len(want)))
			continue
		}
		begin, end := "# BEGIN "+part.markers+" of config/rbac/role.yaml\n", "# END "+part.markers+" of config/rbac/role.yaml"
		i, j := strings.Index(src, begin), strings.Index(src, end)
		if i < 0 || j < i {
			errs = append(errs, templateFile+": "+part.markers+" markers not found")
			continue
		}
		block := src[i+len(begin) : j]
		if strings.Contains(block, "{{") {
			errs = append(errs, templateFile+": the copied rules must stay literal YAML (no template actions)")
			continue
		}
		var rules []any
		if err := yaml.Unmarshal([]byte(block), &rules); err != nil {
			errs = append(errs, fmt.Sprintf("%s: copied %s do not parse: %v", templateFile, part.markers, err))
			continue
		}
		if canon(rules) != canon(want[0]["rules"]) {
			errs = append(errs, fmt.Sprintf("%s: the manager %s rules differ from %s; run hack/sync-chart-rbac.sh (make manifests)", templateFile, part.kind, roleFile))
		}
	}
	return errs
}

// secretsInArgs refuses a container argument that expands an environment
// variable fed from a Secret ("--store=$(DSN)"): the kubelet writes the
// value into the argument list, which every process that can list
// processes reads (/proc/<pid>/cmdline). Secrets go in mounted files.
func secretsInArgs(path string, o map[string]any) []string {
	spec, _ := o["spec"].(map[string]any)
	tmpl, _ := spec["template"].(map[string]any)
	pod, _ := tmpl["spec"].(map[string]any)
	var errs []string
	for _, field := range []string{"initContainers", "containers"} {
		list, _ := pod[field].([]any)
		for _, c := range list {
			c, _ := c.(map[string]any)
			secretEnv := map[string]bool{}
			env, _ := c["env"].([]any)
			for _, e := range env {
				e, _ := e.(map[string]any)
				if vf, ok := e["valueFrom"].(map[string]any); ok && vf["secretKeyRef"] != nil {
					secretEnv[fmt.Sprint(e["name"])] = true
				}
			}
			for _, key := range []string{"command", "args"} {
				args, _ := c[key].([]any)
				for _, a := range args {
					for name := range secretEnv {
						if strings.Contains(fmt.Sprint(a), "$("+name+")") {
							errs = append(errs, fmt.Sprintf("%s: %s/%s container %v puts Secret-fed $(%s) in its %s; mount the Secret as a file instead",
								path, str(o, "kind"), str(o, "metadata", "name"), c["name"], name, key))
						}
					}
				}
			}
		}
	}
	return errs
}

var clusterScoped = map[string]bool{
	"ClusterRole": true, "ClusterRoleBinding": true, "APIService": true,
	"MutatingWebhookConfiguration": true, "ValidatingWebhookConfiguration": true,
	"ProbeRegion": true, "Plan": true, "CustomResourceDefinition": true,
	"Namespace": true, "PriorityClass": true, "StorageClass": true,
}

// checkRendered checks helm template output: identity fields, namespaces,
// and (with compare=true, for the manager modes) RBAC and webhooks against
// config/.
func checkRendered(path, namespace, fullname string, flags []string) []string {
	compare := len(flags) > 0 && flags[0] == "compare"
	objs := docs(path)
	var errs []string
	if len(objs) == 0 {
		return []string{path + ": renders no objects"}
	}
	seen := map[string]bool{}
	for _, o := range objs {
		kind, name := str(o, "kind"), str(o, "metadata", "name")
		if str(o, "apiVersion") == "" || kind == "" || name == "" {
			errs = append(errs, fmt.Sprintf("%s: object without apiVersion, kind or name: %.120s", path, canon(o)))
			continue
		}
		ns := str(o, "metadata", "namespace")
		switch {
		case clusterScoped[kind] && ns != "":
			errs = append(errs, fmt.Sprintf("%s: cluster-scoped %s/%s has namespace %q", path, kind, name, ns))
		case !clusterScoped[kind] && ns == "":
			errs = append(errs, fmt.Sprintf("%s: namespaced %s/%s has no namespace", path, kind, name))
		case !clusterScoped[kind] && ns != namespace && !(kind == "RoleBinding" && ns == "kube-system") &&
			!((kind == "Role" || kind == "RoleBinding") && name == fullname+"-manager-secrets"):
			errs = append(errs, fmt.Sprintf("%s: %s/%s is in namespace %q, not the release namespace %q", path, kind, name, ns, namespace))
		}
		key := kind + "/" + ns + "/" + name
		if seen[key] {
			errs = append(errs, fmt.Sprintf("%s: %s is rendered twice", path, key))
		}
		seen[key] = true
		errs = append(errs, secretsInArgs(path, o)...)
	}
	if !compare {
		return errs
	}
	// The manager ClusterRole and probe-namespace Role against the
	// generated role.yaml; the Role and its binding in the release namespace.
	// With rbac.secretNamespaces (Roles <fullname>-manager-secrets), the
	// ClusterRole is role.yaml's without Secrets.
	secretRoles := find(objs, "Role", fullname+"-manager-secrets") != nil
	for _, role := range docs("config/rbac/role.yaml") {
		kind := str(role, "kind")
		want := role["rules"]
		if kind == "ClusterRole" && secretRoles {
			want = withoutSecrets(want)
		}
		if got := find(objs, kind, fullname+"-manager"); got == nil {
			errs = append(errs, path+": no "+kind+" "+fullname+"-manager")
		} else if canon(got["rules"]) != canon(want) {
			errs = append(errs, path+": "+kind+" "+fullname+"-manager rules differ from config/rbac/role.yaml")
		}
	}
	if rb := find(objs, "RoleBinding", fullname+"-manager"); rb == nil || str(rb, "roleRef", "name") != fullname+"-manager" {
		errs = append(errs, path+": no RoleBinding "+fullname+"-manager of the probe-namespace Role")
	}
	// Access roles (fixed names) and the view/edit aggregation roles.
	for _, file := range []string{"config/rbac/access_roles.yaml", "config/rbac/crd_view_edit_roles.yaml"} {
		for _, want := range docs(file) {
			name := str(want, "metadata", "name")
			if strings.HasPrefix(name, "uptime-operator-crd-") {
				name = fullname + strings.TrimPrefix(name, "uptime-operator")
			}
			got := find(objs, "ClusterRole", name)
			if got == nil {
				errs = append(errs, fmt.Sprintf("%s: no ClusterRole %s (from %s)", path, name, file))
				continue
			}
			if canon(got["rules"]) != canon(want["rules"]) {
				errs = append(errs, fmt.Sprintf("%s: ClusterRole %s rules differ from %s", path, name, file))
			}
			for k, v := range labels(want) {
				if k != "app.kubernetes.io/name" && labels(got)[k] != v {
					errs = append(errs, fmt.Sprintf("%s: ClusterRole %s lacks label %s=%s of %s", path, name, k, v, file))
				}
			}
		}
	}
	// Webhooks against config/webhook/manifests.yaml.
	for _, want := range docs("config/webhook/manifests.yaml") {
		kind := str(want, "kind")
		var got map[string]any
		for _, o := range objs {
			if o["kind"] == kind {
				got = o
			}
		}
		if got == nil {
			errs = append(errs, fmt.Sprintf("%s: no %s", path, kind))
			continue
		}
		if w, g := webhookSummary(want), webhookSummary(got); !reflect.DeepEqual(w, g) {
			errs = append(errs, fmt.Sprintf("%s: %s differs from config/webhook/manifests.yaml:\n  want %v\n  got  %v", path, kind, w, g))
		}
	}
	return errs
}

// checkPodSecurity evaluates every Pod template of a rendering (Deployments,
// StatefulSets, DaemonSets, Jobs, Pods) with the Pod Security admission
// evaluator: baseline and restricted must both allow it, so the chart
// installs into a namespace labelled pod-security.kubernetes.io/enforce:
// restricted.
func checkPodSecurity(path string) []string {
	var errs []string
	pods := 0
	for _, o := range docs(path) {
		kind, name := str(o, "kind"), str(o, "metadata", "name")
		var tmpl any
		switch kind {
		case "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job":
			spec, _ := o["spec"].(map[string]any)
			tmpl = spec["template"]
		case "Pod":
			tmpl = o
		default:
			continue
		}
		b, _ := json.Marshal(tmpl)
		var pt corev1.PodTemplateSpec
		if err := json.Unmarshal(b, &pt); err != nil {
			errs = append(errs, fmt.Sprintf("%s: %s/%s: pod template does not decode: %v", path, kind, name, err))
			continue
		}
		pods++
		for _, v := range podsecurity.Violations(&pt.ObjectMeta, &pt.Spec) {
			errs = append(errs, fmt.Sprintf("%s: %s/%s violates Pod Security %s", path, kind, name, v))
		}
	}
	if pods == 0 {
		errs = append(errs, path+": renders no Pod template")
	}
	return errs
}

func labels(o map[string]any) map[string]string {
	out := map[string]string{}
	md, _ := o["metadata"].(map[string]any)
	l, _ := md["labels"].(map[string]any)
	for k, v := range l {
		out[k] = fmt.Sprint(v)
	}
	return out
}

// webhookSummary is what must agree between the generated and the chart's
// webhooks: name, path, rules, failure policy, side effects, review versions.
func webhookSummary(o map[string]any) []string {
	var out []string
	hooks, _ := o["webhooks"].([]any)
	for _, h := range hooks {
		m := h.(map[string]any)
		cc, _ := m["clientConfig"].(map[string]any)
		svc, _ := cc["service"].(map[string]any)
		out = append(out, fmt.Sprintf("%v path=%v rules=%s failurePolicy=%v sideEffects=%v versions=%s",
			m["name"], svc["path"], canon(m["rules"]), m["failurePolicy"], m["sideEffects"], canon(m["admissionReviewVersions"])))
	}
	sort.Strings(out)
	return out
}

// checkValues checks that every key of values.yaml is declared in the schema
// with a type, and that every leaf is documented by a "# --" comment.
func checkValues(valuesFile, schemaFile string) []string {
	var values map[string]any
	if err := yaml.Unmarshal(read(valuesFile), &values); err != nil {
		fatalf("%s: %v", valuesFile, err)
	}
	var schema map[string]any
	if err := json.Unmarshal(read(schemaFile), &schema); err != nil {
		fatalf("%s: %v", schemaFile, err)
	}
	var errs []string
	if schema["additionalProperties"] != false {
		errs = append(errs, schemaFile+": the top level must set additionalProperties: false")
	}
	documented := documentedKeys(valuesFile)
	var walk func(path string, v any, s map[string]any)
	walk = func(path string, v any, s map[string]any) {
		if s == nil {
			errs = append(errs, fmt.Sprintf("%s: %s is not declared in %s", valuesFile, path, schemaFile))
			return
		}
		if s["type"] == nil && s["anyOf"] == nil && s["enum"] == nil && s["const"] == nil {
			errs = append(errs, fmt.Sprintf("%s: %s has no type", schemaFile, path))
		}
		if path != "" && !coveredByDoc(path, documented) {
			if _, isMap := v.(map[string]any); !isMap || len(v.(map[string]any)) == 0 {
				errs = append(errs, fmt.Sprintf("%s: %s has no \"# --\" comment (on it or on a parent)", valuesFile, path))
			}
		}
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		props, _ := s["properties"].(map[string]any)
		if props == nil {
			// A free-form object (resources, affinity, labels): Kubernetes
			// validates its content.
			return
		}
		for k, child := range m {
			ps, _ := props[k].(map[string]any)
			walk(strings.TrimPrefix(path+"."+k, "."), child, ps)
		}
	}
	walk("", values, schema)
	// Every declared top-level property should exist in values.yaml, so the
	// defaults document it.
	if props, ok := schema["properties"].(map[string]any); ok {
		for k := range props {
			if _, ok := values[k]; !ok && k != "global" {
				errs = append(errs, fmt.Sprintf("%s: top-level %q is declared in the schema but missing from %s", schemaFile, k, valuesFile))
			}
		}
	}
	sort.Strings(errs)
	return errs
}

func coveredByDoc(path string, documented map[string]string) bool {
	for p := path; p != ""; {
		if _, ok := documented[p]; ok {
			return true
		}
		i := strings.LastIndex(p, ".")
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return false
}

var keyLine = regexp.MustCompile(`^(\s*)([A-Za-z0-9_]+):(.*)$`)

// documentedKeys maps the dotted path of each key preceded by a "# --"
// comment to the comment text.
func documentedKeys(valuesFile string) map[string]string {
	type frame struct {
		indent int
		key    string
	}
	var stack []frame
	out := map[string]string{}
	var pending []string
	inDoc := false
	for _, line := range strings.Split(string(read(valuesFile)), "\n") {
		t := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(t, "# --"):
			pending, inDoc = []string{strings.TrimSpace(strings.TrimPrefix(t, "# --"))}, true
			continue
		case strings.HasPrefix(t, "#"):
			if inDoc {
				pending = append(pending, strings.TrimSpace(strings.TrimPrefix(t, "#")))
			}
			continue
		case t == "" || strings.HasPrefix(t, "-"):
			inDoc = false
			continue
		}
		m := keyLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		indent := len(m[1])
		for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
			stack = stack[:len(stack)-1]
		}
		stack = append(stack, frame{indent, m[2]})
		if inDoc {
			var keys []string
			for _, f := range stack {
				keys = append(keys, f.key)
			}
			out[strings.Join(keys, ".")] = strings.Join(pending, " ")
		}
		inDoc, pending = false, nil
	}
	return out
}

// valuesTable renders the Markdown table of documented values.
func valuesTable(valuesFile, schemaFile string) string {
	var values map[string]any
	if err := yaml.Unmarshal(read(valuesFile), &values); err != nil {
		fatalf("%s: %v", valuesFile, err)
	}
	var schema map[string]any
	if err := json.Unmarshal(read(schemaFile), &schema); err != nil {
		fatalf("%s: %v", schemaFile, err)
	}
	doc := documentedKeys(valuesFile)
	var keys []string
	for k := range doc {
		keys = append(keys, k)
	}
	// values.yaml order reads best; documentedKeys lost it, so re-derive it.
	order := map[string]int{}
	for i, k := range orderedKeys(valuesFile) {
		order[k] = i
	}
	sort.Slice(keys, func(i, j int) bool { return order[keys[i]] < order[keys[j]] })
	var b bytes.Buffer
	b.WriteString("| Key | Type | Default | Description |\n|---|---|---|---|\n")
	for _, k := range keys {
		def := lookup(values, k)
		d := "`" + strings.ReplaceAll(canon(def), "|", "\\|") + "`"
		if len(d) > 62 {
			d = "see values.yaml"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", k, schemaType(schema, k), d, strings.ReplaceAll(doc[k], "|", "\\|"))
	}
	return b.String()
}

func orderedKeys(valuesFile string) []string {
	var out []string
	seen := map[string]bool{}
	doc := documentedKeys(valuesFile)
	// Walk the file again in order, reusing the path logic.
	type frame struct {
		indent int
		key    string
	}
	var stack []frame
	for _, line := range strings.Split(string(read(valuesFile)), "\n") {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "-") {
			continue
		}
		m := keyLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		indent := len(m[1])
		for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
			stack = stack[:len(stack)-1]
		}
		stack = append(stack, frame{indent, m[2]})
		var keys []string
		for _, f := range stack {
			keys = append(keys, f.key)
		}
		p := strings.Join(keys, ".")
		if _, ok := doc[p]; ok && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

func lookup(v any, path string) any {
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func schemaType(schema map[string]any, path string) string {
	s := schema
	for _, k := range strings.Split(path, ".") {
		props, _ := s["properties"].(map[string]any)
		next, _ := props[k].(map[string]any)
		if next == nil {
			return "?"
		}
		s = next
	}
	if e, ok := s["enum"].([]any); ok {
		var vs []string
		for _, v := range e {
			vs = append(vs, fmt.Sprint(v))
		}
		return "enum: " + strings.Join(vs, ", ")
	}
	if t, ok := s["type"].(string); ok {
		return t
	}
	if a, ok := s["anyOf"].([]any); ok {
		var ts []string
		for _, x := range a {
			if t, ok := x.(map[string]any)["type"].(string); ok {
				ts = append(ts, t)
			}
		}
		return strings.Join(ts, " or ")
	}
	return "any"
}
GO
checker() { go run "./$(basename "$checker_dir")" "$@"; }

# 1. The chart's CRD templates are the ones hack/sync-chart-crds.sh makes
#    from config/crd/bases, and the chart has no crds/ directory (Helm never
#    upgrades what sits there).
hack/sync-chart-crds.sh "$work/crds"
if [[ -d "$CHART/crds" ]]; then
  fail "$CHART/crds exists: CRDs are templates (templates/crds), which Helm upgrades"
elif diff -r -q "$work/crds" "$CHART/templates/crds" >"$work/crd.diff" 2>&1; then
  ok "$CHART/templates/crds are config/crd/bases as templates ($(ls config/crd/bases | wc -l) CRDs)"
else
  cat "$work/crd.diff" >&2
  fail "$CHART/templates/crds differs from config/crd/bases; run 'make manifests'"
fi

# 2. The manager ClusterRole and probe-namespace Role rules equal config/rbac/role.yaml.
if checker rules config/rbac/role.yaml "$CHART/templates/rbac-manager.yaml"; then
  ok "manager ClusterRole and Role rules equal config/rbac/role.yaml"
else
  fail "manager ClusterRole rules"
fi

# 3. values.yaml against values.schema.json, its comments, and docs/helm.md.
if checker values "$CHART/values.yaml" "$CHART/values.schema.json"; then
  ok "every key of values.yaml is declared in values.schema.json and documented"
else
  fail "values.yaml / values.schema.json coverage"
fi
checker docs "$CHART/values.yaml" "$CHART/values.schema.json" >"$work/table.md"
begin='<!-- BEGIN VALUES TABLE (hack/verify-chart.sh --update-docs) -->'
end='<!-- END VALUES TABLE -->'
if [[ ! -f docs/helm.md ]] || ! grep -qF -- "$begin" docs/helm.md; then
  fail "docs/helm.md lacks the values table markers"
else
  awk -v b="$begin" -v e="$end" -v t="$work/table.md" '
    $0 == b { print; while ((getline l < t) > 0) print l; skip = 1; next }
    $0 == e { skip = 0 }
    !skip { print }' docs/helm.md >"$work/helm.md"
  if $UPDATE_DOCS; then
    cp "$work/helm.md" docs/helm.md
    ok "rewrote the values table in docs/helm.md"
  elif diff -u docs/helm.md "$work/helm.md" >"$work/docs.diff"; then
    ok "docs/helm.md values table is current"
  else
    head -40 "$work/docs.diff" >&2
    fail "docs/helm.md values table is stale; run hack/verify-chart.sh --update-docs"
  fi
fi

# 4-7 need helm.
# shellcheck source=hack/lib/helm.sh
source hack/lib/helm.sh
HELM_BIN="$(find_helm || true)"
if [[ -z "$HELM_BIN" ]]; then
  echo "verify-chart: SKIP helm lint/template and the rendered-manifest checks: no helm binary (not on PATH, \$HELM unset, and 'go install helm.sh/helm/v3/cmd/helm@$HELM_VERSION' failed)"
  exit "$failed"
fi

K8S_ASSETS="${KUBEBUILDER_ASSETS_DIR:-$HOME/.local/share/kubebuilder-envtest/k8s/${K8S_VERSION}-linux-amd64}"
if [[ -z "${KUBECTL:-}" ]]; then
  if [[ -x "$K8S_ASSETS/kubectl" ]]; then KUBECTL="$K8S_ASSETS/kubectl"
  elif command -v kubectl >/dev/null; then KUBECTL=kubectl
  else KUBECTL=""; fi
fi

helm_args=(--namespace "$NS" --kube-version "$K8S_VERSION")
if "$HELM_BIN" lint "$CHART" "${helm_args[@]}" --strict >"$work/lint.log" 2>&1; then
  ok "helm lint (default values)"
else
  cat "$work/lint.log" >&2
  fail "helm lint (default values)"
fi

for values in "$CHART"/ci/*-values.yaml; do
  name="$(basename "$values" -values.yaml)"
  out="$work/$name.yaml"
  if ! "$HELM_BIN" lint "$CHART" "${helm_args[@]}" --strict -f "$values" >"$work/$name.lint" 2>&1; then
    cat "$work/$name.lint" >&2
    fail "helm lint -f $values"
  fi
  if ! "$HELM_BIN" template "$RELEASE" "$CHART" "${helm_args[@]}" -f "$values" >"$out" 2>"$work/$name.err"; then
    cat "$work/$name.err" >&2
    fail "helm template -f $values"
    continue
  fi
  compare=compare
  grep -q '^mode: remote' "$values" && compare=""
  if ! checker rendered "$out" "$NS" "$RELEASE" $compare; then
    fail "rendered manifests of $values"
    continue
  fi
  if checker podsecurity "$out"; then
    ok "$values: every Pod template passes Pod Security baseline and restricted"
  else
    fail "$values: Pod templates refused by Pod Security"
  fi
  if [[ -n "$KUBECTL" ]]; then
    if ! KUBECONFIG=/dev/null "$KUBECTL" annotate --local -f "$out" uptime-operator.io/verify=true -o name >"$work/$name.objects" 2>"$work/$name.kerr"; then
      cat "$work/$name.kerr" >&2
      fail "kubectl cannot parse the manifests of $values"
      continue
    fi
    ok "$values renders $(wc -l <"$work/$name.objects") objects that kubectl parses${compare:+; RBAC and webhooks match config/}"
  else
    ok "$values renders $(grep -c '^kind:' "$out") objects${compare:+; RBAC and webhooks match config/} (no kubectl: Go YAML parse only)"
  fi
done

# Two offline renders are identical (issue 28 row 3): the manager keeps the
# serving certificates at runtime, so a GitOps tool sees no diff between
# syncs. Every values file, rendered again and compared.
for values in "$CHART"/ci/*-values.yaml; do
  name="$(basename "$values" -values.yaml)"
  [[ -f "$work/$name.yaml" ]] || continue
  if "$HELM_BIN" template "$RELEASE" "$CHART" "${helm_args[@]}" -f "$values" >"$work/$name.again.yaml" 2>/dev/null &&
    cmp -s "$work/$name.yaml" "$work/$name.again.yaml"; then
    ok "$values: two renders are identical"
  else
    diff "$work/$name.yaml" "$work/$name.again.yaml" | head -20 >&2
    fail "$values: two helm template renders differ"
  fi
done
if grep -q 'PRIVATE KEY\|caBundle:' "$work/default.yaml"; then
  fail "the default rendering holds key material or a caBundle; the manager makes the certificates"
else
  ok "the default rendering holds no key material (the manager keeps the certificates: --cert-rotation)"
fi

# The aggregated API rule (aggregatedAPI.enabled: auto): no APIService in
# front of one SQLite replica, one in front of replicas on PostgreSQL.
if [[ -f "$work/default.yaml" && -f "$work/postgres-ha.yaml" ]] &&
  ! grep -q '^kind: APIService' "$work/default.yaml" && grep -q '^kind: APIService' "$work/postgres-ha.yaml"; then
  ok "aggregatedAPI.enabled=auto: no APIService with one SQLite replica, one with HA replicas on PostgreSQL"
else
  fail "aggregatedAPI.enabled=auto must render the APIService only for 2+ replicas on PostgreSQL"
fi

# 7. Values the chart must refuse.
refuse() {
  local why="$1"; shift
  if "$HELM_BIN" template "$RELEASE" "$CHART" "${helm_args[@]}" "$@" >/dev/null 2>"$work/refuse.err"; then
    fail "helm template $* was accepted; it must be refused ($why)"
  else
    ok "refused $why: $(grep -m1 -oE '(execution error|values don.t meet).*|at .*' "$work/refuse.err" | head -c 160)"
  fi
}
refuse "HA replicas on SQLite" --set manager.replicas=2
refuse "an unknown top-level value" --set noSuchValue=1
refuse "a wrong enum" --set store.type=mysql
refuse "postgres without a DSN Secret" --set store.type=postgres
refuse "remote mode without serverURL/region/token" --set mode=remote
refuse "a remote region without tokenSecretRef" --set 'regions[0].name=x' --set 'regions[0].placement.mode=remote'
refuse "a default plan missing from plans" --set defaultPlan=gold --set 'plans[0].name=free'
refuse "SMTP without a sender" --set smtp.addr=smtp.example.com:587
refuse "an SMTP user without a password Secret" --set smtp.addr=smtp.example.com:587 --set smtp.from=a@example.com --set smtp.username=u
refuse "Twilio without a token Secret" --set twilio.accountSID=AC1 --set-string twilio.from=+15005550006
refuse "a wrong SMTP TLS mode" --set smtp.tlsMode=always

# 8. Against a real kube-apiserver (envtest: kube-apiserver + etcd, no CRDs
#    and no nodes): a real `helm install` of ci/bootstrap-values.yaml, which
#    must install the CRDs (templates/crds) with no webhook server answering;
#    the release holds no ProbeRegion or Plan (Helm could not map them before
#    its own CRDs are served) but the bootstrap ConfigMap, whose objects the
#    manager's applier (internal/bootstrap) creates, owned by the release's
#    ValidatingWebhookConfiguration, updates and prunes; a
#    `helm upgrade`, whose release holds no certificate Secret (the manager
#    makes them at runtime, --cert-rotation); a
#    `helm uninstall`, which must keep the CRDs (crds.keep); then a
#    server-side dry-run of every
#    rendering, so each object is checked against the Kubernetes and CRD
#    OpenAPI schemas.
if [[ ! -x "$K8S_ASSETS/kube-apiserver" || ! -x "$K8S_ASSETS/etcd" || -z "$KUBECTL" ]]; then
  echo "verify-chart: SKIP server-side checks: no kube-apiserver/etcd/kubectl in $K8S_ASSETS (run 'make envtest')"
  exit "$failed"
fi
kubeconfig="$work/kubeconfig"
mkfifo "$work/serve.in"
KUBEBUILDER_ASSETS="$K8S_ASSETS" checker serve - "$kubeconfig" <"$work/serve.in" >"$work/serve.log" 2>&1 &
serve_pid=$!
exec 9>"$work/serve.in"
for _ in $(seq 1 120); do [[ -f "$kubeconfig" ]] && break; kill -0 "$serve_pid" 2>/dev/null || break; sleep 1; done
if [[ ! -f "$kubeconfig" ]]; then
  cat "$work/serve.log" >&2
  fail "could not start the envtest control plane"
  exec 9>&-; wait "$serve_pid" || true
  exit "$failed"
fi
k() { "$KUBECTL" --kubeconfig "$kubeconfig" "$@"; }
h() { "$HELM_BIN" --kubeconfig "$kubeconfig" "$@"; }
k create namespace "$NS" >/dev/null
bootstrap="$CHART/ci/bootstrap-values.yaml"
boot=(-f "$bootstrap" --set aggregatedAPI.enabled=true)
apply_bootstrap() {
  local cm
  cm="$(k -n "$NS" get configmap -l app.kubernetes.io/instance="$RELEASE" -o name | grep -- '-bootstrap$')" &&
    k -n "$NS" get "$cm" -o jsonpath='{.data.objects\.yaml}' >"$work/bootstrap-objects.yaml" &&
    checker bootstrap "$kubeconfig" "$work/bootstrap-objects.yaml" "$RELEASE" \
      "$(k get validatingwebhookconfigurations -l app.kubernetes.io/instance="$RELEASE" -o jsonpath='{.items[0].metadata.name}')"
}
if h install "$RELEASE" "$CHART" -n "$NS" "${boot[@]}" >"$work/install.log" 2>&1; then
  in_release="$( (h get manifest "$RELEASE" -n "$NS"; h get hooks "$RELEASE" -n "$NS") | grep -c '^kind: \(ProbeRegion\|Plan\)$' || true)"
  if apply_bootstrap; then
    regions="$(k get proberegions -l uptime-operator.io/helm-bootstrap="$RELEASE" -o jsonpath='{range .items[*]}{.metadata.ownerReferences[0].kind}{"\n"}{end}' | grep -c '^ValidatingWebhookConfiguration$' || true)"
    plans="$(k get plans -l uptime-operator.io/helm-bootstrap="$RELEASE" -o jsonpath='{range .items[*]}{.metadata.ownerReferences[0].kind}{"\n"}{end}' | grep -c '^ValidatingWebhookConfiguration$' || true)"
  else
    regions=0 plans=0
  fi
  if [[ "$in_release" -eq 0 && "$regions" -eq 2 && "$plans" -eq 1 ]]; then
    ok "helm install on envtest: CRDs installed, no ProbeRegion or Plan in the release; the manager's applier made the bootstrap ConfigMap's $regions ProbeRegions and $plans Plan, owned by the release's ValidatingWebhookConfiguration"
  else
    fail "helm install on envtest: $in_release ProbeRegions/Plans in the release (want 0); the bootstrap ConfigMap made $regions owned ProbeRegions (want 2) and $plans owned Plans (want 1)"
  fi
  # Drop ap-south from the values: the new ConfigMap no longer declares it
  # and the applier deletes it; eu-west stays.
  printf 'regions:\n- name: eu-west\n  displayName: Dublin\nplans:\n- name: starter\n  regions: [eu-west]\n' >"$work/fewer-values.yaml"
  if h upgrade "$RELEASE" "$CHART" -n "$NS" "${boot[@]}" -f "$work/fewer-values.yaml" >"$work/upgrade.log" 2>&1; then
    # The certificates are the manager's (none runs here): the release
    # holds no certificate Secret.
    if ! h get manifest "$RELEASE" -n "$NS" | grep -q "name: $RELEASE-\(ca\|webhook-cert\|api-cert\)$"; then
      ok "helm upgrade on envtest: no certificate Secret in the release (the manager keeps them)"
    else
      fail "the release holds certificate Secrets; the manager makes them (--cert-rotation)"
    fi
    apply_bootstrap || true
    left="$(k get proberegions -l uptime-operator.io/helm-bootstrap="$RELEASE" -o jsonpath='{.items[*].metadata.name}')"
    if [[ "$left" == "eu-west" ]]; then
      ok "a region dropped from the values is deleted by the applier; the others stay"
    else
      fail "after dropping ap-south from the values the release's ProbeRegions are: $left (want eu-west)"
    fi
    # envtest runs no garbage collector: make e2e sees the regions go.
    if h uninstall "$RELEASE" -n "$NS" >"$work/uninstall.log" 2>&1 && k get crd monitors.monitoring.uptime-operator.io >/dev/null 2>&1; then
      ok "helm uninstall kept the CRDs (crds.keep)"
    else
      cat "$work/uninstall.log" >&2
      fail "helm uninstall removed the CRDs"
    fi
  else
    cat "$work/upgrade.log" >&2
    fail "helm upgrade on envtest"
  fi
else
  cat "$work/install.log" >&2
  fail "helm install on envtest"
fi
external_kinds=(Certificate Issuer ServiceMonitor PodMonitor PrometheusRule HTTPRoute)
for values in "$CHART"/ci/*-values.yaml; do
  name="$(basename "$values" -values.yaml)"
  [[ -f "$work/$name.yaml" ]] || continue
  checker strip "$work/$name.yaml" "${external_kinds[@]}" >"$work/$name.core.yaml"
  if k apply --dry-run=server --server-side --force-conflicts --field-manager=verify-chart -f "$work/$name.core.yaml" >"$work/$name.dry" 2>&1; then
    ok "$values: kube-apiserver $K8S_VERSION accepts every object (server-side dry-run; ${external_kinds[*]} not installed there)"
  else
    grep -v 'serverside-applied\|created\|configured\|unchanged' "$work/$name.dry" >&2 || true
    fail "$values: server-side dry-run refused objects"
  fi
done
exec 9>&-
wait "$serve_pid" || true

exit "$failed"
