package thirdparty

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sync/errgroup"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/alertevent"
	"github.com/uptime-operator/uptime-operator/internal/netguard"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/trust"
)

// Defaults of a Service.
const (
	// DefaultInterval is the time between two polls of a followed provider.
	DefaultInterval = 3 * time.Minute
	// fetchTimeout bounds one request to a provider.
	fetchTimeout = 15 * time.Second
	// maxBody bounds a provider's response.
	maxBody = 5 << 20
	// pollConcurrency is how many providers are polled at once.
	pollConcurrency = 4
	userAgent       = "uptime-operator-third-party-status/1.0"
)

// ErrUnknownProvider means the provider id is not in the catalog.
var ErrUnknownProvider = errors.New("thirdparty: unknown provider")

// Notifier builds notice events addressed to the channels that take them.
// It is declared here, where it is used, so this service does not depend
// on the alerting package; the manager wires *alerting.Router.
type Notifier interface {
	// NoticeEvent builds the outbox event of a notice of kind with payload
	// in namespace; affected monitors narrow the channels by routing.
	NoticeEvent(ctx context.Context, namespace, kind string, payload any, affected []*monv1.Monitor) (store.OutboxEvent, error)
	// Link is the dashboard URL of path, "" without a public URL.
	Link(path string) string
}

// Service polls followed providers and answers the catalog questions of the
// REST API. Start (the poller) needs leader election; the other methods may
// be called on every replica.
type Service struct {
	// Store keeps subscriptions, poller state and enqueued notices.
	Store Store
	// Catalog lists the providers.
	Catalog *Catalog
	// Notifier builds the notice events and picks their channels.
	Notifier Notifier
	// Kick wakes the delivery worker after notices are enqueued; may be nil.
	Kick func()
	// HTTPClient fetches providers; nil is a client whose connections pass
	// through the address guard.
	HTTPClient *http.Client
	// AllowPrivateTargets turns the address guard off (tests, in-cluster
	// providers).
	AllowPrivateTargets bool
	// Interval is the time between polls (DefaultInterval when 0).
	Interval time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Log receives the poller's logs.
	Log logr.Logger

	once   sync.Once
	client *http.Client
}

// NeedLeaderElection makes the poller run on the leader only.
func (s *Service) NeedLeaderElection() bool { return true }

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Service) interval() time.Duration {
	if s.Interval > 0 {
		return s.Interval
	}
	return DefaultInterval
}

func (s *Service) log() logr.Logger {
	if s.Log.GetSink() == nil {
		return logr.Discard()
	}
	return s.Log
}

func (s *Service) httpClient() *http.Client {
	s.once.Do(func() {
		s.client = s.HTTPClient
		if s.client == nil {
			guard := netguard.Guard{AllowPrivate: s.AllowPrivateTargets}
			s.client = &http.Client{
				Timeout: fetchTimeout,
				Transport: &http.Transport{
					DialContext:           guard.Dialer(fetchTimeout).DialContext,
					TLSClientConfig:       trust.ClientConfig(),
					TLSHandshakeTimeout:   fetchTimeout,
					ResponseHeaderTimeout: fetchTimeout,
					MaxIdleConnsPerHost:   2,
					IdleConnTimeout:       90 * time.Second,
				},
			}
		}
	})
	return s.client
}

// Start polls until ctx ends.
func (s *Service) Start(ctx context.Context) error {
	t := time.NewTicker(s.interval())
	defer t.Stop()
	for {
		if err := s.PollAll(ctx); err != nil && ctx.Err() == nil {
			s.log().Error(err, "third-party status poll failed")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// PollAll polls once every provider that some workspace follows or some
// status page shows.
func (s *Service) PollAll(ctx context.Context) error {
	subs, err := s.Store.ListThirdPartySubscriptions(ctx, "")
	if err != nil {
		return fmt.Errorf("list third-party subscriptions: %w", err)
	}
	byProvider := map[string][]store.ThirdPartySubscription{}
	for _, sub := range subs {
		byProvider[sub.ProviderID] = append(byProvider[sub.ProviderID], sub)
	}
	pages, err := s.Store.ListThirdPartyPages(ctx)
	if err != nil {
		return fmt.Errorf("list third-party page services: %w", err)
	}
	for _, page := range pages {
		for _, svc := range page.Services {
			if _, ok := byProvider[svc.ProviderID]; !ok {
				byProvider[svc.ProviderID] = nil // shown, not followed: polled without notices
			}
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(pollConcurrency)
	var mu sync.Mutex
	var errs []error
	for _, id := range sortedKeys(byProvider) {
		p, ok, err := s.Catalog.Get(ctx, id)
		if err != nil {
			return err
		}
		if !ok {
			s.log().V(1).Info("followed provider is not in the catalog", "provider", id)
			continue
		}
		g.Go(func() error {
			if err := s.Poll(gctx, p, byProvider[id]); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
			return nil
		})
	}
	_ = g.Wait()
	return errors.Join(errs...)
}

// Poll fetches provider p once, diffs it against the stored snapshot and
// enqueues the notices subs want, together with the new state.
func (s *Service) Poll(ctx context.Context, p Provider, subs []store.ThirdPartySubscription) error {
	prev, err := s.Store.GetThirdPartyState(ctx, p.ID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("poll %s: %w", p.ID, err)
	}
	prev.ProviderID = p.ID
	now := s.now()
	res, err := s.fetch(ctx, p, prev.ETag, prev.LastModified)
	if err != nil {
		prev.PolledAt, prev.Error = now, err.Error()
		if perr := s.Store.PutThirdPartyState(ctx, prev); perr != nil {
			return errors.Join(err, perr)
		}
		return fmt.Errorf("poll %s: %w", p.ID, err)
	}
	next := prev
	next.PolledAt, next.Error = now, ""
	if res.notModified {
		return s.Store.PutThirdPartyState(ctx, next)
	}
	next.ETag, next.LastModified = res.etag, res.lastModified
	raw, err := json.Marshal(res.snap)
	if err != nil {
		return fmt.Errorf("poll %s: encode snapshot: %w", p.ID, err)
	}
	if len(prev.Snapshot) == 0 {
		// The first poll is the baseline: nothing is announced.
		next.Snapshot, next.ChangedAt = raw, &now
		return s.Store.PutThirdPartyState(ctx, next)
	}
	var old Snapshot
	if err := json.Unmarshal(prev.Snapshot, &old); err != nil {
		return fmt.Errorf("poll %s: decode stored snapshot: %w", p.ID, err)
	}
	changes := Diff(&old, res.snap, s.closedIncidents(ctx, p, &old, res.snap), p.pageURL())
	if string(raw) != string(prev.Snapshot) {
		next.Snapshot, next.ChangedAt = raw, &now
	}
	events, err := s.events(ctx, p, subs, changes)
	if err != nil {
		return fmt.Errorf("poll %s: %w", p.ID, err)
	}
	if err := s.Store.PutThirdPartyState(ctx, next, events...); err != nil {
		return fmt.Errorf("poll %s: %w", p.ID, err)
	}
	if len(events) > 0 {
		s.log().V(1).Info("third-party notices enqueued", "provider", p.ID, "changes", len(changes), "events", len(events))
		if s.Kick != nil {
			s.Kick()
		}
	}
	return nil
}

// events builds one notice per change and subscription that wants it,
// addressed to the subscription's workspace's webhook connections.
func (s *Service) events(ctx context.Context, p Provider, subs []store.ThirdPartySubscription, changes []Change) ([]store.OutboxEvent, error) {
	var out []store.OutboxEvent
	for _, sub := range subs {
		for _, ch := range changes {
			if !Matches(sub, ch) {
				continue
			}
			payload := s.Payload(p, ch)
			ev, err := s.Notifier.NoticeEvent(ctx, sub.Namespace, payload.Event, payload, nil)
			if err != nil {
				return nil, err
			}
			if len(ev.Channels) > 0 {
				out = append(out, ev)
			}
		}
	}
	return out, nil
}

// Payload is the webhook payload of change ch of provider p.
func (s *Service) Payload(p Provider, ch Change) alertevent.ThirdPartyPayload {
	url := p.pageURL()
	if s.Notifier != nil {
		if link := s.Notifier.Link("/third-party-status/providers/" + p.ID); link != "" {
			url = link
		}
	}
	components := ch.Components
	if components == nil {
		components = []string{}
	}
	return alertevent.NewThirdPartyPayload(alertevent.ThirdPartyPayload{
		URL: url, ProviderID: p.ID, ProviderName: p.Name, Kind: ch.Kind, Severity: ch.Severity,
		Detail: ch.Detail, Components: components, StatusPageURL: p.pageURL(), IncidentURL: ch.IncidentURL,
	})
}

// closedIncidents fetches incidents.json when open incidents left the
// summary, for their final update; nil when none did or the fetch failed
// (the incident is then reported resolved with what was last seen).
func (s *Service) closedIncidents(ctx context.Context, p Provider, prev, cur *Snapshot) map[string]Incident {
	if p.Kind != KindStatuspage {
		return nil
	}
	gone := false
	for id, i := range prev.Incidents {
		if _, ok := cur.Incidents[id]; !ok && !resolved(i.Status) {
			gone = true
			break
		}
	}
	if !gone {
		return nil
	}
	body, _, err := s.get(ctx, apiURL(p, "incidents.json"), nil)
	if err != nil {
		s.log().V(1).Info("unable to fetch incidents.json", "provider", p.ID, "error", err.Error())
		return nil
	}
	all, err := ParseIncidents(body)
	if err != nil {
		return nil
	}
	return all
}

func apiURL(p Provider, file string) string {
	return strings.TrimRight(p.URL, "/") + "/api/v2/" + file
}

type fetched struct {
	snap         *Snapshot
	notModified  bool
	etag         string
	lastModified string
}

// fetch gets the provider's summary or feed, conditionally on etag and
// lastModified.
func (s *Service) fetch(ctx context.Context, p Provider, etag, lastModified string) (fetched, error) {
	u := p.URL
	if p.Kind == KindStatuspage {
		u = apiURL(p, "summary.json")
	}
	h := http.Header{}
	if etag != "" {
		h.Set("If-None-Match", etag)
	}
	if lastModified != "" {
		h.Set("If-Modified-Since", lastModified)
	}
	body, resp, err := s.get(ctx, u, h)
	if err != nil {
		return fetched{}, err
	}
	if resp.StatusCode == http.StatusNotModified {
		return fetched{notModified: true}, nil
	}
	out := fetched{etag: resp.Header.Get("ETag"), lastModified: resp.Header.Get("Last-Modified")}
	if p.Kind == KindStatuspage {
		out.snap, err = ParseSummary(body)
	} else {
		out.snap, err = ParseFeed(body)
	}
	return out, err
}

// get performs one GET; a status other than 2xx or 304 is an error.
func (s *Service) get(ctx context.Context, u string, h http.Header) ([]byte, *http.Response, error) {
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("build request: %w", err)
	}
	for k, v := range h {
		req.Header[k] = v
	}
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Accept", "application/json, application/atom+xml, application/rss+xml, application/xml;q=0.9, */*;q=0.5")
	resp, err := s.httpClient().Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("fetch %s: %w", u, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode == http.StatusNotModified {
		return nil, resp, nil
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, resp, fmt.Errorf("fetch %s: provider answered %d", u, resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, resp, fmt.Errorf("read %s: %w", u, err)
	}
	if len(body) > maxBody {
		return nil, resp, fmt.Errorf("read %s: response larger than %d bytes", u, maxBody)
	}
	return body, resp, nil
}

// ProviderDetails is a provider with its current state.
type ProviderDetails struct {
	Provider
	// Indicator is the page's overall status (none, minor, major,
	// critical), empty for feeds.
	Indicator  string      `json:"indicator"`
	Components []Component `json:"components"`
	// Incidents are the unresolved incidents.
	Incidents    []Incident `json:"incidents"`
	Maintenances []Incident `json:"maintenances"`
	// PolledAt is when the state was fetched.
	PolledAt time.Time `json:"polled_at"`
}

// Details returns provider id with its components and open incidents: from
// the poller's state when it is fresh, else fetched now (and not stored, so
// the poller still announces what changed since its own last poll).
func (s *Service) Details(ctx context.Context, id string) (ProviderDetails, error) {
	p, ok, err := s.Catalog.Get(ctx, id)
	if err != nil {
		return ProviderDetails{}, err
	}
	if !ok {
		return ProviderDetails{}, ErrUnknownProvider
	}
	d := ProviderDetails{Provider: p, Components: []Component{}, Incidents: []Incident{}, Maintenances: []Incident{}}
	if p.StatusPageURL == "" {
		d.StatusPageURL = p.pageURL()
	}
	interval := s.interval()
	var snap *Snapshot
	st, err := s.Store.GetThirdPartyState(ctx, id)
	switch {
	case err == nil && len(st.Snapshot) > 0 && st.Error == "" && s.now().Sub(st.PolledAt) < 2*interval:
		snap = &Snapshot{}
		if err := json.Unmarshal(st.Snapshot, snap); err != nil {
			return d, fmt.Errorf("decode stored snapshot of %s: %w", id, err)
		}
		d.PolledAt = st.PolledAt
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return d, err
	default:
		res, err := s.fetch(ctx, p, "", "")
		if err != nil {
			return d, err
		}
		snap, d.PolledAt = res.snap, s.now()
	}
	d.Indicator = snap.Indicator
	for _, cid := range sortedKeys(snap.Components) {
		d.Components = append(d.Components, snap.Components[cid])
	}
	for _, iid := range sortedKeys(snap.Incidents) {
		if i := snap.Incidents[iid]; !resolved(i.Status) {
			d.Incidents = append(d.Incidents, i)
		}
	}
	for _, mid := range sortedKeys(snap.Maintenances) {
		if m := snap.Maintenances[mid]; m.Status != "completed" {
			d.Maintenances = append(d.Maintenances, m)
		}
	}
	for _, iid := range sortedKeys(snap.Items) {
		it := snap.Items[iid]
		d.Incidents = append(d.Incidents, Incident{ID: it.ID, Name: it.Title, Update: it.Summary, Shortlink: it.Link, UpdatedAt: it.Updated})
	}
	return d, nil
}
