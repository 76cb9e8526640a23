package statuspage

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

// Cache field indexes on StatusPages. RegisterIndexes installs them; the
// StatusPage controller calls it from SetupWithManager.
const (
	// IndexSlug indexes pages by their effective slug.
	IndexSlug = "statuspage.spec.slug"
	// IndexCustomDomain indexes pages by spec.customDomain.
	IndexCustomDomain = "statuspage.spec.customDomain"
	// IndexMonitor indexes pages by the names of the monitors they list.
	IndexMonitor = "statuspage.spec.monitors"
)

// RegisterIndexes adds the StatusPage field indexes to a cache.
func RegisterIndexes(ctx context.Context, idx client.FieldIndexer) error {
	add := func(name string, fn func(*monv1.StatusPage) []string) error {
		err := idx.IndexField(ctx, &monv1.StatusPage{}, name, func(o client.Object) []string {
			return fn(o.(*monv1.StatusPage))
		})
		if err != nil {
			return fmt.Errorf("index status pages by %s: %w", name, err)
		}
		return nil
	}
	if err := add(IndexSlug, func(p *monv1.StatusPage) []string { return []string{Slug(p)} }); err != nil {
		return err
	}
	if err := add(IndexCustomDomain, func(p *monv1.StatusPage) []string {
		if p.Spec.CustomDomain == "" {
			return nil
		}
		return []string{strings.ToLower(p.Spec.CustomDomain)}
	}); err != nil {
		return err
	}
	return add(IndexMonitor, func(p *monv1.StatusPage) []string {
		out := make([]string, 0, len(p.Spec.Monitors))
		for _, m := range p.Spec.Monitors {
			out = append(out, m.MonitorRef.Name)
		}
		return out
	})
}

// Slug is a page's effective slug: spec.slug, or metadata.name when unset
// (admission defaults it, so the fallback only matters without webhooks).
func Slug(p *monv1.StatusPage) string {
	if p.Spec.Slug != "" {
		return p.Spec.Slug
	}
	return p.Name
}

// ListBy lists the pages whose index field equals value, using the cache index
// when the reader has it and filtering a full list otherwise (an uncached
// reader, or a cache without RegisterIndexes). opts narrow the list (for
// example client.InNamespace).
func ListBy(ctx context.Context, r client.Reader, index, value string, opts ...client.ListOption) ([]monv1.StatusPage, error) {
	var list monv1.StatusPageList
	err := r.List(ctx, &list, append([]client.ListOption{client.MatchingFields{index: value}}, opts...)...)
	if err == nil {
		return list.Items, nil
	}
	list = monv1.StatusPageList{}
	if err := r.List(ctx, &list, opts...); err != nil {
		return nil, fmt.Errorf("list status pages: %w", err)
	}
	out := list.Items[:0]
	for _, p := range list.Items {
		if matches(&p, index, value) {
			out = append(out, p)
		}
	}
	return out, nil
}

func matches(p *monv1.StatusPage, index, value string) bool {
	switch index {
	case IndexSlug:
		return Slug(p) == value
	case IndexCustomDomain:
		return p.Spec.CustomDomain != "" && strings.EqualFold(p.Spec.CustomDomain, value)
	case IndexMonitor:
		for _, m := range p.Spec.Monitors {
			if m.MonitorRef.Name == value {
				return true
			}
		}
	}
	return false
}

// Owner picks the page that owns a contested slug or domain: the oldest, then
// by namespace and name. Admission refuses duplicates; this keeps the choice
// deterministic when they exist anyway (webhooks off, races). It returns nil
// for an empty list.
func Owner(pages []monv1.StatusPage) *monv1.StatusPage {
	live := make([]*monv1.StatusPage, 0, len(pages))
	for i := range pages {
		if pages[i].DeletionTimestamp.IsZero() {
			live = append(live, &pages[i])
		}
	}
	if len(live) == 0 {
		return nil
	}
	sort.Slice(live, func(i, j int) bool {
		a, b := live[i], live[j]
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.CreationTimestamp.Before(&b.CreationTimestamp)
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	return live[0]
}
