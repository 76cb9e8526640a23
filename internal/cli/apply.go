package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/uptime-operator/uptime-operator/internal/trust"
)

// ExitError is an error that asks for a particular process exit code.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// ExitCode is the process exit code for err: 0 for nil, an ExitError's
// code, else 1.
func ExitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	return 1
}

// exitChanges is the exit code of a dry run with --exit-code that found
// changes.
const exitChanges = 2

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// applyOptions are the flags of `apply`.
type applyOptions struct {
	files           []string
	prune           bool
	dryRun          bool
	exitCode        bool
	adoptByName     bool
	continueOnError bool
	yes             bool
	apiURL          string
	apiKey          string
	timeout         time.Duration
}

// runApply applies monitor specs through the monitoring-as-code endpoints:
// it plans, prints the diff and, unless --dry-run, applies the reviewed plan
// (its fingerprint makes a concurrent change fail with 409 PLAN_CHANGED
// instead of applying something else).
func runApply(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return applyWithEnv(ctx, args, os.Getenv, os.Stdin, stdout, stderr)
}

func applyWithEnv(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("apply", stderr)
	var o applyOptions
	var files stringList
	fs.Var(&files, "f", "file or directory of monitor specs (YAML or JSON; '-' reads standard input); repeatable")
	fs.BoolVar(&o.prune, "prune", false, "delete keyed monitors that are not in the files")
	fs.BoolVar(&o.dryRun, "dry-run", false, "print the plan and change nothing")
	fs.BoolVar(&o.exitCode, "exit-code", false, "with --dry-run, exit 2 when the plan has changes")
	fs.BoolVar(&o.adoptByName, "adopt-by-name", false, "give a key to the one un-keyed monitor with the same name and type")
	fs.BoolVar(&o.continueOnError, "continue-on-error", false, "keep applying after a monitor fails")
	fs.BoolVar(&o.yes, "yes", false, "confirm deletes and replacements (a replacement deletes the monitor's history)")
	fs.StringVar(&o.apiURL, "api-url", "", "base URL of the API (default $UPTIME_API_URL)")
	fs.StringVar(&o.apiKey, "api-key", "", "API key, sk_... (default $UPTIME_API_KEY)")
	trustedCA := fs.String("trusted-ca-file", "", "PEM bundle of private CA certificates trusted in addition to the system roots, for an API served with a private CA's certificate")
	fs.DurationVar(&o.timeout, "timeout", time.Minute, "timeout of each API request")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: uptime-operator apply -f monitors.yaml [-f more.yaml|dir] [--prune] [--dry-run [--exit-code]] [--adopt-by-name] [--continue-on-error] [--yes]")
		fs.PrintDefaults()
		fmt.Fprintln(stderr, "\nExit codes: 0 success, 1 failure, 2 --dry-run --exit-code found changes.")
	}
	if ok, err := parse(fs, args); !ok || err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q: pass files with -f", fs.Args())
	}
	if len(files) == 0 {
		return errors.New("no files: pass at least one -f FILE")
	}
	o.files = files
	if o.apiURL == "" {
		o.apiURL = strings.TrimSpace(getenv("UPTIME_API_URL"))
	}
	if o.apiKey == "" {
		o.apiKey = strings.TrimSpace(getenv("UPTIME_API_KEY"))
	}
	if err := checkAPIURL(o.apiURL); err != nil {
		return err
	}
	if o.apiKey == "" {
		return errors.New("no API key: set UPTIME_API_KEY or pass --api-key")
	}
	if err := trust.LoadFile(*trustedCA); err != nil {
		return fmt.Errorf("--trusted-ca-file: %w", err)
	}
	specs, err := readSpecs(o.files, stdin)
	if err != nil {
		return err
	}
	a := &applier{opts: o, out: stdout, specs: specs,
		api: &apiClient{base: strings.TrimRight(o.apiURL, "/"), key: o.apiKey, http: trustingClient(o.timeout)}}
	return a.run(ctx)
}

// checkAPIURL accepts https URLs, and plain http only to the loopback
// interface (the key would travel in clear text otherwise).
func checkAPIURL(raw string) error {
	if raw == "" {
		return errors.New("no API URL: set UPTIME_API_URL or pass --api-url")
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return fmt.Errorf("API URL %q is not a valid URL", raw)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		h := u.Hostname()
		if ip := net.ParseIP(h); strings.EqualFold(h, "localhost") || (ip != nil && ip.IsLoopback()) {
			return nil
		}
		return fmt.Errorf("API URL %q must use https (plain http only to localhost)", raw)
	}
	return fmt.Errorf("API URL %q must be an https URL", raw)
}

// --- reading specs ----------------------------------------------------------

// spec is one monitor spec and where it was read.
type spec struct {
	raw    json.RawMessage
	origin string
}

// readSpecs reads the specs of every file, and of the YAML, YML and JSON
// files of every directory (not recursively), in order.
func readSpecs(paths []string, stdin io.Reader) ([]spec, error) {
	var out []spec
	for _, p := range paths {
		if p == "-" {
			s, err := parseSpecs(stdin, "<stdin>")
			if err != nil {
				return nil, err
			}
			out = append(out, s...)
			continue
		}
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("read specs: %w", err)
		}
		files := []string{p}
		if st.IsDir() {
			entries, err := os.ReadDir(p)
			if err != nil {
				return nil, fmt.Errorf("read specs: %w", err)
			}
			files = files[:0]
			for _, e := range entries {
				switch strings.ToLower(filepath.Ext(e.Name())) {
				case ".yaml", ".yml", ".json":
					if !e.IsDir() {
						files = append(files, filepath.Join(p, e.Name()))
					}
				}
			}
		}
		for _, f := range files {
			fh, err := os.Open(f)
			if err != nil {
				return nil, fmt.Errorf("read specs: %w", err)
			}
			s, err := parseSpecs(fh, f)
			_ = fh.Close()
			if err != nil {
				return nil, err
			}
			out = append(out, s...)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("the files hold no monitor specs")
	}
	return out, nil
}

// parseSpecs reads one file: YAML or JSON documents, each either a list of
// specs under "monitors", a list of specs, or one spec.
func parseSpecs(r io.Reader, name string) ([]spec, error) {
	rd := utilyaml.NewYAMLReader(bufio.NewReader(r))
	var out []spec
	for doc := 1; ; doc++ {
		raw, err := rd.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		js, err := yaml.YAMLToJSON(raw)
		if err != nil {
			return nil, fmt.Errorf("%s (document %d): %w", name, doc, err)
		}
		if t := bytes.TrimSpace(js); len(t) == 0 || string(t) == "null" {
			continue
		}
		origin := func(i int) string {
			if doc == 1 {
				return fmt.Sprintf("%s, item %d", name, i+1)
			}
			return fmt.Sprintf("%s, document %d item %d", name, doc, i+1)
		}
		var list []json.RawMessage
		if err := json.Unmarshal(js, &list); err == nil {
			for i, s := range list {
				out = append(out, spec{raw: s, origin: origin(i)})
			}
			continue
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(js, &obj); err != nil {
			return nil, fmt.Errorf("%s (document %d): a document must be a monitor spec, a list of specs, or {monitors: [...]}", name, doc)
		}
		if ms, ok := obj["monitors"]; ok {
			if err := json.Unmarshal(ms, &list); err != nil {
				return nil, fmt.Errorf("%s (document %d): monitors must be a list of monitor specs", name, doc)
			}
			for i, s := range list {
				out = append(out, spec{raw: s, origin: origin(i)})
			}
			continue
		}
		o := fmt.Sprintf("%s, document %d", name, doc)
		out = append(out, spec{raw: js, origin: o})
	}
}

// --- the API ----------------------------------------------------------------

// apiClient calls the REST API with an API key.
type apiClient struct {
	base string
	key  string
	http *http.Client
}

// apiError is an error answer of the API.
type apiError struct {
	Status     int
	Message    string `json:"error"`
	Code       string `json:"code"`
	Details    any    `json:"details"`
	Errors     []struct{ Field, Message string }
	RetryAfter string
}

func (e *apiError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	if e.Code != "" {
		msg += " (" + e.Code + ")"
	}
	if e.RetryAfter != "" {
		msg += "; retry after " + e.RetryAfter + " s"
	}
	return fmt.Sprintf("%d: %s", e.Status, msg)
}

// post sends body to path and decodes a 2xx answer into out.
func (c *apiClient) post(ctx context.Context, path string, body, out any) (int, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, bytes.NewReader(raw))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "uptime-operator-apply/"+Version)
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, fmt.Errorf("call %s: %w", path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return resp.StatusCode, fmt.Errorf("read the answer of %s: %w", path, err)
	}
	if resp.StatusCode/100 != 2 {
		ae := &apiError{Status: resp.StatusCode, RetryAfter: resp.Header.Get("Retry-After")}
		if json.Unmarshal(data, ae) != nil {
			ae.Message = strings.TrimSpace(string(data))
		}
		return resp.StatusCode, ae
	}
	if err := json.Unmarshal(data, out); err != nil {
		return resp.StatusCode, fmt.Errorf("decode the answer of %s: %w", path, err)
	}
	return resp.StatusCode, nil
}

// Wire shapes of plan and apply (docs/rest-api.md, Monitoring as code).
type (
	fieldChange struct {
		Field string          `json:"field"`
		From  json.RawMessage `json:"from"`
		To    json.RawMessage `json:"to"`
	}
	planChange struct {
		Action    string        `json:"action"`
		Key       string        `json:"key"`
		MonitorID *string       `json:"monitor_id"`
		Name      string        `json:"name"`
		Type      string        `json:"type"`
		Adopted   bool          `json:"adopted"`
		Diff      []fieldChange `json:"diff"`
	}
	planSummary struct {
		Create, Update, Replace, Delete, Noop, Total int
	}
	planWarning struct {
		Key     string `json:"key"`
		Message string `json:"message"`
	}
	planResponse struct {
		Changes     []planChange  `json:"changes"`
		Summary     planSummary   `json:"summary"`
		Warnings    []planWarning `json:"warnings"`
		Fingerprint string        `json:"plan_fingerprint"`
	}
	applyResult struct {
		Key       string    `json:"key"`
		Action    string    `json:"action"`
		Status    string    `json:"status"`
		MonitorID *string   `json:"monitor_id"`
		Error     *apiError `json:"error"`
	}
	applyResponse struct {
		OK      bool `json:"ok"`
		Summary struct {
			Applied, Unchanged, Failed, Skipped int
		} `json:"summary"`
		Results     []applyResult `json:"results"`
		Fingerprint string        `json:"plan_fingerprint"`
	}
)

func (s planSummary) changes() int { return s.Create + s.Update + s.Replace + s.Delete }

// --- plan, print, apply -----------------------------------------------------

type applier struct {
	opts  applyOptions
	api   *apiClient
	out   io.Writer
	specs []spec
}

func (a *applier) body() map[string]any {
	raws := make([]json.RawMessage, len(a.specs))
	for i, s := range a.specs {
		raws[i] = s.raw
	}
	return map[string]any{"monitors": raws, "prune": a.opts.prune, "adopt_by_name": a.opts.adoptByName}
}

func (a *applier) run(ctx context.Context) error {
	var plan planResponse
	if _, err := a.api.post(ctx, "/automation/monitors/plan", a.body(), &plan); err != nil {
		return a.explain("plan", err)
	}
	printPlan(a.out, &plan)
	n := plan.Summary.changes()
	switch {
	case a.opts.dryRun && n > 0 && a.opts.exitCode:
		return &ExitError{Code: exitChanges, Err: fmt.Errorf("dry run: the plan has %d changes", n)}
	case a.opts.dryRun:
		return nil
	case n == 0:
		fmt.Fprintln(a.out, "Nothing to apply.")
		return nil
	case plan.Summary.Delete+plan.Summary.Replace > 0 && !a.opts.yes:
		return fmt.Errorf("the plan deletes %d and replaces %d monitors (a replacement deletes history); review it and re-run with --yes",
			plan.Summary.Delete, plan.Summary.Replace)
	}
	body := a.body()
	body["continue_on_error"] = a.opts.continueOnError
	body["expected_fingerprint"] = plan.Fingerprint
	var res applyResponse
	code, err := a.api.post(ctx, "/automation/monitors/apply", body, &res)
	if err != nil {
		return a.explain("apply", err)
	}
	printResults(a.out, &res)
	if code == http.StatusMultiStatus || !res.OK || res.Summary.Failed > 0 {
		return fmt.Errorf("%d of %d changes failed", res.Summary.Failed, n)
	}
	return nil
}

var specIndexRE = regexp.MustCompile(`^monitors\[(\d+)\]`)

// explain turns an API refusal into an error that names the spec files.
func (a *applier) explain(step string, err error) error {
	var ae *apiError
	if !errors.As(err, &ae) {
		return fmt.Errorf("%s: %w", step, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s refused: %s", step, ae.Error())
	if ae.Code == "PLAN_CHANGED" {
		b.WriteString("\n  the monitors changed after the plan was made; run apply again to review the new plan")
	}
	for _, fe := range ae.Errors {
		where := ""
		if m := specIndexRE.FindStringSubmatch(fe.Field); m != nil {
			if i, _ := strconv.Atoi(m[1]); i < len(a.specs) {
				where = " (" + a.specs[i].origin + ")"
			}
		}
		fmt.Fprintf(&b, "\n  %s%s: %s", fe.Field, where, fe.Message)
	}
	return errors.New(b.String())
}

// compact renders a JSON value on one line.
func compact(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "null"
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return string(raw)
	}
	return buf.String()
}

var actionMarks = map[string]string{"create": "+", "update": "~", "replace": "-/+", "delete": "-"}

// printPlan prints the changes readably: + create, ~ update with field
// changes, -/+ replace, - delete, and how many are unchanged.
func printPlan(w io.Writer, p *planResponse) {
	fmt.Fprintf(w, "Plan %s\n", p.Fingerprint)
	for _, c := range p.Changes {
		mark, ok := actionMarks[c.Action]
		if !ok {
			continue
		}
		extra := ""
		if c.Adopted {
			extra = " (adopted by name)"
		}
		if c.Action == "replace" {
			extra += " (type change: the monitor's history is deleted)"
		}
		fmt.Fprintf(w, "%-3s %s: %s %q%s\n", mark, c.Key, c.Type, c.Name, extra)
		if c.Action == "delete" {
			continue
		}
		for _, d := range c.Diff {
			if c.Action == "create" {
				if d.Field != "key" && d.Field != "name" && d.Field != "type" { // in the heading
					fmt.Fprintf(w, "      %s: %s\n", d.Field, compact(d.To))
				}
				continue
			}
			fmt.Fprintf(w, "      %s: %s -> %s\n", d.Field, compact(d.From), compact(d.To))
		}
	}
	for _, wn := range p.Warnings {
		if wn.Key != "" {
			fmt.Fprintf(w, "warning: %s: %s\n", wn.Key, wn.Message)
		} else {
			fmt.Fprintf(w, "warning: %s\n", wn.Message)
		}
	}
	s := p.Summary
	fmt.Fprintf(w, "%d to create, %d to update, %d to replace, %d to delete, %d unchanged.\n", s.Create, s.Update, s.Replace, s.Delete, s.Noop)
}

// printResults prints the outcome of an apply, failures with their errors.
func printResults(w io.Writer, r *applyResponse) {
	failed := slices.DeleteFunc(slices.Clone(r.Results), func(x applyResult) bool { return x.Status != "failed" })
	for _, f := range failed {
		msg := "failed"
		if f.Error != nil {
			msg = f.Error.Message
			if f.Error.Code != "" {
				msg += " (" + f.Error.Code + ")"
			}
			for _, fe := range f.Error.Errors {
				msg += fmt.Sprintf("; %s: %s", fe.Field, fe.Message)
			}
		}
		fmt.Fprintf(w, "failed: %s (%s): %s\n", f.Key, f.Action, msg)
	}
	s := r.Summary
	fmt.Fprintf(w, "Applied: %d applied, %d unchanged, %d failed, %d skipped.\n", s.Applied, s.Unchanged, s.Failed, s.Skipped)
}

var _ flag.Value = (*stringList)(nil)
