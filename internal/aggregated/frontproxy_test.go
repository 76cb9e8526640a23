package aggregated_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/uptime-operator/uptime-operator/internal/aggregated"
	"github.com/uptime-operator/uptime-operator/internal/certs"
	"github.com/uptime-operator/uptime-operator/internal/localcp"
	"github.com/uptime-operator/uptime-operator/internal/manager"
)

// door is an aggregated.Server on a real kube-apiserver (envtest): its
// requestheader ConfigMap is a test-owned copy (kube-apiserver rewrites its
// own), and every SubjectAccessReview it sends is recorded.
type door struct {
	t      *testing.T
	k8s    client.Client
	cm     *corev1.ConfigMap
	url    string
	server *x509.CertPool

	// proxy is a front-proxy certificate the ConfigMap's CA signed, with an
	// allowed name; rogue is signed by another CA; stranger by the right CA
	// with a name that is not allowed.
	proxyCA, rogueCA       *certs.CA
	proxy, rogue, stranger tls.Certificate
	mu                     sync.Mutex
	reviews                []authzv1.SubjectAccessReviewSpec
}

func startDoor(t *testing.T) *door {
	t.Helper()
	// The package's kube-apiserver: the door is the aggregated server
	// under test; whichever manager runs there is not asked.
	if shared == nil {
		t.Skip("no control plane: KUBEBUILDER_ASSETS is not set (make test sets it) or -short")
	}
	env := shared
	cfg := env.Config
	var err error
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)

	d := &door{t: t}
	d.k8s, err = client.New(cfg, client.Options{Scheme: manager.Scheme()})
	must(t, err)
	applyFile(t, ctx, d.k8s, "../../config/rbac/access_roles.yaml")
	bind(t, ctx, d.k8s, "default", "viewer-alice", "alice", "uptime-operator-viewer")

	d.proxyCA, err = certs.NewCA("test-front-proxy-ca")
	must(t, err)
	d.rogueCA, err = certs.NewCA("rogue-ca")
	must(t, err)
	d.proxy = issue(t, d.proxyCA, localcp.FrontProxyClientName)
	d.rogue = issue(t, d.rogueCA, localcp.FrontProxyClientName)
	d.stranger = issue(t, d.proxyCA, "someone-else")

	auth := env.Namespace(t, nil)
	d.cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: auth, Name: "extension-apiserver-authentication"},
		Data: requestHeaderData(d.proxyCA.CertPEM, `["`+localcp.FrontProxyClientName+`"]`)}
	must(t, d.k8s.Create(ctx, d.cm))

	// The door's own client records the reviews it asks for.
	recording := rest.CopyConfig(cfg)
	recording.ContentType = "application/json"
	recording.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/subjectaccessreviews") {
				raw, _ := io.ReadAll(r.Body)
				r.Body = io.NopCloser(bytes.NewReader(raw))
				var sar authzv1.SubjectAccessReview
				if err := json.Unmarshal(raw, &sar); err != nil {
					t.Errorf("decode review %s: %v", raw, err)
				}
				d.mu.Lock()
				d.reviews = append(d.reviews, sar.Spec)
				d.mu.Unlock()
			}
			return rt.RoundTrip(r)
		})
	})
	kube, err := kubernetes.NewForConfig(recording)
	must(t, err)
	// The REST handler stand-in answers with what reached it.
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var leaked []string
		for h := range r.Header {
			if strings.HasPrefix(strings.ToLower(h), "x-remote-") {
				leaked = append(leaked, h)
			}
		}
		id := identityFrom(r)
		_ = json.NewEncoder(w).Encode(map[string]any{"user": id.User, "groups": id.Groups, "level": id.Level,
			"namespace": id.Namespace, "path": r.URL.Path, "leaked_headers": leaked})
	})
	s, err := aggregated.New(aggregated.Options{Kube: kube, API: api, Inject: withIdentity,
		AuthenticationConfigMap: types.NamespacedName{Namespace: auth, Name: "extension-apiserver-authentication"}})
	must(t, err)
	must(t, s.Start(ctx))

	serverCA, err := certs.NewCA("door-serving-ca")
	must(t, err)
	serving, err := serverCA.ServingCert("localhost")
	must(t, err)
	srv := httptest.NewUnstartedServer(s)
	srv.TLS = s.TLSConfig(serving)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	d.url = strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	d.server = x509.NewCertPool()
	d.server.AppendCertsFromPEM(serverCA.CertPEM)
	return d
}

type idKey struct{}

func withIdentity(r *http.Request, id aggregated.Identity) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), idKey{}, id))
}

func identityFrom(r *http.Request) aggregated.Identity {
	id, _ := r.Context().Value(idKey{}).(aggregated.Identity)
	return id
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func issue(t *testing.T, ca *certs.CA, cn string) tls.Certificate {
	t.Helper()
	certPEM, keyPEM, err := ca.Issue(cn, nil, nil, true)
	must(t, err)
	c, err := tls.X509KeyPair(certPEM, keyPEM)
	must(t, err)
	return c
}

// requestHeaderData is the ConfigMap data kube-apiserver publishes.
func requestHeaderData(ca []byte, allowedNames string) map[string]string {
	return map[string]string{
		"requestheader-client-ca-file":       string(ca),
		"requestheader-allowed-names":        allowedNames,
		"requestheader-username-headers":     `["X-Remote-User"]`,
		"requestheader-uid-headers":          `["X-Remote-Uid"]`,
		"requestheader-group-headers":        `["X-Remote-Group"]`,
		"requestheader-extra-headers-prefix": `["X-Remote-Extra-"]`,
	}
}

// get requests path of the workspace default with cert (nil: none) and the
// identity headers; it returns the status and the decoded answer.
func (d *door) get(cert *tls.Certificate, headers map[string][]string) (int, map[string]any) {
	d.t.Helper()
	tc := &tls.Config{RootCAs: d.server}
	if cert != nil {
		tc.Certificates = []tls.Certificate{*cert}
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: tc}}
	defer hc.CloseIdleConnections()
	req, err := http.NewRequest(http.MethodGet, d.url+"/apis/api.uptime-operator.io/v1/namespaces/default/monitors", nil)
	must(d.t, err)
	for k, vs := range headers {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	resp, err := hc.Do(req)
	must(d.t, err)
	defer resp.Body.Close()
	var body map[string]any
	raw, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(raw, &body); err != nil {
		d.t.Fatalf("decode %d %s: %v", resp.StatusCode, raw, err)
	}
	return resp.StatusCode, body
}

func (d *door) reviewCount() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.reviews)
}

func (d *door) update(data map[string]string) {
	d.t.Helper()
	var cm corev1.ConfigMap
	must(d.t, d.k8s.Get(context.Background(), client.ObjectKeyFromObject(d.cm), &cm))
	cm.Data = data
	must(d.t, d.k8s.Update(context.Background(), &cm))
}

var alice = map[string][]string{"X-Remote-User": {"alice"}, "X-Remote-Group": {"system:authenticated"}}

// TestIdentityNeedsTheFrontProxyCertificate: identity headers count only on
// a connection whose client certificate the requestheader CA signed for an
// allowed name; everything else is 401 and never reaches the REST handler.
func TestIdentityNeedsTheFrontProxyCertificate(t *testing.T) {
	d := startDoor(t)
	for _, tc := range []struct {
		name    string
		cert    *tls.Certificate
		headers map[string][]string
		code    int
		message string
	}{
		{"no client certificate", nil, alice, http.StatusUnauthorized, "no front-proxy client certificate"},
		{"certificate of another CA", &d.rogue, alice, http.StatusUnauthorized, "not accepted"},
		{"name not allowed", &d.stranger, alice, http.StatusUnauthorized, "someone-else is not in the allowed list"},
		{"front proxy without a user", &d.proxy, map[string][]string{"X-Remote-Group": {"system:masters"}}, http.StatusUnauthorized, "no user"},
		{"front proxy vouching for alice", &d.proxy, alice, http.StatusOK, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := d.get(tc.cert, tc.headers)
			if code != tc.code {
				t.Fatalf("got %d %v, want %d", code, body, tc.code)
			}
			if tc.code != http.StatusOK {
				if msg, _ := body["message"].(string); !strings.Contains(msg, tc.message) {
					t.Errorf("message %q does not say %q", msg, tc.message)
				}
				return
			}
			if body["user"] != "alice" || body["level"] != "read-only" || body["namespace"] != "default" || body["path"] != "/monitors" {
				t.Errorf("REST handler got %v, want alice at read-only in default on /monitors", body)
			}
			if body["leaked_headers"] != nil {
				t.Errorf("identity headers reached the REST handler: %v", body["leaked_headers"])
			}
		})
	}
}

// TestReviewsCarryUIDAndExtraAndAreCached: the SubjectAccessReviews carry
// the UID and the X-Remote-Extra-* values, and a second identical request
// within the TTL asks none.
func TestReviewsCarryUIDAndExtraAndAreCached(t *testing.T) {
	d := startDoor(t)
	headers := map[string][]string{
		"X-Remote-User": {"alice"}, "X-Remote-Uid": {"uid-1234"}, "X-Remote-Group": {"system:authenticated", "team-a"},
		"X-Remote-Extra-Scopes": {"view", "audit"}, "X-Remote-Extra-Acme.com%2Fproject": {"p1"},
	}
	code, body := d.get(&d.proxy, headers)
	if code != http.StatusOK || body["level"] != "read-only" {
		t.Fatalf("first request: %d %v", code, body)
	}
	// alice is a viewer: owner, automation and standard are denied, then
	// read-only is allowed.
	if n := d.reviewCount(); n != 4 {
		t.Fatalf("first request asked %d reviews, want 4", n)
	}
	for _, spec := range d.reviews {
		if spec.User != "alice" || spec.UID != "uid-1234" || !slices.Equal(spec.Groups, []string{"system:authenticated", "team-a"}) {
			t.Errorf("review identity = %q %q %v", spec.User, spec.UID, spec.Groups)
		}
		if got := fmt.Sprint(spec.Extra); got != "map[acme.com/project:[p1] scopes:[view audit]]" {
			t.Errorf("review extra = %s", got)
		}
		if ra := spec.ResourceAttributes; ra == nil || ra.Verb != "use" || ra.Group != aggregated.Group || ra.Resource != "levels" || ra.Namespace != "default" {
			t.Errorf("review attributes = %+v", ra)
		}
	}

	code, body = d.get(&d.proxy, headers)
	if code != http.StatusOK || body["level"] != "read-only" {
		t.Fatalf("second request: %d %v", code, body)
	}
	if n := d.reviewCount(); n != 4 {
		t.Errorf("an identical request within the TTL asked %d more reviews, want none", n-4)
	}

	// Another extra value is another subject: it is asked about afresh.
	headers["X-Remote-Extra-Scopes"] = []string{"view"}
	if code, body := d.get(&d.proxy, headers); code != http.StatusOK {
		t.Fatalf("third request: %d %v", code, body)
	}
	if n := d.reviewCount(); n != 8 {
		t.Errorf("a request with other extra values asked %d reviews, want 4", n-4)
	}
}

// TestConfigMapChangesArePickedUp: a new allowed-names list or CA applies
// without restart, and a ConfigMap that does not parse refuses everything
// (fail closed) instead of keeping or widening the previous configuration.
func TestConfigMapChangesArePickedUp(t *testing.T) {
	d := startDoor(t)
	expect := func(step string, cert *tls.Certificate, code int) {
		t.Helper()
		eventually(t, func() error {
			if got, body := d.get(cert, alice); got != code {
				return fmt.Errorf("%s: got %d %v, want %d", step, got, body, code)
			}
			return nil
		})
	}
	expect("initial", &d.proxy, http.StatusOK)

	d.update(requestHeaderData(d.proxyCA.CertPEM, `["someone-else"]`))
	expect("allowed names changed", &d.proxy, http.StatusUnauthorized)
	expect("allowed names changed", &d.stranger, http.StatusOK)

	d.update(requestHeaderData(d.proxyCA.CertPEM, `front-proxy-client`))
	expect("allowed names do not parse", &d.stranger, http.StatusUnauthorized)
	expect("allowed names do not parse", &d.proxy, http.StatusUnauthorized)
	if _, body := d.get(&d.proxy, alice); !strings.Contains(fmt.Sprint(body["message"]), "requestheader-allowed-names") {
		t.Errorf("the refusal does not name the broken key: %v", body["message"])
	}

	d.update(requestHeaderData(d.rogueCA.CertPEM, `["front-proxy-client"]`))
	expect("CA rotated", &d.rogue, http.StatusOK)
	expect("CA rotated", &d.proxy, http.StatusUnauthorized)

	d.update(requestHeaderData([]byte("-----BEGIN CERTIFICATE-----\nnot a certificate\n-----END CERTIFICATE-----\n"), `["front-proxy-client"]`))
	expect("CA does not parse", &d.rogue, http.StatusUnauthorized)

	must(t, d.k8s.Delete(context.Background(), d.cm))
	expect("ConfigMap deleted", &d.rogue, http.StatusUnauthorized)
}
