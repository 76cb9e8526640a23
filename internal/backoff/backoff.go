// Package backoff is the one exponential backoff of the operator: the
// probe agent's assignment poll, the probe API client's retries and the
// alert delivery schedule compute their waits here.
//
// Clients that many processes run at once (the agents of every region)
// take Jitter: after a manager restart or a network blip they would
// otherwise retry in step and arrive together. The alert schedule has
// none, as the webhook specification gives its waits (5, 10, 20, 40, 80 s).
package backoff

import (
	"math/rand/v2"
	"time"
)

// Policy is an exponential backoff: Base, doubled per retry, capped at Max,
// with a random part.
type Policy struct {
	// Base is the first wait.
	Base time.Duration
	// Max caps every wait; 0 leaves them uncapped.
	Max time.Duration
	// Jitter is the fraction of each wait that is random, 0 to 1: a wait d
	// becomes a uniform value in [d·(1−Jitter), d]. It never lengthens a
	// wait, so Max stays the longest.
	Jitter float64

	// rand returns a uniform value in [0, 1); nil is math/rand/v2.
	rand func() float64
}

// Delay is the wait before retry n (0 for the first retry): Base·2ⁿ up to
// Max, less its random part.
func (p Policy) Delay(n int) time.Duration {
	d := p.Base
	for i := 0; i < n && d > 0; i++ {
		if p.Max > 0 && d >= p.Max {
			break
		}
		if d > (1<<62)/2 {
			break // doubling would overflow
		}
		d *= 2
	}
	if p.Max > 0 && d > p.Max {
		d = p.Max
	}
	j := min(max(p.Jitter, 0), 1)
	if j == 0 || d <= 0 {
		return d
	}
	r := p.rand
	if r == nil {
		r = rand.Float64
	}
	return d - time.Duration(j*r()*float64(d))
}
