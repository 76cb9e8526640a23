package statuspage

import (
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// ttlCache keeps built page data for a short time; concurrent misses for the
// same key build once.
type ttlCache struct {
	ttl     time.Duration
	mu      sync.Mutex
	entries map[string]cacheEntry
	group   singleflight.Group
}

type cacheEntry struct {
	value any
	at    time.Time
}

// get returns the value cached under key if it is younger than the TTL, and
// otherwise builds, stores and returns a new one.
func (c *ttlCache) get(key string, now time.Time, build func() (any, error)) (any, error) {
	c.mu.Lock()
	if e, ok := c.entries[key]; ok && now.Sub(e.at) < c.ttl && !now.Before(e.at) {
		c.mu.Unlock()
		return e.value, nil
	}
	c.mu.Unlock()
	v, err, _ := c.group.Do(key, func() (any, error) {
		v, err := build()
		if err != nil {
			return nil, err
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		for k, e := range c.entries { // drop stale entries (old versions, deleted pages)
			if now.Sub(e.at) >= c.ttl*4 {
				delete(c.entries, k)
			}
		}
		c.entries[key] = cacheEntry{value: v, at: now}
		return v, nil
	})
	return v, err
}
