package probeapi

import (
	"context"
	"strconv"
	"sync"
)

// MemoryServer is an in-memory Server for tests. It speaks for one region:
// set Region, and Token to require a token.
type MemoryServer struct {
	// Region is the region every accepted token speaks for.
	Region string
	// Token, when set, is the only bearer token accepted.
	Token string

	mu       sync.Mutex
	lists    map[string]*AssignmentList
	changed  chan struct{}
	results  []Result
	seen     map[string]bool
	requests int
}

// SetAssignments replaces the region's assignments and bumps its revision,
// waking long polls.
func (m *MemoryServer) SetAssignments(region string, as []Assignment) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.init()
	rev := 1
	if old := m.lists[region]; old != nil {
		rev, _ = strconv.Atoi(old.Revision)
		rev++
	}
	m.lists[region] = &AssignmentList{Region: region, Revision: strconv.Itoa(rev), Assignments: as}
	close(m.changed)
	m.changed = make(chan struct{})
}

func (m *MemoryServer) init() {
	if m.lists == nil {
		m.lists = map[string]*AssignmentList{}
		m.seen = map[string]bool{}
		m.changed = make(chan struct{})
	}
}

// Authenticate implements Server.
func (m *MemoryServer) Authenticate(_ context.Context, token string) (string, error) {
	if m.Region == "" || (m.Token != "" && token != m.Token) {
		return "", ErrUnauthorized
	}
	return m.Region, nil
}

// Recognize implements Server: a MemoryServer knows its one token.
func (m *MemoryServer) Recognize(ctx context.Context, token string) (string, error) {
	region, err := m.Authenticate(ctx, token)
	if err != nil {
		return "", nil
	}
	return region, nil
}

// Assignments implements Server.
func (m *MemoryServer) Assignments(ctx context.Context, region, known string) (*AssignmentList, error) {
	for {
		m.mu.Lock()
		m.init()
		list := m.lists[region]
		if list == nil {
			list = &AssignmentList{Region: region, Revision: "0"}
		}
		changed := m.changed
		m.mu.Unlock()
		if list.Revision != known {
			return list, nil
		}
		select {
		case <-ctx.Done():
			return nil, ErrNotModified
		case <-changed:
		}
	}
}

// IngestResults implements Server.
func (m *MemoryServer) IngestResults(_ context.Context, region string, b *ResultBatch) (ResultsResponse, error) {
	if err := b.CheckRegion(region); err != nil {
		return ResultsResponse{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.init()
	m.requests++
	var resp ResultsResponse
	for _, r := range b.Results {
		if m.seen[r.ID] {
			resp.Duplicates++
			continue
		}
		m.seen[r.ID] = true
		m.results = append(m.results, r)
		resp.Accepted++
	}
	return resp, nil
}

// Results returns a copy of every stored result in arrival order.
func (m *MemoryServer) Results() []Result {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Result(nil), m.results...)
}

// IngestRequests counts IngestResults calls, including ones with duplicates.
func (m *MemoryServer) IngestRequests() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.requests
}
