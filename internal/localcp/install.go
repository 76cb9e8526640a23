package localcp

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// install applies the embedded CRDs (created, or updated when a kept state
// directory has older ones) and waits until kube-apiserver serves them,
// then the webhook configurations pointed at Webhook, then the aggregate
// roles, and fills Kubernetes' view, edit and admin from them
// (AggregateClusterRoles), so the built-in roles reach what they reach in
// a cluster (docs/kubectl.md).
func (p *ControlPlane) install(ctx context.Context) error {
	scheme := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		return err
	}
	if err := admissionv1.AddToScheme(scheme); err != nil {
		return err
	}
	if err := rbacv1.AddToScheme(scheme); err != nil {
		return err
	}
	c, err := client.New(p.Config, client.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("control plane client: %w", err)
	}
	crds, err := CRDs()
	if err != nil {
		return err
	}
	for _, crd := range crds {
		if err := apply(ctx, c, crd); err != nil {
			return fmt.Errorf("install crd %s: %w", crd.Name, err)
		}
	}
	if err := p.waitForCRDs(ctx, crds); err != nil {
		return err
	}
	mutating, validating, err := Webhooks()
	if err != nil {
		return err
	}
	for _, m := range mutating {
		for i := range m.Webhooks {
			p.pointAtWebhook(&m.Webhooks[i].ClientConfig)
		}
		if err := apply(ctx, c, m); err != nil {
			return fmt.Errorf("install mutating webhook configuration %s: %w", m.Name, err)
		}
	}
	for _, v := range validating {
		for i := range v.Webhooks {
			p.pointAtWebhook(&v.Webhooks[i].ClientConfig)
		}
		if err := apply(ctx, c, v); err != nil {
			return fmt.Errorf("install validating webhook configuration %s: %w", v.Name, err)
		}
	}
	roles, err := AggregateRoles()
	if err != nil {
		return err
	}
	for _, r := range roles {
		if err := apply(ctx, c, r); err != nil {
			return fmt.Errorf("install cluster role %s: %w", r.Name, err)
		}
	}
	return AggregateClusterRoles(ctx, c)
}

// pointAtWebhook sends a webhook's calls to Webhook (the manager on this
// machine) instead of the in-cluster Service, trusting its CA.
func (p *ControlPlane) pointAtWebhook(cc *admissionv1.WebhookClientConfig) {
	path := "/"
	if cc.Service != nil && cc.Service.Path != nil {
		path = *cc.Service.Path
	}
	url := "https://" + net.JoinHostPort(p.Webhook.Host, strconv.Itoa(p.Webhook.Port)) + "/" + strings.TrimPrefix(path, "/")
	cc.Service, cc.URL, cc.CABundle = nil, &url, p.webhookCA.CertPEM
}

// apply creates obj, or replaces the one a kept state directory holds.
func apply(ctx context.Context, c client.Client, obj client.Object) error {
	err := c.Create(ctx, obj)
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	existing := obj.DeepCopyObject().(client.Object)
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), existing); err != nil {
		return err
	}
	obj.SetResourceVersion(existing.GetResourceVersion())
	return c.Update(ctx, obj)
}

// waitForCRDs waits until discovery lists every served version's resource
// of crds: a client's REST mapper finds them from then on.
func (p *ControlPlane) waitForCRDs(ctx context.Context, crds []*apiextensionsv1.CustomResourceDefinition) error {
	dc, err := discovery.NewDiscoveryClientForConfig(p.Config)
	if err != nil {
		return fmt.Errorf("discovery client: %w", err)
	}
	pending := map[string][]string{} // group/version: plurals
	for _, crd := range crds {
		for _, v := range crd.Spec.Versions {
			if v.Served {
				gv := crd.Spec.Group + "/" + v.Name
				pending[gv] = append(pending[gv], crd.Spec.Names.Plural)
			}
		}
	}
	for len(pending) > 0 {
		for gv, plurals := range pending {
			list, err := dc.ServerResourcesForGroupVersion(gv)
			if err != nil {
				continue
			}
			served := map[string]bool{}
			for _, r := range list.APIResources {
				served[r.Name] = true
			}
			missing := plurals[:0]
			for _, pl := range plurals {
				if !served[pl] {
					missing = append(missing, pl)
				}
			}
			if len(missing) == 0 {
				delete(pending, gv)
			} else {
				pending[gv] = missing
			}
		}
		if len(pending) == 0 {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("crds not served (%v): %w", pending, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
	return nil
}
