package sqlstore

import (
	"time"

	"github.com/uptime-operator/uptime-operator/internal/store"
)

// Store implements store.Store except Close; backends embed it. It is the
// sum of one store per domain, each the receiver of its own queries (so no
// type carries the whole interface), sharing one db.
type Store struct {
	*db
	*checkStore      // check results, rollups, uptime and latency reads
	*incidentStore   // incidents, their notes, timeline and runbooks
	*judgeStore      // the judgement of a monitor's results across regions
	*historyStore    // generations of a monitor's history (claim, retire, prune)
	*outboxStore     // alert deliveries and recipients' confirmations
	*assistStore     // AI drafts, content and usage
	*siteHealthStore // website-health sites, runs and issues
	*thirdPartyStore // third-party status pages and subscriptions
	*otelStore       // OpenTelemetry export settings and deliveries
	*subscriberStore // status-page subscribers
	*expiryStore     // certificate and domain expiry
	*eventStore      // deploy events, DNS records, pauses and heartbeats
	*keyStore        // API key usage
}

// New is the Store of backend b speaking dialect d, with clock now.
func New(b Backend, d Dialect, now func() time.Time) *Store {
	db := &db{B: b, D: d, Now: now}
	s := &Store{db: db}
	s.checkStore = &checkStore{db}
	s.incidentStore = &incidentStore{db}
	s.judgeStore = &judgeStore{db, s.checkStore, s.incidentStore}
	s.historyStore = &historyStore{db, s.checkStore, s.incidentStore}
	s.outboxStore = &outboxStore{db}
	s.assistStore = &assistStore{db, s.incidentStore}
	s.siteHealthStore = &siteHealthStore{db}
	s.thirdPartyStore = &thirdPartyStore{db}
	s.otelStore = &otelStore{db}
	s.subscriberStore = &subscriberStore{db}
	s.expiryStore = &expiryStore{db}
	s.eventStore = &eventStore{db}
	s.keyStore = &keyStore{db}
	return s
}

// judgeStore reads a monitor's results and opens and resolves its
// incidents in the judgement's transaction.
type judgeStore struct {
	*db
	checks    *checkStore
	incidents *incidentStore
}

// historyStore moves and deletes a monitor's results and incidents with
// its history.
type historyStore struct {
	*db
	checks    *checkStore
	incidents *incidentStore
}

// assistStore drafts and publishes notes on incidents.
type assistStore struct {
	*db
	incidents *incidentStore
}

// db is what every domain store shares: the backend, its dialect and the
// clock.
type db struct {
	B   Backend
	D   Dialect
	Now func() time.Time
}

func (d *db) now() time.Time { return store.UTC(d.Now()) }

type (
	checkStore      struct{ *db }
	incidentStore   struct{ *db }
	outboxStore     struct{ *db }
	siteHealthStore struct{ *db }
	thirdPartyStore struct{ *db }
	otelStore       struct{ *db }
	subscriberStore struct{ *db }
	expiryStore     struct{ *db }
	eventStore      struct{ *db }
	keyStore        struct{ *db }
)
