package writethrough

import (
	"context"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// NewCache wraps next (cache.New when nil): the caches it makes lay o over
// every Get and List, and tell o the index functions registered on them so
// that lists selecting by an index see written objects too. Pass it as the
// manager's ctrl.Options.NewCache; the manager's client then reads through
// it.
func (o *Overlay) NewCache(next cache.NewCacheFunc) cache.NewCacheFunc {
	if next == nil {
		next = cache.New
	}
	return func(cfg *rest.Config, opts cache.Options) (cache.Cache, error) {
		c, err := next(cfg, opts)
		if err != nil {
			return nil, err
		}
		return &overlaidCache{Cache: c, o: o}, nil
	}
}

type overlaidCache struct {
	cache.Cache
	o *Overlay
}

func (c *overlaidCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	defer c.o.Reading()()
	return c.o.layGet(key, obj, c.Cache.Get(ctx, key, obj, opts...))
}

func (c *overlaidCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	defer c.o.Reading()()
	if err := c.Cache.List(ctx, list, opts...); err != nil {
		return err
	}
	return c.o.layList(list, opts)
}

func (c *overlaidCache) IndexField(ctx context.Context, obj client.Object, field string, fn client.IndexerFunc) error {
	c.o.addIndex(obj, field, fn)
	return c.Cache.IndexField(ctx, obj, field, fn)
}

// Writes returns c with every successful Create, Update, Patch and Delete
// recorded in o. Its reads are c's: give it a client that reads through a
// cache made by NewCache.
func (o *Overlay) Writes(c client.Client) client.Client {
	return &recordingClient{Client: c, o: o}
}

// Client returns c with its writes recorded in o and o laid over its reads,
// for a client whose cache was not made by NewCache (tests).
func (o *Overlay) Client(c client.Client) client.Client {
	return &overlaidClient{recordingClient{Client: c, o: o}}
}

type recordingClient struct {
	client.Client
	o *Overlay
}

func (c *recordingClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	err := c.Client.Create(ctx, obj, opts...)
	if err == nil && !dryRunCreate(opts) {
		c.o.Record(obj, false)
	}
	return err
}

func (c *recordingClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	err := c.Client.Update(ctx, obj, opts...)
	if err == nil && len((&client.UpdateOptions{}).ApplyOptions(opts).DryRun) == 0 {
		c.o.Record(obj, false)
	}
	return err
}

func (c *recordingClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	err := c.Client.Patch(ctx, obj, patch, opts...)
	if err == nil && len((&client.PatchOptions{}).ApplyOptions(opts).DryRun) == 0 {
		c.o.Record(obj, false)
	}
	return err
}

func (c *recordingClient) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	err := c.Client.Delete(ctx, obj, opts...)
	if err == nil && len((&client.DeleteOptions{}).ApplyOptions(opts).DryRun) == 0 {
		c.o.Record(obj, true)
	}
	return err
}

func dryRunCreate(opts []client.CreateOption) bool {
	return len((&client.CreateOptions{}).ApplyOptions(opts).DryRun) > 0
}

type overlaidClient struct{ recordingClient }

func (c *overlaidClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	defer c.o.Reading()()
	return c.o.layGet(key, obj, c.Client.Get(ctx, key, obj, opts...))
}

func (c *overlaidClient) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	defer c.o.Reading()()
	if err := c.Client.List(ctx, list, opts...); err != nil {
		return err
	}
	return c.o.layList(list, opts)
}
