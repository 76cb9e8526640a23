package webhooks_test

import (
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

// create applies a manifest written as YAML in namespace ns.
func create(ns, manifest string) error {
	obj := &unstructured.Unstructured{}
	Expect(yaml.Unmarshal([]byte(manifest), &obj.Object)).To(Succeed())
	if obj.GetAPIVersion() == "" {
		obj.SetAPIVersion(monv1.GroupVersion.String())
	}
	obj.SetNamespace(ns)
	return k8s.Create(ctx, obj)
}

var nameSeq int

// monitor returns a Monitor manifest with a fresh name and the given spec.
func monitor(spec string) string {
	nameSeq++
	return fmt.Sprintf("kind: Monitor\nmetadata: {name: m%d}\nspec:\n%s", nameSeq, indent(spec))
}

func indent(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i, l := range lines {
		lines[i] = "  " + l
	}
	return strings.Join(lines, "\n")
}

func named(kind, spec string) string {
	nameSeq++
	return fmt.Sprintf("kind: %s\nmetadata: {name: o%d}\nspec:\n%s", kind, nameSeq, indent(spec))
}

var _ = Describe("Monitor admission", func() {
	DescribeTable("refuses a manifest that breaks a rule, naming the field",
		func(ns, manifest string, want ...string) {
			err := create(ns, manifest)
			Expect(err).To(HaveOccurred())
			for _, w := range want {
				Expect(err.Error()).To(ContainSubstring(w))
			}
		},
		Entry("unknown type", "team", monitor("type: no such type\nurl: https://example.com"), "spec.type", "Unsupported value"), // a name no type will ever take
		Entry("name too long", "team", monitor("name: "+strings.Repeat("n", 256)+"\nurl: https://example.com"), "spec.name", "255"),
		Entry("interval below 15", "team", monitor("url: https://example.com\nintervalSeconds: 10"), "spec.intervalSeconds", "15"),
		Entry("interval above 900", "team", monitor("url: https://example.com\nintervalSeconds: 901"), "spec.intervalSeconds", "900"),
		Entry("http without url", "team", monitor("type: http"), "url", "required for http"),
		Entry("url not http(s)", "team", monitor("url: ftp://example.com/"), "spec.url"),
		Entry("mcp over plain http", "team", monitor("type: mcp\nurl: http://example.com/mcp"), "mcp monitors need an https:// URL"),
		Entry("url with credentials", "team", monitor("url: https://user:pw@example.com/"), "spec.url", "username or password"),
		Entry("metadata address", "team", monitor("url: http://169.254.169.254/latest"), "spec.url", "This address isn't reachable from the internet"),
		Entry("private address", "team", monitor("url: http://10.1.2.3/"), "This address isn't reachable from the internet"),
		Entry("loopback name", "team", monitor("url: http://localhost:8080/"), "This address isn't reachable from the internet"),
		Entry("IPv4-mapped loopback", "team", monitor("type: ping\nping: {host: '::ffff:127.0.0.1'}"), "spec.ping.host", "This address isn't reachable"),
		Entry("21 tags", "team", monitor("url: https://example.com\ntags: [t1,t2,t3,t4,t5,t6,t7,t8,t9,t10,t11,t12,t13,t14,t15,t16,t17,t18,t19,t20,t21]"), "spec.tags", "20"),
		Entry("tag too long", "team", monitor("url: https://example.com\ntags: ["+strings.Repeat("t", 33)+"]"), "spec.tags[0]", "32"),
		Entry("51 regions", "team", monitor("url: https://example.com\nregions: ["+strings.TrimSuffix(strings.Repeat("r,", 51), ",")+"]"), "spec.regions", "50"),
		Entry("unknown region", "team", monitor("url: https://example.com\nregions: [mars-1]"), "spec.regions[0]", "mars-1"),
		Entry("region not on the plan", "free-ws", monitor("url: https://example.com\nintervalSeconds: 300\nregions: [us-2]"), "spec.regions[0]", "not available on the free plan"),
		Entry("more regions than the plan's locations", "free-ws", monitor("url: https://example.com\nintervalSeconds: 300\nregions: [eu-1, us-1, us-2]"), "spec.regions", "Too many"),
		Entry("interval below the plan minimum", "free-ws", monitor("url: https://example.com\nintervalSeconds: 60"), "spec.intervalSeconds", "plan's minimum interval of 300 seconds"),
		Entry("missing group", "team", monitor("url: https://example.com\ngroupRef: {name: nope}"), "spec.groupRef.name", "Not found"),
		Entry("missing escalation policy", "team", monitor("url: https://example.com\nescalationPolicyRef: {name: nope}"), "spec.escalationPolicyRef.name", "Not found"),
		Entry("bad key", "team", monitor("url: https://example.com\nkey: -starts-with-dash"), "spec.key"),
		Entry("key too long", "team", monitor("url: https://example.com\nkey: "+strings.Repeat("k", 129)), "spec.key", "128"),
		Entry("timeout below 1000 ms", "team", monitor("url: https://example.com\nhttp: {timeoutMs: 999}"), "spec.http.timeoutMs", "1000"),
		Entry("timeout above 60000 ms", "team", monitor("url: https://example.com\nhttp: {timeoutMs: 60001}"), "spec.http.timeoutMs", "60000"),
		Entry("bad method", "team", monitor("url: https://example.com\nhttp: {method: TRACE}"), "spec.http.method"),
		Entry("status code out of range", "team", monitor("url: https://example.com\nhttp: {expectedStatusCodes: [99]}"), "spec.http.expectedStatusCodes[0]"),
		Entry("keyword too long", "team", monitor("url: https://example.com\nhttp: {keyword: "+strings.Repeat("k", 1001)+"}"), "spec.http.keyword", "1000"),
		Entry("max redirects 6", "team", monitor("url: https://example.com\nhttp: {maxRedirects: 6}"), "spec.http.maxRedirects", "5"),
		Entry("degraded not below max", "team", monitor("url: https://example.com\nhttp: {maxResponseTimeMs: 500, degradedResponseTimeMs: 500}"), "degradedResponseTimeMs must be lower than maxResponseTimeMs"),
		Entry("max response time too high", "team", monitor("url: https://example.com\nhttp: {maxResponseTimeMs: 600001}"), "spec.http.maxResponseTimeMs"),
		Entry("max response bytes too high", "team", monitor("url: https://example.com\nhttp: {maxResponseBytes: 10485761}"), "spec.http.maxResponseBytes"),
		Entry("51 headers", "team", monitor("url: https://example.com\nhttp:\n  headers: ["+strings.TrimSuffix(strings.Repeat("{name: X, value: v},", 51), ",")+"]"), "spec.http.headers", "50"),
		Entry("header with value and valueFrom", "team", monitor("url: https://example.com\nhttp:\n  headers: [{name: X, value: v, valueFrom: {name: s, key: k}}]"), "exactly one of value and valueFrom"),
		Entry("header from a Secret name that is none", "team", monitor("url: https://example.com\nhttp:\n  headers: [{name: Authorization, valueFrom: {name: Not_A_Name, key: token}}]"), "spec.http.headers[0].valueFrom.name"),
		Entry("header from a Secret key that is none", "team", monitor("type: mcp\nurl: https://example.com/mcp\nmcp:\n  headers: [{name: Authorization, valueFrom: {name: creds, key: 'a/b'}}]"), "spec.mcp.headers[0].valueFrom.key"),
		Entry("multistep header from a bad Secret key", "team", monitor("type: multistep\nmultistep:\n  steps: [{name: login, url: 'https://example.com/', headers: [{name: Cookie, valueFrom: {name: creds, key: 'a b'}}]}]"), "spec.multistep.steps[0].headers[0].valueFrom.key"),
		Entry("assertions on an http monitor", "team", monitor("url: https://example.com\nhttp:\n  assertions: [{source: status_code, operator: equals, target: '200'}]"), "assertions are only allowed for api monitors"),
		Entry("51 assertions", "team", monitor("type: api\nurl: https://example.com\nhttp:\n  assertions: ["+strings.TrimSuffix(strings.Repeat("{source: status_code, operator: equals, target: '200'},", 51), ",")+"]"), "spec.http.assertions", "50"),
		Entry("json assertion without path", "team", monitor("type: api\nurl: https://example.com\nhttp:\n  assertions: [{source: json_body, operator: exists}]"), "property is required"),
		Entry("body contains nothing", "team", monitor("type: api\nurl: https://example.com\nhttp:\n  assertions: [{source: body, operator: contains}]"), "spec.http.assertions[0].target", "required for contains"),
		Entry("malformed json path", "team", monitor("type: api\nurl: https://example.com\nhttp:\n  assertions: [{source: json_body, property: '$.items[x]', operator: exists}]"), "spec.http.assertions[0].property", "bad index"),
		Entry("bad assertion regex", "team", monitor("type: api\nurl: https://example.com\nhttp:\n  assertions: [{source: body, operator: matches, target: '(['}]"), "spec.http.assertions[0].target", "regular expression"),
		Entry("numeric operator with text", "team", monitor("type: api\nurl: https://example.com\nhttp:\n  assertions: [{source: response_time, operator: less_than, target: fast}]"), "must be a number"),
		Entry("ping without config", "team", monitor("type: ping"), "spec.ping", "required for ping monitors"),
		Entry("grpc without config", "team", monitor("type: grpc"), "spec.grpc", "required for grpc monitors"),
		Entry("grpc target without port", "team", monitor("type: grpc\ngrpc: {target: example.com}"), "spec.grpc.target"),
		Entry("grpc private target", "team", monitor("type: grpc\ngrpc: {target: '10.1.2.3:50051'}"), "spec.grpc.target", "This address isn't reachable from the internet"),
		Entry("grpc client certificate without tls.key", "team", monitor("type: grpc\ngrpc: {target: 'example.com:443', clientCertificate: [{name: tls.crt, valueFrom: {name: c, key: tls.crt}}]}"), "clientCertificate needs tls.crt and tls.key"),
		Entry("grpc literal private key", "team", monitor("type: grpc\ngrpc: {target: 'example.com:443', clientCertificate: [{name: tls.crt, valueFrom: {name: c, key: tls.crt}}, {name: tls.key, value: k}]}"), "tls.key from a Secret"),
		Entry("grpc plaintext with a client certificate", "team", monitor("type: grpc\ngrpc: {target: 'example.com:443', plaintext: true, clientCertificate: [{name: tls.crt, valueFrom: {name: c, key: tls.crt}}, {name: tls.key, valueFrom: {name: c, key: tls.key}}]}"), "need TLS"),
		Entry("grpc with a url", "team", monitor("type: grpc\nurl: https://example.com\ngrpc: {target: 'example.com:443'}"), "spec.url", "not used by grpc"),
		Entry("websocket url not ws", "team", monitor("type: websocket\nwebsocket: {url: 'https://example.com/'}"), "spec.websocket.url"),
		Entry("websocket private url", "team", monitor("type: websocket\nwebsocket: {url: 'ws://127.0.0.1:8080/ws'}"), "spec.websocket.url", "This address isn't reachable from the internet"),
		Entry("websocket reply without message", "team", monitor("type: websocket\nwebsocket: {url: 'wss://example.com/ws', expectedReply: pong}"), "set message"),
		Entry("ping timeout 31 s", "team", monitor("type: ping\nping: {host: example.com, timeoutSeconds: 31}"), "spec.ping.timeoutSeconds"),
		Entry("port out of range", "team", monitor("type: port\nport: {host: example.com, port: 70000}"), "spec.port.port"),
		Entry("port with an http config", "team", monitor("type: port\nport: {host: example.com, port: 22}\nhttp: {method: GET}"), "http settings are not allowed for port monitors"),
		Entry("bad host", "team", monitor("type: port\nport: {host: 'exa mple.com', port: 22}"), "spec.port.host", "hostname or IP"),
		Entry("udp bad regex", "team", monitor("type: udp\nudp: {host: example.com, port: 53, expectedResponse: '(['}"), "spec.udp.expectedResponse"),
		Entry("cron without expression", "team", monitor("type: cron\ncron: {graceSeconds: 10}"), "spec.cron.cronExpression"),
		Entry("cron with a bad expression", "team", monitor("type: cron\ncron: {cronExpression: '61 * * * *'}"), "spec.cron.cronExpression", "valid cron expression"),
		Entry("cron that never fires", "team", monitor("type: cron\ncron: {cronExpression: '0 0 30 2 *'}"), "spec.cron.cronExpression", "never fires"),
		// robfig/cron v3.0.1 panics on these three (issue 28 row 7): a
		// validation error, never "panic … [recovered]".
		Entry("cron expression TZ=Europe/Berlin", "team", monitor("type: cron\ncron: {cronExpression: 'TZ=Europe/Berlin'}"), "spec.cron.cronExpression", "spec.cron.timeZone"),
		Entry("cron expression CRON_TZ=UTC", "team", monitor("type: cron\ncron: {cronExpression: 'CRON_TZ=UTC'}"), "spec.cron.cronExpression", "spec.cron.timeZone"),
		Entry("cron expression TZ=", "team", monitor("type: cron\ncron: {cronExpression: 'TZ='}"), "spec.cron.cronExpression", "spec.cron.timeZone"),
		Entry("cron grace too long", "team", monitor("type: cron\ncron: {cronExpression: '@hourly', graceSeconds: 604801}"), "spec.cron.graceSeconds"),
		Entry("cron bad time zone", "team", monitor("type: cron\ncron: {cronExpression: '@daily', timeZone: Mars/Olympus}"), "spec.cron.timeZone", "IANA"),
		Entry("dns bad record type", "team", monitor("type: dns\ndns: {name: example.com, recordType: PTRX}"), "spec.dns.recordType"),
		Entry("dns exact without values", "team", monitor("type: dns\ndns: {name: example.com, matchMode: exact}"), "spec.dns.expectedValues", "required for match mode exact"),
		Entry("multistep without steps", "team", monitor("type: multistep\nmultistep: {steps: []}"), "spec.multistep.steps"),
		Entry("multistep unknown variable in a header", "team", monitor("type: multistep\nmultistep:\n  steps: [{name: a, url: 'https://example.com/', headers: [{name: Authorization, value: 'Bearer {{token}}'}]}]"), "variable \"token\" is not extracted"),
		Entry("multistep malformed extraction path", "team", monitor("type: multistep\nmultistep:\n  steps: [{name: a, url: 'https://example.com/', extract: [{variable: t, source: json_body, property: '$.a['}]}]"), "spec.multistep.steps[0].extract[0].property", "unclosed bracket"),
		Entry("multistep unknown variable", "team", monitor("type: multistep\nmultistep:\n  steps: [{name: a, url: 'https://example.com/{{token}}'}]"), "variable \"token\" is not extracted"),
		Entry("mcp bad arguments", "team", monitor("type: mcp\nurl: https://example.com/mcp\nmcp: {toolCall: {name: t, argumentsJSON: '[1]'}}"), "spec.mcp.toolCall.argumentsJSON", "JSON object"),
		Entry("bad notification email", "team", monitor("url: https://example.com\nnotificationEmails: [not-an-email]"), "spec.notificationEmails[0]", "email"),
		Entry("a name with control characters", "team", monitor("name: \"evil\\e]0;pwned\\a\"\nurl: https://example.com"), "spec.name", "must not contain control characters"),
		Entry("an inline Authorization header", "team", monitor("url: https://example.com\nhttp:\n  headers: [{name: Authorization, value: 'Bearer prod-billing-token'}]"),
			"spec.http.headers[0].value", "header Authorization carries a credential", "valueFrom"),
		Entry("an inline X-Api-Key of an mcp monitor", "team", monitor("type: mcp\nurl: https://example.com/mcp\nmcp:\n  headers: [{name: X-Api-Key, value: k-123}]"),
			"spec.mcp.headers[0].value", "view role", "valueFrom"),
		Entry("an inline Cookie of a multistep step", "team", monitor("type: multistep\nmultistep:\n  steps: [{name: a, url: 'https://example.com/', headers: [{name: Cookie, value: 'sid=s3cr3t'}]}]"),
			"spec.multistep.steps[0].headers[0].value", "valueFrom"),
		Entry("a literal secret of a multistep step", "team", monitor("type: multistep\nmultistep:\n  steps: [{name: login, method: POST, url: 'https://example.com/login', body: '{\"password\":\"{{pw}}\"}', secrets: [{name: pw, value: hunter2}]}]"),
			"spec.multistep.steps[0].secrets[0].value", "secret pw is a credential", "valueFrom"),
		Entry("a password written into a step's body", "team", monitor("type: multistep\nmultistep:\n  steps: [{name: login, method: POST, url: 'https://example.com/login', body: '{\"user\":\"ops\",\"password\":\"hunter2\"}'}]"),
			"spec.multistep.steps[0].body", "field password holds a credential", "secrets"),
		Entry("a password in a step's form body", "team", monitor("type: multistep\nmultistep:\n  steps: [{name: login, method: POST, url: 'https://example.com/login', body: 'user=ops&password=hunter2'}]"),
			"spec.multistep.steps[0].body", "field password holds a credential"),
		Entry("a secret in a step's url", "team", monitor("type: multistep\nmultistep:\n  steps: [{name: a, url: 'https://example.com/?k={{pw}}', secrets: [{name: pw, valueFrom: {name: s, key: k}}]}]"),
			"spec.multistep.steps[0].url", "not in its url"),
		Entry("a secret with a name no {{variable}} can have", "team", monitor("type: multistep\nmultistep:\n  steps: [{name: a, url: 'https://example.com/', secrets: [{name: x-pw, valueFrom: {name: s, key: k}}]}]"),
			"spec.multistep.steps[0].secrets[0].name", "variable name"),
	)

	It("defaults name, interval, method and packet count, and normalises tags", func() {
		m := &monv1.Monitor{
			ObjectMeta: metav1.ObjectMeta{Name: "defaults", Namespace: "team"},
			Spec: monv1.MonitorSpec{
				URL:  "https://example.com/",
				Tags: []string{"Prod", " web", "prod", "WEB"},
			},
		}
		Expect(k8s.Create(ctx, m)).To(Succeed())
		Expect(m.Spec.Name).To(Equal("defaults"))
		Expect(m.Spec.Type).To(Equal(monv1.MonitorHTTP))
		Expect(m.Spec.IntervalSeconds).To(Equal(int32(120)))
		Expect(m.Spec.Tags).To(Equal([]string{"prod", "web"}))
		Expect(m.Spec.HTTP.Method).To(Equal(monv1.HTTPMethod("GET")))
		// The object the create returns is the one admission stored: the
		// history finalizer is there before the controller has run.
		Expect(m.Finalizers).To(ConsistOf(monv1.HistoryFinalizer))

		p := &monv1.Monitor{
			ObjectMeta: metav1.ObjectMeta{Name: "ping-clamped", Namespace: "team"},
			Spec:       monv1.MonitorSpec{Type: monv1.MonitorPing, Ping: &monv1.PingConfig{Host: "example.com", PacketCount: 50}},
		}
		Expect(k8s.Create(ctx, p)).To(Succeed())
		Expect(p.Spec.Ping.PacketCount).To(Equal(int32(10)))
	})

	It("defaults the interval to the plan minimum when it is higher", func() {
		m := &monv1.Monitor{
			ObjectMeta: metav1.ObjectMeta{Name: "free-default", Namespace: "free-ws"},
			Spec:       monv1.MonitorSpec{URL: "https://example.com/"},
		}
		Expect(k8s.Create(ctx, m)).To(Succeed())
		Expect(m.Spec.IntervalSeconds).To(Equal(int32(300)))
	})

	It("refuses a type change", func() {
		m := &monv1.Monitor{
			ObjectMeta: metav1.ObjectMeta{Name: "fixed-type", Namespace: "team"},
			Spec:       monv1.MonitorSpec{URL: "https://example.com/"},
		}
		Expect(k8s.Create(ctx, m)).To(Succeed())
		Eventually(func(g Gomega) {
			var fresh monv1.Monitor
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(m), &fresh)).To(Succeed())
			fresh.Spec.Type = monv1.MonitorAPI
			err := k8s.Update(ctx, &fresh)
			g.Expect(err).To(HaveOccurred())
			g.Expect(err.Error()).To(ContainSubstring("type cannot change after creation"))
		}).Should(Succeed())
	})

	It("refuses a duplicate key in the namespace but not in another", func() {
		Expect(create("team", monitor("url: https://example.com\nkey: shop/api"))).To(Succeed())
		err := create("team", monitor("url: https://example.com\nkey: shop/api"))
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("spec.key: Duplicate value"))
		Expect(create("limits", monitor("url: https://example.com\nkey: shop/api"))).To(Succeed())
	})

	It("finds keyed monitors by the spec.key field selector, which admission relies on", func() {
		// Admission reads only the Monitors carrying a key. Without the
		// CRD's selectable field kube-apiserver refuses the selector.
		Expect(create("team", monitor("url: https://example.com\nkey: shop/selected"))).To(Succeed())
		Expect(create("team", monitor("url: https://example.com\nkey: shop/other"))).To(Succeed())
		var list monv1.MonitorList
		Expect(k8s.List(ctx, &list, client.InNamespace("team"),
			client.MatchingFields{monv1.MonitorKeyField: "shop/selected"})).To(Succeed())
		Expect(list.Items).To(HaveLen(1))
		Expect(list.Items[0].Spec.Key).To(Equal("shop/selected"))
	})

	It("lets a key be reused while the Monitor that had it is being deleted", func() {
		// A replace through /automation/monitors deletes the old Monitor and
		// creates the new one at once; the old one lingers while its
		// history finalizer runs, and must not block the key.
		old := &monv1.Monitor{
			// A finalizer of the test's own keeps it while the Monitor
			// controller removes the history finalizer.
			ObjectMeta: metav1.ObjectMeta{Name: "replaced", Namespace: "team", Finalizers: []string{"test.uptime-operator.io/hold"}},
			Spec:       monv1.MonitorSpec{URL: "https://example.com/", Key: "shop/replaced"},
		}
		Expect(k8s.Create(ctx, old)).To(Succeed())
		Expect(k8s.Delete(ctx, old)).To(Succeed())
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(old), old)).To(Succeed())
		Expect(old.DeletionTimestamp).NotTo(BeNil())
		DeferCleanup(func() {
			// A merge patch carries no resourceVersion: the controller
			// removing its own finalizer meanwhile cannot make it conflict.
			release := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))
			Expect(client.IgnoreNotFound(k8s.Patch(ctx, old, release))).To(Succeed())
		})
		Expect(create("team", monitor("url: https://example.com\nkey: shop/replaced"))).To(Succeed())
	})

	It("enforces the plan's monitor count", func() {
		Expect(create("free-ws", monitor("url: https://example.com\nintervalSeconds: 300"))).To(Succeed())
		// free-default above is the first; this is the third.
		err := create("free-ws", monitor("url: https://example.com\nintervalSeconds: 300"))
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("plan limit reached: 2 of 2 monitors (ENTITLEMENT_LIMIT_REACHED)"))
	})

	It("lets a metadata-only update through when the spec would no longer pass, and checks a spec change", func() {
		region := &monv1.ProbeRegion{ObjectMeta: metav1.ObjectMeta{Name: "gone-1"}}
		Expect(k8s.Create(ctx, region)).To(Succeed())
		m := &monv1.Monitor{
			ObjectMeta: metav1.ObjectMeta{Name: "orphaned-region", Namespace: "team"},
			Spec:       monv1.MonitorSpec{URL: "https://example.com/", Regions: []string{"gone-1"}},
		}
		Expect(k8s.Create(ctx, m)).To(Succeed())
		Expect(k8s.Delete(ctx, region)).To(Succeed())
		Eventually(func(g Gomega) {
			var fresh monv1.Monitor
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(m), &fresh)).To(Succeed())
			fresh.Spec.IntervalSeconds++
			err := k8s.Update(ctx, &fresh)
			g.Expect(err).To(HaveOccurred())
			g.Expect(err.Error()).To(ContainSubstring("spec.regions[0]: Unsupported value"))
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			var fresh monv1.Monitor
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(m), &fresh)).To(Succeed())
			fresh.Labels = map[string]string{"team": "web"}
			fresh.Finalizers = append(fresh.Finalizers, "example.com/hold")
			g.Expect(k8s.Update(ctx, &fresh)).To(Succeed())
			fresh.Finalizers = nil
			g.Expect(k8s.Update(ctx, &fresh)).To(Succeed())
		}).Should(Succeed())
	})

	It("accepts the extension types grpc and websocket with every field set", func() {
		Expect(create("team", monitor(`type: grpc
grpc:
  target: "orders.example.com:443"
  service: shop.v1.Orders
  serverName: orders.internal
  clientCertificate:
    - {name: tls.crt, valueFrom: {name: orders-mtls, key: tls.crt}}
    - {name: tls.key, valueFrom: {name: orders-mtls, key: tls.key}}
  metadata: [{name: authorization, valueFrom: {name: orders-token, key: header}}]
  timeoutMs: 5000
  maxResponseTimeMs: 2000
  degradedResponseTimeMs: 500`))).To(Succeed())
		Expect(create("team", monitor(`type: websocket
websocket:
  url: "wss://stream.example.com/quotes"
  headers: [{name: Authorization, valueFrom: {name: quotes-token, key: header}}]
  subprotocols: [quotes.v1]
  message: '{"op":"ping"}'
  expectedReply: pong
  assertions: [{source: json_body, property: $.op, operator: equals, target: pong}]
  maxRedirects: 2
  timeoutMs: 5000`))).To(Succeed())
	})

	It("accepts a login step whose password comes from its secrets", func() {
		Expect(create("team", monitor(`type: multistep
multistep:
  steps:
  - name: login
    method: POST
    url: "https://example.com/login"
    headers: [{name: X-Pin, value: "{{pin}}"}]
    body: '{"user":"ops","password":"{{pw}}","remember":true}'
    secrets: [{name: pw, valueFrom: {name: login, key: password}}, {name: pin, valueFrom: {name: login, key: pin}}]
    extract: [{variable: session, source: json_body, property: $.session}]
  - name: profile
    url: "https://example.com/me"
    headers: [{name: Authorization, value: "Bearer {{session}}"}]`))).To(Succeed())
	})

	It("accepts references that exist", func() {
		Expect(create("team", "kind: MonitorGroup\nmetadata: {name: web}\nspec: {name: Web}")).To(Succeed())
		Expect(create("team", "kind: AlertChannel\nmetadata: {name: hook}\nspec: {type: webhook, webhookURLFrom: {name: s, key: url}}")).To(Succeed())
		Expect(create("team", "kind: EscalationPolicy\nmetadata: {name: oncall}\nspec: {steps: [{delayMinutes: 0, channels: [{name: hook}]}]}")).To(Succeed())
		Expect(create("team", monitor("url: https://example.com\ngroupRef: {name: web}\nescalationPolicyRef: {name: oncall}\nregions: [eu-1, us-2]"))).To(Succeed())
	})
})

var _ = Describe("StatusPage admission", func() {
	DescribeTable("refuses",
		func(ns, manifest string, want ...string) {
			err := create(ns, manifest)
			Expect(err).To(HaveOccurred())
			for _, w := range want {
				Expect(err.Error()).To(ContainSubstring(w))
			}
		},
		Entry("a plan without status pages", "free-ws", named("StatusPage", "title: T"), "FEATURE_NOT_AVAILABLE"),
		Entry("an empty title", "team", named("StatusPage", "title: ''"), "spec.title"),
		Entry("a short slug", "team", named("StatusPage", "title: T\nslug: ab"), "spec.slug"),
		Entry("an upper-case slug", "team", named("StatusPage", "title: T\nslug: Shop"), "spec.slug"),
		Entry("a long description", "team", named("StatusPage", "title: T\ndescription: "+strings.Repeat("d", 1001)), "spec.description"),
		Entry("an http logo", "team", named("StatusPage", "title: T\nlogoURL: http://example.com/logo.png"), "spec.logoURL"),
		Entry("a bad accent colour", "team", named("StatusPage", "title: T\naccentColor: blue"), "spec.accentColor"),
		Entry("hidePoweredBy without white-label", "team", named("StatusPage", "title: T\nhidePoweredBy: true"), "WHITE_LABEL_NOT_ENTITLED"),
		Entry("a favicon without white-label", "team", named("StatusPage", "title: T\nfaviconURL: https://example.com/f.ico"), "WHITE_LABEL_NOT_ENTITLED"),
		Entry("a long section", "team", named("StatusPage", "title: T\nmonitors: [{monitorRef: {name: x}, section: "+strings.Repeat("s", 101)+"}]"), "section"),
		Entry("a duplicate monitor", "team", named("StatusPage", "title: T\nmonitors: [{monitorRef: {name: x}}, {monitorRef: {name: x}}]"), "Duplicate value"),
		Entry("password access without a secret", "team", named("StatusPage", "title: T\naccess: {mode: password}"), "passwordSecretRef"),
		Entry("sso access on an install without an OpenID provider, naming the setting", "team",
			named("StatusPage", "title: T\naccess: {mode: sso, sso: {allowedGroups: [sre]}}"), "spec.access.mode", "--oidc-issuer-url", "oidc.issuerURL"),
		Entry("sso access that allows nobody", "team", named("StatusPage", "title: T\naccess: {mode: sso, sso: {}}"), "allowedEmailDomains, allowedEmails or allowedGroups"),
	)

	It("defaults the slug and keeps slugs unique across the cluster and within the plan's page count", func() {
		Expect(create("team", "kind: StatusPage\nmetadata: {name: shop}\nspec: {title: Shop}")).To(Succeed())
		err := create("limits", "kind: StatusPage\nmetadata: {name: other}\nspec: {title: Other, slug: shop}")
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("spec.slug: Duplicate value"))
		Expect(create("team", "kind: StatusPage\nmetadata: {name: second}\nspec: {title: Second}")).To(Succeed())
		err = create("team", "kind: StatusPage\nmetadata: {name: third}\nspec: {title: Third}")
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("2 of 2 status pages (ENTITLEMENT_LIMIT_REACHED)"))
		var page monv1.StatusPage
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: "team", Name: "shop"}, &page)).To(Succeed())
		Expect(page.Spec.Slug).To(Equal("shop"))
		Expect(page.Spec.Access.Mode).To(Equal(monv1.AccessPublic))
	})
})

var _ = Describe("AlertChannel admission", func() {
	DescribeTable("refuses",
		func(ns, manifest string, want ...string) {
			err := create(ns, manifest)
			Expect(err).To(HaveOccurred())
			for _, w := range want {
				Expect(err.Error()).To(ContainSubstring(w))
			}
		},
		Entry("plain http", "team", named("AlertChannel", "type: webhook\nwebhookURL: http://hooks.example.com/x"), "must start with https://"),
		Entry("credentials", "team", named("AlertChannel", "type: webhook\nwebhookURL: https://u:p@hooks.example.com/x"), "username or password"),
		Entry("a private address", "team", named("AlertChannel", "type: webhook\nwebhookURL: https://192.168.1.10/hook"), "This address isn't reachable from the internet"),
		Entry("an unresolvable host", "team", named("AlertChannel", "type: webhook\nwebhookURL: https://no-such-host.invalid/hook"), "could not be resolved"),
		Entry("a missing URL", "team", named("AlertChannel", "type: slack"), "spec.webhookURL", "required for slack"),
		Entry("a long name", "team", named("AlertChannel", "type: telegram\nchatID: '1'\nname: "+strings.Repeat("n", 61)), "spec.name"),
		Entry("pagerduty without key", "team", named("AlertChannel", "type: pagerduty"), "spec.integrationKeyFrom"),
		Entry("opsgenie with a bad region", "team", named("AlertChannel", "type: opsgenie\napiKeyFrom: {name: s, key: k}\nregion: asia"), "spec.region"),
		Entry("a bad phone number", "team", named("AlertChannel", "type: sms\nto: '12345'"), "spec.to"),
		Entry("sms without the feature", "free-ws", named("AlertChannel", "type: sms\nto: '+4915112345678'"), "FEATURE_NOT_AVAILABLE"),
		Entry("webhooks without the feature", "free-ws", named("AlertChannel", "type: webhook\nwebhookURLFrom: {name: s, key: u}"), "FEATURE_NOT_AVAILABLE"),
		Entry("a bad repository", "team", named("AlertChannel", "type: github\nrepository: nope\ntokenFrom: {name: s, key: t}"), "spec.repository"),
		Entry("group scope without groups", "team", named("AlertChannel", "type: email\nemails: [a@example.com]\nrouting: {scope: groups}"), "spec.routing.groups"),
		Entry("a bad severity", "team", named("AlertChannel", "type: email\nemails: [a@example.com]\nrouting: {minSeverity: critical}"), "spec.routing.minSeverity"),
		Entry("an inline Slack hook URL", "team", named("AlertChannel", "type: slack\nwebhookURL: https://hooks.slack.com/services/T0/B0/abc"),
			"spec.webhookURL", "the slack URL is a credential", "webhookURLFrom"),
		Entry("an inline webhook URL with a token", "team", named("AlertChannel", "type: webhook\nwebhookURL: https://hooks.slack.com/x?token=abc"),
			"spec.webhookURL", "webhookURLFrom"),
	)

	It("refuses a Secret reference to a Secret that is neither the channel's own nor opted in", func() {
		Expect(k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "app-db"},
			StringData: map[string]string{"password": "hunter2"}})).To(Succeed())
		Expect(k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "ops-signing",
			Labels: map[string]string{monv1.CredentialsLabel: monv1.CredentialsLabelValue}},
			StringData: map[string]string{"key": "whsec_x"}})).To(Succeed())
		err := create("team", "kind: AlertChannel\nmetadata: {name: oracle}\nspec: {type: webhook, webhookURL: 'https://93.184.216.34/o', signingSecretRef: {name: app-db, key: password}}")
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(And(ContainSubstring("spec.signingSecretRef.name"), ContainSubstring("may not be used by this channel"),
			ContainSubstring(monv1.CredentialsLabel)))
		err = create("team", "kind: AlertChannel\nmetadata: {name: pd-oracle}\nspec: {type: pagerduty, integrationKeyFrom: {name: app-db, key: password}}")
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("spec.integrationKeyFrom.name"))
		Expect(create("team", "kind: AlertChannel\nmetadata: {name: opted}\nspec: {type: webhook, webhookURL: 'https://93.184.216.34/o', signingSecretRef: {name: ops-signing, key: key}}")).To(Succeed())
	})

	It("accepts a webhook URL without a credential inline, and a chat URL from a Secret", func() {
		Expect(create("team", "kind: AlertChannel\nmetadata: {name: plain-hook}\nspec: {type: webhook, webhookURL: 'https://93.184.216.34/x?team=ops'}")).To(Succeed())
		Expect(create("team", "kind: AlertChannel\nmetadata: {name: slack-ref}\nspec: {type: slack, webhookURLFrom: {name: slack-hook, key: url}}")).To(Succeed())
	})

	It("allows 10 connections of a type and refuses the eleventh", func() {
		for i := range 10 {
			Expect(create("limits", fmt.Sprintf("kind: AlertChannel\nmetadata: {name: tg%d}\nspec: {type: telegram, chatID: '%d'}", i, i))).To(Succeed())
		}
		err := create("limits", "kind: AlertChannel\nmetadata: {name: tg10}\nspec: {type: telegram, chatID: '10'}")
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("CONNECTION_LIMIT_REACHED"))
		Expect(create("limits", "kind: AlertChannel\nmetadata: {name: mail}\nspec: {type: email, emails: [ops@example.com]}")).To(Succeed())
	})
})

var _ = Describe("SLO admission", func() {
	BeforeEach(func() {
		_ = create("team", "kind: Monitor\nmetadata: {name: slo-target}\nspec: {url: 'https://example.com'}")
	})

	DescribeTable("refuses",
		func(ns, manifest string, want ...string) {
			err := create(ns, manifest)
			Expect(err).To(HaveOccurred())
			for _, w := range want {
				Expect(err.Error()).To(ContainSubstring(w))
			}
		},
		Entry("a target below 90", "team", named("SLO", "monitorRef: {name: slo-target}\ntargetPercentage: 89.9"), "spec.targetPercentage"),
		Entry("a target above 99.999", "team", named("SLO", "monitorRef: {name: slo-target}\ntargetPercentage: 99.9999"), "spec.targetPercentage"),
		Entry("a short window", "team", named("SLO", "monitorRef: {name: slo-target}\ntargetPercentage: 99\nwindowMinutes: 59"), "spec.windowMinutes"),
		Entry("a long window", "team", named("SLO", "monitorRef: {name: slo-target}\ntargetPercentage: 99\nwindowMinutes: 43201"), "spec.windowMinutes"),
		Entry("a tiny burn threshold", "team", named("SLO", "monitorRef: {name: slo-target}\ntargetPercentage: 99\nburnRateFastThreshold: 0.05"), "spec.burnRateFastThreshold"),
		Entry("a huge burn threshold", "team", named("SLO", "monitorRef: {name: slo-target}\ntargetPercentage: 99\nburnRateSlowThreshold: 101"), "spec.burnRateSlowThreshold"),
		Entry("a bad SLI type", "team", named("SLO", "monitorRef: {name: slo-target}\ntargetPercentage: 99\nsliType: errors"), "spec.sliType"),
		Entry("a missing monitor", "team", named("SLO", "monitorRef: {name: ghost}\ntargetPercentage: 99"), "spec.monitorRef.name"),
		Entry("a plan without SLOs", "free-ws", named("SLO", "monitorRef: {name: free-default}\ntargetPercentage: 99"), "FEATURE_NOT_AVAILABLE"),
	)

	It("defaults an SLO and allows one per monitor", func() {
		slo := &monv1.SLO{ObjectMeta: metav1.ObjectMeta{Name: "first", Namespace: "team"},
			Spec: monv1.SLOSpec{MonitorRef: monv1.LocalObjectReference{Name: "slo-target"}, TargetPercentage: 99.95}}
		Expect(k8s.Create(ctx, slo)).To(Succeed())
		Expect(slo.Spec.SLIType).To(Equal(monv1.SLIAvailability))
		Expect(slo.Spec.WindowMinutes).To(Equal(int32(43200)))
		Expect(slo.Spec.BurnRateFastThreshold).To(Equal(14.4))
		Expect(*slo.Spec.Enabled).To(BeTrue())
		err := create("team", named("SLO", "monitorRef: {name: slo-target}\ntargetPercentage: 99"))
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("already has SLO first"))
	})
})

var _ = Describe("Other kinds", func() {
	DescribeTable("refuse",
		func(ns, manifest string, want ...string) {
			err := create(ns, manifest)
			Expect(err).To(HaveOccurred())
			for _, w := range want {
				Expect(err.Error()).To(ContainSubstring(w))
			}
		},
		Entry("a group with a long name", "team", named("MonitorGroup", "name: "+strings.Repeat("g", 256)), "spec.name"),
		Entry("a group with 21 emails", "team", named("MonitorGroup", "notificationEmails: ["+strings.TrimSuffix(strings.Repeat("a@example.com,", 21), ",")+"]"), "spec.notificationEmails"),
		Entry("a window ending before it starts", "team", named("MaintenanceWindow", "title: W\nstartsAt: '2030-01-01T10:00:00Z'\nendsAt: '2030-01-01T09:00:00Z'\nscope: all"), "endsAt must be after startsAt"),
		Entry("a window for missing monitors", "team", named("MaintenanceWindow", "title: W\nstartsAt: '2030-01-01T10:00:00Z'\nendsAt: '2030-01-01T11:00:00Z'\nscope: monitors\nmonitors: [{name: ghost}]"), "spec.monitors[0].name"),
		Entry("a window with a bad zone", "team", named("MaintenanceWindow", "title: W\nstartsAt: '2030-01-01T10:00:00Z'\nendsAt: '2030-01-01T11:00:00Z'\nscope: all\ntimeZone: Nowhere/Land"), "spec.timeZone"),
		Entry("a window scoped to groups without groups", "team", named("MaintenanceWindow", "title: W\nstartsAt: '2030-01-01T10:00:00Z'\nendsAt: '2030-01-01T11:00:00Z'\nscope: groups"), "groups is required when scope is groups"),
		Entry("a policy step without targets", "team", named("EscalationPolicy", "steps: [{delayMinutes: 5}]"), "a step needs channels, emails or onCall"),
		Entry("a policy with decreasing delays", "team", named("EscalationPolicy", "steps: [{delayMinutes: 10, emails: [a@example.com]}, {delayMinutes: 5, emails: [a@example.com]}]"), "spec.steps[1].delayMinutes"),
		Entry("a policy with 11 steps", "team", named("EscalationPolicy", "steps: ["+strings.TrimSuffix(strings.Repeat("{delayMinutes: 1, emails: [a@example.com]},", 11), ",")+"]"), "spec.steps"),
		Entry("a duplicate region code", "", "kind: ProbeRegion\nmetadata: {name: eu-one}\nspec: {code: eu-1}", "spec.code: Duplicate value"),
		Entry("a bad region country", "", "kind: ProbeRegion\nmetadata: {name: xx}\nspec: {country: germany}", "spec.country"),
		Entry("a plan with a 10 s floor", "", "kind: Plan\nmetadata: {name: fast}\nspec: {limits: {minIntervalSeconds: 10}}", "spec.limits.minIntervalSeconds"),
		Entry("a plan defaulting to a region it does not allow", "", "kind: Plan\nmetadata: {name: odd}\nspec: {regions: [eu-1], defaultRegions: [us-1]}", "spec.defaultRegions[0]"),
	)

	It("defaults a region's code and placement and refuses a code change", func() {
		r := &monv1.ProbeRegion{ObjectMeta: metav1.ObjectMeta{Name: "ap-1"}}
		Expect(k8s.Create(ctx, r)).To(Succeed())
		Expect(r.Spec.Code).To(Equal("ap-1"))
		Expect(r.Spec.Placement.Mode).To(Equal(monv1.PlacementManaged))
		// The ProbeRegion controller writes status meanwhile: retry on
		// conflicts until the webhook itself answers.
		Eventually(func(g Gomega) {
			var fresh monv1.ProbeRegion
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(r), &fresh)).To(Succeed())
			fresh.Spec.Code = "ap-2"
			err := k8s.Update(ctx, &fresh)
			g.Expect(err).To(HaveOccurred())
			g.Expect(err.Error()).To(ContainSubstring("code cannot change"))
		}).Should(Succeed())
	})
})
