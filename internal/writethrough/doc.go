// Package writethrough gives the manager's informer cache read-your-writes.
//
// Every reader of configuration in the manager (the REST API, the status
// pages, the alert router, the escalator, plan limits) reads the informer
// cache, which learns of a write only when the API server's watch event
// arrives, a few milliseconds to seconds after the write answered. A client
// that changed a webhook's routing or hid a status page, and got 2xx, must
// not see the old object afterwards, and neither must the events the
// manager emits on its behalf. So the write itself updates what readers
// see: an Overlay records every object written through Writes (the REST
// API's client) as the API server returned it, and the cache made by
// NewCache lays those objects over its answers (replacing, adding or
// hiding them) until the informer holds the same or a later
// resourceVersion and no read begun before it did is under way
// (Overlay.Reading), or TTL passes.
//
// The overlay is per process: another manager replica sees the write when
// its own informer receives it (docs/architecture.md, "Read-your-writes",
// states the bound and the test that measures it).
package writethrough
