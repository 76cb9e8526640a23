package engine

import (
	"context"
	"sync"
	"time"
)

// Agent contact is shared through the store: an agent long-polls whichever
// replica its connection reached, but every replica's quorum must know that
// the region has an agent online (regions with one are waited for during a
// monitor's warm-up).

const (
	// contactShareEvery throttles the store writes of one agent's contact.
	contactShareEvery = 20 * time.Second
	// contactReadEvery is how long a replica reuses its read of the shared
	// contacts.
	contactReadEvery = 5 * time.Second
)

// sharedContacts is this replica's side of the shared agent contacts.
type sharedContacts struct {
	mu sync.Mutex
	// written[region+"/"+agent] is the last contact written to the store.
	written map[string]time.Time
	// online and readAt cache the last read of the store.
	online map[string]int
	readAt time.Time
}

// ShareContact writes an agent's contact to the store, at most every
// contactShareEvery per agent, without delaying the agent's request.
func (e *Engine) ShareContact(region, agent string, at time.Time) {
	c := &e.contacts
	key := region + "/" + agent
	c.mu.Lock()
	if c.written == nil {
		c.written = map[string]time.Time{}
	}
	if last, ok := c.written[key]; ok && at.Sub(last) < contactShareEvery {
		c.mu.Unlock()
		return
	}
	c.written[key] = at
	c.mu.Unlock()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := e.opts.Store.RecordAgentContact(ctx, region, agent, at); err != nil {
			e.opts.Log.Error(err, "share agent contact", "region", region)
			c.mu.Lock()
			delete(c.written, key) // try again at the next contact
			c.mu.Unlock()
		}
	}()
}

// sharedOnline returns the regions with an agent in contact with any
// replica within agentOnlineWindow, read from the store at most every
// contactReadEvery.
func (e *Engine) sharedOnline(ctx context.Context) map[string]int {
	c := &e.contacts
	now := e.opts.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.online != nil && now.Sub(c.readAt) < contactReadEvery && !now.Before(c.readAt) {
		return c.online
	}
	presence, err := e.opts.Store.AgentsOnline(ctx, now.Add(-agentOnlineWindow))
	if err != nil {
		e.opts.Log.Error(err, "read shared agent contacts")
		return c.online // the last read, or none
	}
	online := make(map[string]int, len(presence))
	for region, p := range presence {
		online[region] = p.Agents
	}
	c.online, c.readAt = online, now
	return online
}

// AgentsOnlineAnywhere returns how many agents of region were in contact
// with any replica within window, and the latest contact: this replica's own
// contacts and those the others shared through the store. The ProbeRegion
// controller runs on the leader, whose own connections may include none of a
// region's agents. When the store does not answer, this replica's view is
// returned.
func (e *Engine) AgentsOnlineAnywhere(region string, window time.Duration) (int, time.Time) {
	n, last := e.AgentsOnline(region, window)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	presence, err := e.opts.Store.AgentsOnline(ctx, e.opts.Now().Add(-window))
	if err != nil {
		e.opts.Log.Error(err, "read shared agent contacts", "region", region)
		return n, last
	}
	// The store holds this replica's contacts too (written at most every
	// contactShareEvery), so the larger count is the cluster's.
	if p := presence[region]; p.Agents > 0 {
		n = max(n, p.Agents)
		if p.Last.After(last) {
			last = p.Last
		}
	}
	return n, last
}
