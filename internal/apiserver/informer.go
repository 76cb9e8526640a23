package apiserver

import (
	"context"
	"fmt"

	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

// informerMonitors lists Monitors straight from the informer's indexer.
// The cache's List copies every object into the list; GET /monitors of a
// 10,000-monitor workspace spent a fifth of its time doing that.
type informerMonitors struct{ indexer toolscache.Indexer }

// InformerMonitors returns a MonitorLister reading c's Monitor informer.
func InformerMonitors(ctx context.Context, c cache.Cache) (MonitorLister, error) {
	inf, err := c.GetInformer(ctx, &monv1.Monitor{})
	if err != nil {
		return nil, fmt.Errorf("monitor informer: %w", err)
	}
	withIndexer, ok := inf.(interface{ GetIndexer() toolscache.Indexer })
	if !ok {
		return nil, fmt.Errorf("the monitor informer (%T) does not expose its indexer", inf)
	}
	return informerMonitors{withIndexer.GetIndexer()}, nil
}

// ListMonitors implements MonitorLister.
func (l informerMonitors) ListMonitors(_ context.Context, ns string) ([]*monv1.Monitor, error) {
	objs, err := l.indexer.ByIndex(toolscache.NamespaceIndex, ns)
	if err != nil {
		return nil, fmt.Errorf("list monitors of %s: %w", ns, err)
	}
	out := make([]*monv1.Monitor, 0, len(objs))
	for _, o := range objs {
		if m, ok := o.(*monv1.Monitor); ok {
			out = append(out, m)
		}
	}
	return out, nil
}
