package aggregated

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/request/headerrequest"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
)

// AuthenticationConfigMap is where kube-apiserver publishes its
// requestheader configuration for aggregated API servers.
var AuthenticationConfigMap = types.NamespacedName{Namespace: "kube-system", Name: "extension-apiserver-authentication"}

// The keys of the requestheader configuration in AuthenticationConfigMap,
// as kube-apiserver writes them (each list a JSON array of strings).
const (
	keyClientCA     = "requestheader-client-ca-file"
	keyAllowedNames = "requestheader-allowed-names"
	keyUserHeaders  = "requestheader-username-headers"
	keyUIDHeaders   = "requestheader-uid-headers"
	keyGroupHeaders = "requestheader-group-headers"
	keyExtraPrefix  = "requestheader-extra-headers-prefix"
)

// requestHeader is one parsed, complete requestheader configuration.
type requestHeader struct {
	verify        x509.VerifyOptions
	allowedNames  []string
	userHeaders   []string
	uidHeaders    []string
	groupHeaders  []string
	extraPrefixes []string
}

// frontProxy authenticates kube-apiserver's front proxy with
// k8s.io/apiserver's request-header authenticator (the one
// DelegatingAuthenticationOptions builds for sample-apiserver and
// metrics-server), fed from the ConfigMap as it changes.
//
// It differs from the library's own ConfigMap controllers in one way: those
// keep the last configuration that parsed when a new one does not, and start
// with no allowed names (any name) when the first one does not. Here a
// configuration that does not parse as a whole — CA, allowed names or any
// header list — replaces the previous one with none, so every request is
// refused (fail closed) until the ConfigMap is fixed.
type frontProxy struct {
	key      types.NamespacedName
	informer cache.SharedIndexInformer
	// cur is the configuration in force; nil refuses every request.
	cur atomic.Pointer[requestHeader]
	// problem says why cur is nil, for the 401 message and the log.
	problem atomic.Pointer[string]
	authn   authenticator.Request
}

func newFrontProxy(kube kubernetes.Interface, key types.NamespacedName) *frontProxy {
	f := &frontProxy{key: key}
	f.setProblem(errors.New("the requestheader configuration has not been read yet"))
	f.informer = coreinformers.NewFilteredConfigMapInformer(kube, key.Namespace, 12*time.Hour, cache.Indexers{},
		func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", key.Name).String()
		})
	_, _ = f.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { f.load(obj) },
		UpdateFunc: func(_, obj any) { f.load(obj) },
		DeleteFunc: func(any) {
			f.set(nil, fmt.Errorf("ConfigMap %s was deleted", key))
		},
	})
	get := func(pick func(*requestHeader) []string) headerrequest.StringSliceProviderFunc {
		return func() []string {
			if c := f.cur.Load(); c != nil {
				return pick(c)
			}
			return nil
		}
	}
	f.authn = headerrequest.NewDynamicVerifyOptionsSecure(
		func() (x509.VerifyOptions, bool) {
			c := f.cur.Load()
			if c == nil {
				return x509.VerifyOptions{}, false
			}
			return c.verify, true
		},
		get(func(c *requestHeader) []string { return c.allowedNames }),
		get(func(c *requestHeader) []string { return c.userHeaders }),
		get(func(c *requestHeader) []string { return c.uidHeaders }),
		get(func(c *requestHeader) []string { return c.groupHeaders }),
		get(func(c *requestHeader) []string { return c.extraPrefixes }),
	)
	return f
}

// start runs the informer until ctx ends and waits for its first list.
func (f *frontProxy) start(ctx context.Context) error {
	go f.informer.Run(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), f.informer.HasSynced) {
		return fmt.Errorf("read ConfigMap %s: %w", f.key, ctx.Err())
	}
	if f.cur.Load() == nil {
		// Not fatal: the configuration is picked up when it appears.
		ctrl.Log.WithName("aggregated").Error(errors.New(*f.problem.Load()), "refusing every aggregated API request until the requestheader configuration is usable")
	}
	return nil
}

func (f *frontProxy) load(obj any) {
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok {
		return
	}
	c, err := parseRequestHeader(cm.Data)
	if err != nil {
		err = fmt.Errorf("ConfigMap %s: %w", f.key, err)
	}
	f.set(c, err)
}

func (f *frontProxy) set(c *requestHeader, err error) {
	log := ctrl.Log.WithName("aggregated")
	if err != nil {
		f.setProblem(err)
		f.cur.Store(nil)
		log.Error(err, "refusing every aggregated API request until the requestheader configuration is fixed")
		return
	}
	f.cur.Store(c)
	log.Info("loaded the requestheader configuration", "allowedNames", c.allowedNames,
		"usernameHeaders", c.userHeaders, "uidHeaders", c.uidHeaders, "groupHeaders", c.groupHeaders, "extraHeaderPrefixes", c.extraPrefixes)
}

func (f *frontProxy) setProblem(err error) {
	s := err.Error()
	f.problem.Store(&s)
}

// usable returns nil when a configuration is in force, else why not.
func (f *frontProxy) usable() error {
	if f.cur.Load() != nil {
		return nil
	}
	return fmt.Errorf("the aggregated API refuses every request: %s", *f.problem.Load())
}

// parseRequestHeader reads the requestheader configuration kube-apiserver
// publishes. Every part must parse: a list that is not a JSON array of
// non-empty strings, or a CA that is not PEM certificates, is an error and
// not an empty value, because an empty allowed-names list means "any name
// the CA signed".
func parseRequestHeader(data map[string]string) (*requestHeader, error) {
	pem := data[keyClientCA]
	if strings.TrimSpace(pem) == "" {
		return nil, fmt.Errorf("no %s: kube-apiserver publishes it when started with --requestheader-client-ca-file", keyClientCA)
	}
	ca, err := dynamiccertificates.NewStaticCAContent(keyClientCA, []byte(pem))
	if err != nil {
		return nil, err
	}
	verify, ok := ca.VerifyOptions()
	if !ok {
		return nil, fmt.Errorf("%s holds no certificate", keyClientCA)
	}
	c := &requestHeader{verify: verify}
	for _, l := range []struct {
		key string
		dst *[]string
	}{
		{keyAllowedNames, &c.allowedNames}, {keyUserHeaders, &c.userHeaders}, {keyUIDHeaders, &c.uidHeaders},
		{keyGroupHeaders, &c.groupHeaders}, {keyExtraPrefix, &c.extraPrefixes},
	} {
		if *l.dst, err = parseList(data[l.key]); err != nil {
			return nil, fmt.Errorf("%s: %w", l.key, err)
		}
	}
	if len(c.userHeaders) == 0 {
		return nil, fmt.Errorf("no %s: kube-apiserver publishes them when started with --requestheader-username-headers", keyUserHeaders)
	}
	return c, nil
}

// parseList reads a JSON array of non-empty strings; absent is empty.
func parseList(raw string) ([]string, error) {
	if strings.TrimSpace(raw) == "" {
		return nil, nil
	}
	var out []string
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		return nil, fmt.Errorf("not a JSON array of strings: %w", err)
	}
	for i, s := range out {
		if out[i] = strings.TrimSpace(s); out[i] == "" {
			return nil, fmt.Errorf("item %d is empty", i+1)
		}
	}
	return out, nil
}
