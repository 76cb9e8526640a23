// Package kubectlplugin is `kubectl uptime`, the kubectl plugin for people on
// call: a workspace's summary, its incidents (list, acknowledge, resolve,
// annotate), a check run now in every region, the explanation of a
// monitor's state and the address of a status page.
//
// It talks only to kube-apiserver, with the user's kubeconfig, through the
// aggregated API api.uptime-operator.io/v1: its Kubernetes resources
// uptimeincidents, uptimemonitors (and their explanation), uptimechecks and
// uptimeregions, which Kubernetes' built-in view and edit roles reach; only
// `page` reads a REST path the aggregated API serves under
// /apis/api.uptime-operator.io/v1/namespaces/<ns>/…, which needs an access
// level. RBAC decides what the user may do, as for kubectl; no API key is
// involved.
package kubectlplugin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/uptime-operator/uptime-operator/internal/aggregated"
)

// command is a subcommand: its arguments, its summary and what it does.
type command struct {
	args, summary string
	run           func(ctx context.Context, c *client, args []string) error
}

func commands() map[string]command {
	return map[string]command{
		"status":    {"", "the workspace's summary: down monitors, open incidents, regions offline", runStatus},
		"incidents": {"[--all]", "the open incidents (all of them with --all), as kubectl get incidents prints them", runIncidents},
		"ack":       {"INCIDENT", "acknowledge an incident (stops escalation)", runAck},
		"resolve":   {"INCIDENT [--note TEXT]", "resolve an incident by hand", runResolve},
		"note":      {"INCIDENT TEXT [--public]", "add a note to an incident's timeline", runNote},
		"check":     {"MONITOR", "run a check of a monitor now in each of its regions and print the verdicts", runCheck},
		"why":       {"MONITOR", "explain a monitor's state: region votes against the quorum, failure class, fault", runWhy},
		"page":      {"NAME", "print the address of a status page", runPage},
	}
}

// Main runs `kubectl uptime` with args (without the program name).
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cmds := commands()
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr, cmds)
		if len(args) == 0 {
			return errors.New("no subcommand given")
		}
		return nil
	}
	cmd, ok := cmds[args[0]]
	if !ok {
		usage(stderr, cmds)
		return fmt.Errorf("unknown subcommand %q", args[0])
	}
	fs := flag.NewFlagSet("kubectl uptime "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "path to the kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
	fs.StringVar(&o.context, "context", "", "the kubeconfig context to use")
	fs.StringVar(&o.namespace, "namespace", "", "the workspace's namespace (default: the context's namespace)")
	fs.StringVar(&o.namespace, "n", "", "shorthand for --namespace")
	fs.StringVar(&o.as, "as", "", "user to impersonate for the operation, as kubectl --as")
	fs.Func("as-group", "group to impersonate (repeatable), as kubectl --as-group", func(g string) error {
		o.asGroups = append(o.asGroups, g)
		return nil
	})
	fs.BoolVar(&o.all, "all", false, "incidents: list resolved incidents too")
	fs.StringVar(&o.note, "note", "", "resolve: a resolution note")
	fs.BoolVar(&o.public, "public", false, "note: publish the note as a public update")
	rest, err := parseInterspersed(fs, args[1:])
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(stderr, "usage: kubectl uptime %s %s\n", args[0], cmd.args)
		return nil
	}
	if err != nil {
		return err
	}
	c, err := newClient(o, safeWriter{stdout})
	if err != nil {
		return err
	}
	return cmd.run(ctx, c, rest)
}

func usage(w io.Writer, cmds map[string]command) {
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintln(w, "usage: kubectl uptime <subcommand> [-n NAMESPACE] [--context CONTEXT] [--kubeconfig FILE] [--as USER [--as-group GROUP]]")
	fmt.Fprintln(w)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %-26s %s\n", n, cmds[n].args, cmds[n].summary)
	}
}

// parseInterspersed parses flags placed before, between or after the
// positional arguments (`kubectl uptime ack ID -n shop`), as kubectl does,
// and returns the positional ones.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// options are the flags every subcommand takes.
type options struct {
	kubeconfig, context, namespace string
	all, public                    bool
	note                           string
	// as and asGroups impersonate a user, as kubectl's --as and --as-group.
	as       string
	asGroups []string
}

// client reaches the aggregated API of one namespace as the kubeconfig's
// user.
type client struct {
	http      *http.Client
	host      string
	namespace string
	opts      options
	out       io.Writer
}

func newClient(o options, out io.Writer) (*client, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = o.kubeconfig
	overrides := &clientcmd.ConfigOverrides{CurrentContext: o.context}
	overrides.Context.Namespace = o.namespace
	overrides.AuthInfo.Impersonate, overrides.AuthInfo.ImpersonateGroups = o.as, o.asGroups
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig: %w", err)
	}
	ns, _, err := cc.Namespace()
	if err != nil {
		return nil, fmt.Errorf("namespace of the kubeconfig context: %w", err)
	}
	cfg.UserAgent = "kubectl-uptime"
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	return &client{http: hc, host: strings.TrimSuffix(cfg.Host, "/"), namespace: ns, opts: o, out: out}, nil
}

// path is the URL of a path of the namespace's aggregated API (path starts
// with a slash: /incidents, /monitors/ID/explanation).
func (c *client) path(path string) string {
	return c.host + "/apis/" + aggregated.Group + "/" + aggregated.Version + "/namespaces/" + url.PathEscape(c.namespace) + path
}

// do sends a request and decodes a 2xx JSON answer into out (unless nil).
// An error answer becomes an error carrying the server's message: a
// Kubernetes Status (from kube-apiserver or the incidents resource) or the
// REST API's {error, code}.
func (c *client) do(ctx context.Context, method, path, accept string, body, out any) error {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.path(path), rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if accept == "" {
		accept = "application/json"
	}
	req.Header.Set("Accept", accept)
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		err := answerError(resp.StatusCode, raw)
		if fe := (*forbiddenError)(nil); errors.As(err, &fe) {
			if need := neededRole(method, path); need != "" {
				return &forbiddenError{err: fmt.Errorf("%s: %w", need, fe.err)}
			}
		}
		return err
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("decode the answer of %s %s: %w", method, path, err)
	}
	return nil
}

// neededRole says which Kubernetes role a refused request of the
// aggregated resources needs (docs/kubectl.md promises every refusal says
// so): reads need the view role, incident actions and checks the edit
// role. "" for a REST path (runPage says what it needs).
func neededRole(method, path string) string {
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	res := segs[0]
	if !strings.HasPrefix(res, "uptime") {
		return ""
	}
	if method == http.MethodGet {
		return fmt.Sprintf("reading %s needs get and list on it (the view role)", res)
	}
	if res == aggregated.ChecksResource {
		return fmt.Sprintf("running a check needs create on %s (the edit role)", res)
	}
	if len(segs) == 3 {
		what := map[string]string{"acknowledge": "acknowledging", "resolve": "resolving", "notes": "adding a note to"}[segs[2]]
		if what == "" {
			what = segs[2] + " on"
		}
		return fmt.Sprintf("%s an incident needs create on %s/%s (the edit role)", what, res, segs[2])
	}
	return fmt.Sprintf("%s on %s needs the edit role", strings.ToLower(method), res)
}

// forbiddenError is a 403 answer: RBAC refused the request.
type forbiddenError struct{ err error }

func (e *forbiddenError) Error() string { return e.err.Error() }
func (e *forbiddenError) Unwrap() error { return e.err }

// answerError reads the message of an error answer.
func answerError(code int, raw []byte) error {
	err := answerMessage(code, raw)
	if code == http.StatusForbidden {
		return &forbiddenError{err: err}
	}
	return err
}

func answerMessage(code int, raw []byte) error {
	var st metav1.Status
	if json.Unmarshal(raw, &st) == nil && st.Kind == "Status" && st.Message != "" {
		return fmt.Errorf("%s (%d)", st.Message, code)
	}
	var e struct{ Error, Code string }
	if json.Unmarshal(raw, &e) == nil && e.Error != "" {
		if e.Code != "" {
			return fmt.Errorf("%s: %s (%d)", e.Code, e.Error, code)
		}
		return fmt.Errorf("%s (%d)", e.Error, code)
	}
	msg := strings.TrimSpace(string(raw))
	if msg == "" {
		msg = http.StatusText(code)
	}
	return fmt.Errorf("%s (%d)", msg, code)
}

func (c *client) printf(format string, a ...any) { fmt.Fprintf(c.out, format, a...) }
