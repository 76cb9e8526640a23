package alerting

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/tools/record"

	"github.com/google/uuid"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/alertevent"
	"github.com/uptime-operator/uptime-operator/internal/conditions"
	"github.com/uptime-operator/uptime-operator/internal/metrics"
	"github.com/uptime-operator/uptime-operator/internal/netguard"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/textutil"
	"github.com/uptime-operator/uptime-operator/internal/trust"
)

// Worker delivers the outbox. Every replica may run one: deliveries are
// leased to one Owner at a time, so two workers never send the same delivery
// concurrently, and a delivery whose worker died is picked up again once its
// lease expires (at least once; receivers de-duplicate on the delivery id).
type Worker struct {
	// Store holds the outbox.
	Store WorkerStore
	// Client writes AlertChannel status and annotations.
	Client client.Client
	// Reader reads AlertChannels and Secrets; the manager's API reader
	// (uncached) fits, since Secrets are not cached. Defaults to Client.
	Reader client.Reader
	// HTTPClient sends requests. Nil builds one whose dialer goes through
	// netguard (see NewTransport); a client passed in must do the same.
	// Redirects are never followed either way.
	HTTPClient *http.Client
	// Clock stamps attempts and signatures (the real clock when nil).
	Clock clock.PassiveClock
	// Owner identifies this replica in leases (hostname and a random suffix
	// when empty).
	Owner string
	// AllowPrivateTargets lets the default transport dial private, loopback
	// and link-local addresses.
	AllowPrivateTargets bool
	// Endpoints are the provider URLs of the non-webhook channels.
	Endpoints Endpoints
	// OwnerEmail receives the daily "connection is failing" email; empty
	// only logs it.
	OwnerEmail string
	// SMTP sends email (email channels, escalation emails, the owner
	// notice); nil or without Addr falls back to the Endpoints.Email relay.
	SMTP *SMTP
	// Recipients holds alert emails back from addresses that have not
	// confirmed them (--require-recipient-confirmation); nil sends to all.
	Recipients RecipientGate
	// Twilio sends sms, voice and whatsapp alerts; unconfigured falls back
	// to the Endpoints relays.
	Twilio *Twilio
	// Targets deliver the outbox deliveries that are not alerts: a delivery
	// whose channel id starts with a key of Targets goes to that Target
	// (status page subscribers, recipient confirmation emails), with the
	// same leases, attempt log and retry schedule as alerts.
	Targets map[string]Target

	// BatchSize is the most deliveries leased at once (16).
	BatchSize int
	// LeaseFor is how long a leased delivery stays with this worker (2m).
	LeaseFor time.Duration
	// PollInterval is how often the outbox is polled when idle (1s).
	PollInterval time.Duration
	// AttemptTimeout bounds one attempt (10s, the specification's value).
	AttemptTimeout time.Duration
	// Backoff is the wait after failed attempt n (Backoff: 5, 10, 20, 40, 80
	// seconds). Tests shorten it.
	Backoff func(n int) time.Duration
	// Retention, when positive, prunes finished outbox events older than it
	// once an hour.
	Retention time.Duration
	// RetryWindow, when positive, keeps retrying a delivery whose six
	// attempts of the specification's schedule (5, 10, 20, 40, 80 s, about
	// 155 s in all) failed with a retryable error: every 80 s (or what a
	// Retry-After asks for) until the next attempt would fall more than
	// RetryWindow after the delivery was queued. A receiver that is down for
	// longer than the schedule (a deploy, a five-minute outage) then gets
	// every delivery once it is back. Zero gives up after the sixth attempt,
	// as the specification says. The sixth failed attempt counts towards
	// the channel's Failing marker either way.
	RetryWindow time.Duration

	init sync.Once
	hc   *http.Client
	kick chan struct{}
	// Recorder records Events on channels that start or stop failing; may
	// be nil.
	Recorder record.EventRecorder
}

// Target delivers outbox deliveries of another service. Its methods see
// plain store types so that the service need not import this package.
type Target interface {
	// DeliverOutbox makes one attempt of d, bounded by ctx. status is the
	// receiver's HTTP status (0 when there is none); permanent says that a
	// retry cannot help. A nil err means delivered. An err that has a
	// RetryAfter() string method (see RetryAfterer) passes on the
	// receiver's Retry-After header, honoured on 429 and 503 as for alerts.
	DeliverOutbox(ctx context.Context, d store.Delivery) (status int, permanent bool, err error)
}

// RetryAfterer is implemented by a Target's error that carries the
// receiver's Retry-After header value.
type RetryAfterer interface {
	RetryAfter() string
}

// target returns the Target of a delivery's channel id and its name (the
// prefix without its colon), or nil.
func (w *Worker) target(channelID string) (Target, string) {
	for prefix, t := range w.Targets {
		if strings.HasPrefix(channelID, prefix) {
			return t, strings.TrimSuffix(prefix, ":")
		}
	}
	return nil, ""
}

// attemptTarget makes one attempt of a delivery that goes to t.
func (w *Worker) attemptTarget(ctx context.Context, t Target, d store.Delivery) attemptResult {
	actx, cancel := context.WithTimeout(ctx, w.AttemptTimeout)
	defer cancel()
	start := time.Now()
	status, permanent, err := t.DeliverOutbox(actx, d)
	res := attemptResult{outcome: alertevent.Delivered, status: status, err: err, latency: time.Since(start)}
	var ra RetryAfterer
	if errors.As(err, &ra) {
		res.header = http.Header{"Retry-After": {ra.RetryAfter()}}
	}
	switch {
	case err == nil:
	case permanent:
		res.outcome = alertevent.Permanent
	default:
		res.outcome = alertevent.Retryable
	}
	return res
}

// NeedLeaderElection is false: every replica delivers, leases coordinate.
func (w *Worker) NeedLeaderElection() bool { return false }

// Start runs the worker as a manager runnable.
func (w *Worker) Start(ctx context.Context) error { return w.Run(ctx) }

// Kick wakes the worker to look for due deliveries now (after enqueueing).
func (w *Worker) Kick() {
	w.setup()
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// Run delivers due deliveries until ctx ends.
func (w *Worker) Run(ctx context.Context) error {
	w.setup()
	log := ctrl.LoggerFrom(ctx).WithName("alerting").WithValues("owner", w.Owner)
	ctx = ctrl.LoggerInto(ctx, log)
	log.Info("delivery worker started")
	timer := time.NewTimer(0)
	defer timer.Stop()
	var lastPrune time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
		case <-w.kick:
		}
		if now := w.Clock.Now(); w.Retention > 0 && now.Sub(lastPrune) >= time.Hour {
			lastPrune = now
			if n, err := w.Store.PruneOutbox(ctx, now.Add(-w.Retention)); err != nil {
				log.Error(err, "unable to prune the outbox")
			} else if n > 0 {
				log.V(1).Info("pruned the outbox", "events", n)
			}
		}
		n, err := w.ProcessDue(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			log.Error(err, "unable to process deliveries")
		}
		wait := w.PollInterval
		if err == nil && n == w.BatchSize {
			wait = 0 // more may be due
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(wait)
	}
}

func (w *Worker) setup() {
	w.init.Do(func() {
		if w.Reader == nil {
			w.Reader = w.Client
		}
		if w.Clock == nil {
			w.Clock = clock.RealClock{}
		}
		if w.Owner == "" {
			host, _ := os.Hostname()
			w.Owner = host + "-" + uuid.NewString()[:8]
		}
		if w.BatchSize <= 0 {
			w.BatchSize = 16
		}
		if w.LeaseFor <= 0 {
			w.LeaseFor = 2 * time.Minute
		}
		if w.PollInterval <= 0 {
			w.PollInterval = time.Second
		}
		if w.AttemptTimeout <= 0 {
			w.AttemptTimeout = alertevent.AttemptTimeout
		}
		if w.Backoff == nil {
			w.Backoff = alertevent.Backoff
		}
		// A lease must outlast an attempt, or nothing is ever sent.
		w.LeaseFor = max(w.LeaseFor, 2*w.AttemptTimeout)
		w.Endpoints = w.Endpoints.withDefaults()
		base := w.HTTPClient
		if base == nil {
			base = &http.Client{Transport: NewTransport(netguard.Guard{AllowPrivate: w.AllowPrivateTargets})}
		}
		hc := *base
		hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		w.hc = &hc
		w.kick = make(chan struct{}, 1)
	})
}

// NewTransport is the HTTP transport of deliveries: every dial is checked by
// guard after name resolution, and no proxy is used (a proxy would hide the
// real destination from the guard). Receivers are verified against the
// system roots plus the trusted CA bundle (package trust).
func NewTransport(guard netguard.Guard) *http.Transport {
	return &http.Transport{
		DialContext:           guard.Dialer(alertevent.AttemptTimeout).DialContext,
		TLSClientConfig:       trust.ClientConfig(),
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   alertevent.AttemptTimeout,
		ResponseHeaderTimeout: alertevent.AttemptTimeout,
		MaxIdleConnsPerHost:   2,
		IdleConnTimeout:       90 * time.Second,
	}
}

// ProcessDue leases the due deliveries (up to BatchSize) and sends them:
// deliveries of one channel in order, channels in parallel. It returns how
// many were leased.
func (w *Worker) ProcessDue(ctx context.Context) (int, error) {
	w.setup()
	ds, err := w.Store.LeaseDeliveries(ctx, w.Owner, w.BatchSize, w.LeaseFor)
	if err != nil {
		return 0, fmt.Errorf("lease deliveries: %w", err)
	}
	if len(ds) == 0 {
		return 0, nil
	}
	channels := map[string]*monv1.AlertChannel{} // by uid
	listed := map[string]error{}
	var order []string
	groups := map[string][]store.Delivery{}
	for _, d := range ds {
		if t, _ := w.target(d.ChannelID); t == nil {
			if _, ok := listed[d.Namespace]; !ok {
				listed[d.Namespace] = w.listChannels(ctx, d.Namespace, channels)
			}
		}
		if _, ok := groups[d.ChannelID]; !ok {
			order = append(order, d.ChannelID)
		}
		groups[d.ChannelID] = append(groups[d.ChannelID], d)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var unsent []string
	for _, id := range order {
		wg.Go(func() {
			for i, d := range groups[id] {
				if ctx.Err() != nil {
					// Shutting down: attempts under way finish, the rest of
					// the lease goes back to the outbox below.
					mu.Lock()
					for _, rest := range groups[id][i:] {
						unsent = append(unsent, rest.ID)
					}
					mu.Unlock()
					return
				}
				if d.LeaseUntil != nil && d.LeaseUntil.Sub(w.Clock.Now()) < w.AttemptTimeout*3/2 {
					return // too little lease left; it expires and is taken again
				}
				w.deliver(ctx, d, channels[id], listed[d.Namespace])
			}
		})
	}
	wg.Wait()
	if len(unsent) > 0 {
		// ctx has ended; the release gets a short time of its own.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := w.Store.ReleaseDeliveries(rctx, w.Owner, unsent...); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "unable to release leased deliveries; they are taken again when the lease expires")
		}
	}
	return len(ds), nil
}

func (w *Worker) listChannels(ctx context.Context, namespace string, into map[string]*monv1.AlertChannel) error {
	var list monv1.AlertChannelList
	if err := w.Reader.List(ctx, &list, client.InNamespace(namespace)); err != nil {
		return fmt.Errorf("list alert channels of %s: %w", namespace, err)
	}
	for i := range list.Items {
		into[string(list.Items[i].UID)] = &list.Items[i]
	}
	return nil
}

// attemptResult is how one attempt went.
type attemptResult struct {
	outcome alertevent.Outcome
	status  int
	header  http.Header
	excerpt string
	err     error
	latency time.Duration
}

// deliver makes one attempt of d and records it. An attempt that has
// started is finished and recorded even when ctx ends meanwhile (shutdown):
// it is bounded by AttemptTimeout, and cutting it short would leave the
// receiver's answer unrecorded and the delivery to be sent again.
func (w *Worker) deliver(ctx context.Context, d store.Delivery, ch *monv1.AlertChannel, listErr error) {
	ctx = context.WithoutCancel(ctx)
	log := ctrl.LoggerFrom(ctx).WithValues("delivery", d.ID, "event", d.Kind, "channel", d.ChannelID)
	attempt := d.Attempts + 1
	var res attemptResult
	target, targetName := w.target(d.ChannelID)
	switch {
	case target != nil:
		res = w.attemptTarget(ctx, target, d)
	case isEmailTarget(d.ChannelID):
		res = w.attemptEmailTarget(ctx, d)
	case listErr != nil:
		res = attemptResult{outcome: alertevent.Retryable, err: listErr}
	case ch == nil || !ch.DeletionTimestamp.IsZero():
		res = attemptResult{outcome: alertevent.Permanent, err: errors.New("the alert channel no longer exists")}
	case ch.Spec.Disabled:
		res = attemptResult{outcome: alertevent.Permanent, err: errors.New("the alert channel is disabled")}
	default:
		res = w.attempt(ctx, ch, d.ID, d.Kind, d.Payload)
	}
	now := w.Clock.Now()
	a := store.DeliveryAttempt{
		DeliveryID: d.ID, At: now, StatusCode: res.status, Excerpt: res.excerpt,
		LatencyMs: res.latency.Milliseconds(),
	}
	if res.err != nil {
		a.Error = res.err.Error()
	}
	final := true
	var next *time.Time
	if res.outcome == alertevent.Retryable {
		next = w.retryAt(d, attempt, res, now)
	}
	var err error
	switch {
	case res.outcome == alertevent.Delivered:
		err = w.Store.CompleteDelivery(ctx, w.Owner, a)
	case next != nil:
		final = false
		err = w.Store.RetryDelivery(ctx, w.Owner, a, *next)
	default:
		err = w.Store.FailDelivery(ctx, w.Owner, a)
	}
	if errors.Is(err, store.ErrLeaseLost) {
		log.Info("delivery lease lost; another worker owns it now")
		return
	}
	if err != nil {
		log.Error(err, "unable to record delivery attempt")
		return
	}
	log.V(1).Info("delivery attempt", "attempt", attempt, "outcome", res.outcome.String(), "status", res.status)
	channelType := "email"
	switch {
	case target != nil:
		channelType = targetName
	case ch != nil:
		channelType = string(ch.Spec.Type)
	}
	outcome := "delivered"
	switch {
	case res.outcome == alertevent.Delivered:
	case !final:
		outcome = "retried"
	default:
		outcome = "failed"
	}
	metrics.AlertDeliveries.WithLabelValues(channelType, outcome, attemptLabel(attempt)).Inc()
	if ch == nil || ch.Spec.Disabled {
		return
	}
	if res.outcome == alertevent.Delivered && statusCurrent(&ch.Status, now, resultText(res)) {
		return // a healthy channel's status is refreshed at most every statusRefresh
	}
	// A delivery whose sixth attempt failed is a failed delivery for the
	// Failing marker, even when the retry window keeps it going; it counts
	// once, not again when the window ends.
	failed := attempt == alertevent.MaxAttempts || (final && attempt < alertevent.MaxAttempts)
	if err := w.recordOutcome(ctx, ch, now, res.outcome == alertevent.Delivered, failed, resultText(res)); err != nil {
		log.Error(err, "unable to update alert channel status", "name", ch.Name)
	}
}

// retryAt is when a delivery whose attempt number attempt failed with a
// retryable error is tried again, or nil when it is not: within the
// specification's six attempts always, after them while the next attempt
// still falls inside RetryWindow from the delivery's creation.
func (w *Worker) retryAt(d store.Delivery, attempt int, res attemptResult, now time.Time) *time.Time {
	next := now.Add(alertevent.NextDelay(w.Backoff(attempt), res.status, res.header, now))
	if attempt < alertevent.MaxAttempts || (w.RetryWindow > 0 && !next.After(d.CreatedAt.Add(w.RetryWindow))) {
		return &next
	}
	return nil
}

// attemptLabel is the attempt label of the deliveries metric: 1-6, and "7+"
// for the attempts of the retry window, so the label set stays bounded.
func attemptLabel(attempt int) string {
	if attempt > alertevent.MaxAttempts {
		return strconv.Itoa(alertevent.MaxAttempts+1) + "+"
	}
	return strconv.Itoa(attempt)
}

// statusRefresh is how stale a healthy channel's lastDeliveryAt may get:
// successes on a channel that is not failing and already shows the same
// result patch its status at most this often, so a busy channel costs the
// API server one write per interval instead of one per delivery. Failures
// are always written (they count towards Failing).
const statusRefresh = 10 * time.Second

// statusCurrent reports whether st already says what a success with result
// at now would write, up to statusRefresh.
func statusCurrent(st *monv1.AlertChannelStatus, now time.Time, result string) bool {
	return st.ConsecutiveFailures == 0 && !conditions.IsTrue(st.Conditions, monv1.AlertChannelConditionFailing) &&
		st.LastDeliveryStatus == result && st.LastDeliveryAt != nil && now.Sub(st.LastDeliveryAt.Time) < statusRefresh
}

// attempt builds and sends one request to ch.
func (w *Worker) attempt(ctx context.Context, ch *monv1.AlertChannel, id, kind string, payload []byte) attemptResult {
	b := w.builder()
	out, err := b.build(ctx, ch, id, kind, payload)
	if err != nil {
		o := alertevent.Retryable
		if isPermanent(err) {
			o = alertevent.Permanent
		}
		return attemptResult{outcome: o, err: err}
	}
	if out.skip {
		return attemptResult{outcome: alertevent.Delivered}
	}
	actx, cancel := context.WithTimeout(ctx, w.AttemptTimeout)
	defer cancel()
	res := sendAll(actx, w.hc, w.SMTP, out)
	if res.err != nil && actx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
		res.err = fmt.Errorf("timeout after %s", w.AttemptTimeout)
	}
	return res
}

// builder is the request builder of this worker's configuration.
func (w *Worker) builder() *requestBuilder {
	return &requestBuilder{reader: w.Reader, endpoints: w.Endpoints, now: w.Clock.Now(), store: w.Store,
		smtp: w.SMTP, twilio: w.Twilio, gate: w.Recipients}
}

// EmailTargetPrefix marks outbox deliveries addressed to an email address
// rather than an AlertChannel (escalation steps' emails): the delivery's
// channel id is the prefix followed by the address.
const EmailTargetPrefix = "email:"

func isEmailTarget(channelID string) bool { return strings.HasPrefix(channelID, EmailTargetPrefix) }

// attemptEmailTarget emails the event of d to the address in its channel id.
func (w *Worker) attemptEmailTarget(ctx context.Context, d store.Delivery) attemptResult {
	sum := summarize(d.Payload)
	b := w.builder()
	to, err := b.confirmedOnly(ctx, d.Namespace, []string{strings.TrimPrefix(d.ChannelID, EmailTargetPrefix)})
	if err != nil {
		o := alertevent.Retryable
		if isPermanent(err) {
			o = alertevent.Permanent
		}
		return attemptResult{outcome: o, err: err}
	}
	out, err := b.email(MailMessage{To: to, Subject: sum.Title, Text: sum.plain()})
	if err != nil {
		return attemptResult{outcome: alertevent.Permanent, err: err}
	}
	actx, cancel := context.WithTimeout(ctx, w.AttemptTimeout)
	defer cancel()
	return sendAll(actx, w.hc, w.SMTP, out)
}

// TestResult is the outcome of SendTest.
type TestResult struct {
	// Delivered is true when the endpoint accepted the test event.
	Delivered bool
	// StatusCode is the endpoint's status, 0 when no response arrived.
	StatusCode int
	// Excerpt is the start of the endpoint's response (up to 256 bytes).
	Excerpt string
	// Error says why no response arrived, or why nothing was sent.
	Error string
}

// Message is the sentence the REST API and dashboard show.
func (t TestResult) Message() string {
	switch {
	case t.Delivered:
		return "Test alert delivered"
	case t.StatusCode != 0 && t.Excerpt != "":
		return fmt.Sprintf("The endpoint answered %d: %s", t.StatusCode, t.Excerpt)
	case t.StatusCode != 0:
		return fmt.Sprintf("The endpoint answered %d", t.StatusCode)
	}
	return "The test alert could not be delivered: " + t.Error
}

// SendTest sends a signed test event to ch now, outside the outbox, and
// reports what the endpoint answered. It does not change the channel's
// delivery status.
func (w *Worker) SendTest(ctx context.Context, ch *monv1.AlertChannel) (TestResult, error) {
	w.setup()
	p := alertevent.NewTestPayload(w.Clock.Now())
	raw, err := json.Marshal(p)
	if err != nil {
		return TestResult{}, err
	}
	res := w.attempt(ctx, ch, uuid.NewString(), alertevent.Test, raw)
	if ctx.Err() != nil {
		return TestResult{}, ctx.Err()
	}
	t := TestResult{Delivered: res.outcome == alertevent.Delivered, StatusCode: res.status, Excerpt: res.excerpt}
	if res.err != nil {
		t.Error = res.err.Error()
	}
	return t, nil
}

// resultText is lastDeliveryStatus: the HTTP status, or the error.
func resultText(res attemptResult) string {
	if res.status != 0 {
		return strconv.Itoa(res.status)
	}
	if res.err != nil {
		return textutil.Truncate(res.err.Error(), 128)
	}
	return "ok"
}

// redact drops the request URL from transport errors: chat and bot URLs
// carry tokens.
func redact(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		if ue.Timeout() {
			return errors.New("timeout")
		}
		return ue.Err
	}
	return err
}

func isBlockedErr(err error) bool { return netguard.IsBlocked(err) }

func readFull(r io.Reader, buf []byte) (int, error) { return io.ReadFull(r, buf) }

// drain reads (a bounded amount of) the rest of a body so the connection can
// be reused.
func drain(r io.Reader) (int64, error) { return io.Copy(io.Discard, io.LimitReader(r, 64<<10)) }
