package engine

import (
	"context"
	"sync"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/store"
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
	// reported[region+"/"+agent] is the last backlog report written to
	// the store; unsent[region] are replayed results a failed write left
	// to the next report of the region.
	reported map[string]report
	unsent   map[string]int
	// sweptAt is when reported was last rid of agents long gone (Pods of
	// earlier rollouts).
	sweptAt time.Time
}

// report is an agent's backlog as last written, and when.
type report struct {
	backlog int
	at      time.Time
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

// ShareReport writes what an agent's push said about the results it holds
// back (backlog: still held; replayed: delivered late with this push) to
// the store, without delaying the agent's request. Replayed results are
// written at once (those of a failed write are added to the region's next
// one); so is a backlog that fills or empties. A backlog that only changes size is written at most
// every contactReadEvery per agent (an agent that is behind reports a new
// one with every push), and an unchanged one every contactShareEvery.
func (e *Engine) ShareReport(region, agent string, at time.Time, backlog, replayed int) {
	c := &e.contacts
	key := region + "/" + agent
	backlog, replayed = max(backlog, 0), max(replayed, 0)
	c.mu.Lock()
	if c.reported == nil {
		c.reported, c.unsent = map[string]report{}, map[string]int{}
	}
	last, ok := c.reported[key]
	changed := backlog != last.backlog && (backlog == 0 || last.backlog == 0 || at.Sub(last.at) >= contactReadEvery)
	// Another replica may have written a backlog since this one's last
	// report (the agent's pushes reached it meanwhile): rewrite an
	// unchanged one as often as a contact.
	due := !ok || at.Sub(last.at) >= contactShareEvery
	if replayed == 0 && c.unsent[region] == 0 && !changed && !due {
		c.mu.Unlock()
		return
	}
	r := store.AgentReport{Region: region, Agent: agent, At: at, Backlog: backlog, Replayed: replayed + c.unsent[region]}
	delete(c.unsent, region)
	c.reported[key] = report{backlog: backlog, at: at}
	if at.Sub(c.sweptAt) > agentOnlineWindow {
		for k, r := range c.reported {
			if at.Sub(r.at) > agentOnlineWindow {
				delete(c.reported, k) // its next report, if any, is written
			}
		}
		c.sweptAt = at
	}
	c.mu.Unlock()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := e.opts.Store.RecordAgentReport(ctx, r); err != nil {
			e.opts.Log.Error(err, "share agent report", "region", region, "replayed", r.Replayed)
			c.mu.Lock()
			c.unsent[region] += r.Replayed
			if c.reported[key].at.Equal(at) {
				delete(c.reported, key) // write the backlog again at the next push
			}
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

// RegionAgentsAnywhere returns what the agents of region told any
// replica: their presence (agents in contact within window, the latest
// contact, the results they still held at their last push) and the results
// they delivered late in all. It merges this replica's own contacts with
// what every replica shared through the store: the ProbeRegion controller
// runs on the leader, whose own connections may include none of a region's
// agents. When the store does not answer, this replica's view of the
// contacts is returned.
func (e *Engine) RegionAgentsAnywhere(region string, window time.Duration) (store.AgentPresence, store.RegionReplays) {
	var own store.AgentPresence
	own.Agents, own.Last = e.AgentsOnline(region, window)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	presence, err := e.opts.Store.AgentsOnline(ctx, e.opts.Now().Add(-window))
	if err != nil {
		e.opts.Log.Error(err, "read shared agent contacts", "region", region)
		return own, store.RegionReplays{}
	}
	// The store holds this replica's contacts too (written at most every
	// contactShareEvery), so the larger count is the cluster's.
	out := own
	if p := presence[region]; p.Agents > 0 {
		out.Agents = max(own.Agents, p.Agents)
		if p.Last.After(out.Last) {
			out.Last = p.Last
		}
		out.Backlog = p.Backlog
	}
	replays, err := e.opts.Store.RegionReplays(ctx)
	if err != nil {
		e.opts.Log.Error(err, "read shared replayed results", "region", region)
	}
	return out, replays[region]
}
