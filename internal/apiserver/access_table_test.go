package apiserver_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// The access table of the specification, walked for every documented
// operation: each operation's x-access (public, any-key, read-only-write,
// automation, owner, session) says which callers are refused and with which
// code, and every caller the table allows must get past the access check
// (any answer but 401 or an access refusal; a fake id then answers 404 or
// a validation error).

// accessCaller is one caller of the table.
type accessCaller struct {
	name string
	// key is the API key level, empty for an aggregated Kubernetes user.
	key string
	// user is the RBAC level of an aggregated user.
	user string
}

var accessCallers = []accessCaller{
	{name: "read-only key", key: "read-only"},
	{name: "standard key", key: "standard"},
	{name: "automation key", key: "automation"},
	{name: "viewer user", user: "read-only"},
	{name: "editor user", user: "standard"},
	{name: "automation user", user: "automation"},
	{name: "owner user", user: "owner"},
}

// accessRefusals are the codes of an access refusal.
var accessRefusals = map[string]bool{"READ_ONLY_ACCESS": true, "AUTOMATION_KEY_REQUIRED": true,
	"WORKSPACE_OWNER_REQUIRED": true, "SESSION_AUTH_REQUIRED": true}

// expectedRefusal is the code (or codes, "|"-separated) that access refuses
// caller c with for method, "" when c is allowed.
func expectedRefusal(access, method string, c accessCaller) string {
	level := c.key + c.user
	write := method != http.MethodGet && method != http.MethodHead
	switch access {
	case "any-key":
		if write && level == "read-only" {
			return "READ_ONLY_ACCESS"
		}
	case "automation":
		switch level {
		case "read-only":
			return "READ_ONLY_ACCESS|AUTOMATION_KEY_REQUIRED"
		case "standard":
			return "AUTOMATION_KEY_REQUIRED"
		}
	case "owner":
		if level != "owner" {
			return "WORKSPACE_OWNER_REQUIRED"
		}
	case "session":
		return "SESSION_AUTH_REQUIRED"
	}
	return ""
}

// documentedOperations reads method, path and x-access of every operation
// of docs/openapi.json.
func documentedOperations() [][3]string {
	raw, err := os.ReadFile("../../docs/openapi.json")
	Expect(err).NotTo(HaveOccurred())
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	Expect(json.Unmarshal(raw, &doc)).To(Succeed())
	var out [][3]string
	for path, item := range doc.Paths {
		for method, rawOp := range item {
			var op struct {
				Access string `json:"x-access"`
			}
			if json.Unmarshal(rawOp, &op) != nil || op.Access == "" {
				continue // "parameters" and other non-operations
			}
			out = append(out, [3]string{strings.ToUpper(method), path, op.Access})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i][1]+out[i][0] < out[j][1]+out[j][0] })
	return out
}

var pathParamRE = regexp.MustCompile(`\{[^}]+\}`)

// concretePath fills path's parameters with values no object has.
func concretePath(path string) string {
	return pathParamRE.ReplaceAllStringFunc(path, func(p string) string {
		switch p {
		case "{rest}":
			return "history"
		case "{type}":
			return "webhook"
		case "{email}":
			return "nobody@example.com"
		case "{slug}", "{key}", "{token}", "{path}":
			return "does-not-exist"
		}
		return "00000000-0000-4000-8000-00000000beef"
	})
}

var _ = Describe("The access table", Ordered, func() {
	const ns = "access-table"
	BeforeAll(func() { newWorkspace(ns, "pro") })

	It("refuses and allows every documented operation for every caller as the specification says", func() {
		ops := documentedOperations()
		Expect(len(ops)).To(BeNumerically(">", 200))
		var wrong []string
		checked := 0
		for _, op := range ops {
			method, path, access := op[0], op[1], op[2]
			if access == "public" {
				continue
			}
			url := concretePath(path)
			for _, c := range accessCallers {
				var rec = func() (int, string) {
					var opts []reqOpt
					k := ""
					if c.key != "" {
						k = key(ns, c.key)
					} else {
						opts = append(opts, asUser(ns, c.user))
					}
					var body any
					if method != http.MethodGet && method != http.MethodDelete && method != http.MethodHead {
						body = map[string]any{}
					}
					r := do(method, url, k, body, opts...)
					var e struct {
						Code string `json:"code"`
					}
					_ = json.Unmarshal(r.Body.Bytes(), &e)
					return r.Code, e.Code
				}
				status, code := rec()
				checked++
				want := expectedRefusal(access, method, c)
				switch {
				case want != "" && (status != http.StatusForbidden || !strings.Contains("|"+want+"|", "|"+code+"|")):
					wrong = append(wrong, fmt.Sprintf("%s %s (%s) as %s: got %d %q, want 403 %s", method, path, access, c.name, status, code, want))
				case want == "" && (status == http.StatusUnauthorized || (status == http.StatusForbidden && accessRefusals[code])):
					wrong = append(wrong, fmt.Sprintf("%s %s (%s) as %s: refused with %d %q, want it allowed", method, path, access, c.name, status, code))
				}
			}
		}
		Expect(wrong).To(BeEmpty(), "%d of %d calls disagree with the access table:\n%s", len(wrong), checked, strings.Join(wrong, "\n"))
		GinkgoWriter.Printf("access table: %d calls of %d operations checked\n", checked, len(ops))
	})
})
