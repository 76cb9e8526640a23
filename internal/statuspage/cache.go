package statuspage

import (
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// ttlCache keeps built page data for a short time; concurrent misses for the
// same key build once. A hit in the last quarter of an entry's life starts
// one rebuild in the background and still answers with the entry, so a page
// under steady traffic is rebuilt before it goes stale and no request waits
// for a build.
type ttlCache struct {
	ttl     time.Duration
	mu      sync.Mutex
	entries map[string]*cacheEntry
	group   singleflight.Group
}

type cacheEntry struct {
	value      any
	at         time.Time
	refreshing bool
}

// get returns the value cached under key if it is younger than the TTL, and
// otherwise builds, stores and returns a new one.
func (c *ttlCache) get(key string, now time.Time, build func() (any, error)) (any, error) {
	c.mu.Lock()
	if e, ok := c.entries[key]; ok && now.Sub(e.at) < c.ttl && !now.Before(e.at) {
		v := e.value
		if !e.refreshing && now.Sub(e.at) >= c.ttl*3/4 {
			e.refreshing = true
			go func() { _, _ = c.build(key, now, build) }()
		}
		c.mu.Unlock()
		return v, nil
	}
	c.mu.Unlock()
	return c.build(key, now, build)
}

// build runs build once for concurrent callers and stores the result at now.
func (c *ttlCache) build(key string, now time.Time, build func() (any, error)) (any, error) {
	v, err, _ := c.group.Do(key, func() (any, error) {
		v, err := build()
		c.mu.Lock()
		defer c.mu.Unlock()
		if err != nil {
			if e, ok := c.entries[key]; ok {
				e.refreshing = false // let a later hit try again
			}
			return nil, err
		}
		for k, e := range c.entries { // drop stale entries (old versions, deleted pages)
			if now.Sub(e.at) >= c.ttl*4 {
				delete(c.entries, k)
			}
		}
		c.entries[key] = &cacheEntry{value: v, at: now}
		return v, nil
	})
	return v, err
}
