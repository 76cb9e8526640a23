package statuspage

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/alertevent"
	"github.com/uptime-operator/uptime-operator/internal/monitor"
	"github.com/uptime-operator/uptime-operator/internal/netguard"
	"github.com/uptime-operator/uptime-operator/internal/restapi"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/trust"
)

// Mailer sends a plain-text e-mail. The manager wires the alerting e-mail
// sender.
type Mailer interface {
	SendMail(ctx context.Context, to, subject, text string) error
}

// MailerFunc adapts a function to Mailer.
type MailerFunc func(ctx context.Context, to, subject, text string) error

// SendMail implements Mailer.
func (f MailerFunc) SendMail(ctx context.Context, to, subject, text string) error {
	return f(ctx, to, subject, text)
}

// Notification events sent to subscribers (the X-Service-Event header and the
// "event" field of webhook payloads).
const (
	EventSubscriptionConfirm = "subscription.confirm"
	EventIncidentOpened      = "incident.opened"
	EventIncidentUpdated     = "incident.updated"
	EventIncidentResolved    = "incident.resolved"
	EventMaintenanceStarted  = "maintenance.started"
	EventMaintenanceEnded    = "maintenance.completed"
)

// Delivery settings.
const (
	// OutboxPrefix marks the outbox deliveries of this package: a
	// delivery's channel id is the prefix followed by the subscriber id.
	// The manager registers the Notifier as the alerting worker's Target
	// for it.
	OutboxPrefix = "subscriber:"
	// ConfirmTTL is how long a confirmation link works; pending subscribers
	// older than that are deleted.
	ConfirmTTL = 48 * time.Hour
	// attemptTimeout bounds one delivery attempt.
	attemptTimeout = 10 * time.Second
)

// Notifier manages the subscribers of status pages and notifies the
// confirmed ones of public incident updates and maintenance. Notifications
// go through the store's outbox, like alerts: an announcement becomes one
// outbox event (its id derived from what is announced, so announcing twice
// enqueues once) with one delivery per subscriber, and the alerting worker
// leases, sends (through DeliverOutbox), retries and records them, so they
// survive restarts and are sent by one replica at a time. Nothing secret is
// stored in the outbox: confirmation links, unsubscribe links and webhook
// signing secrets are derived from Key when the delivery is sent.
//
// The zero value is not usable: set Reader and Store.
type Notifier struct {
	// Reader reads StatusPages, Monitors and MaintenanceWindows (the
	// manager's cached client).
	Reader client.Reader
	// Store keeps the subscribers and the outbox.
	Store NotifierStore
	// Kick wakes the delivery worker after notifications are enqueued; may
	// be nil (the worker polls).
	Kick func()
	// Mailer sends e-mail; without one, e-mail subscriptions are refused.
	Mailer Mailer
	// Client sends chat and webhook requests. When nil a client that does
	// not follow redirects and dials public addresses only (unless
	// AllowPrivateTargets) is used.
	Client *http.Client
	// AllowPrivateTargets lets the default client reach private addresses.
	AllowPrivateTargets bool
	// Sign signs webhook bodies: alerting.Sign, so subscribers verify them
	// like alert webhooks. Webhook subscriptions are refused when nil.
	Sign func(secret []byte, timestamp string, body []byte) string
	// BaseURL is the externally visible base URL; links in messages start
	// with it.
	BaseURL string
	// Key derives confirmation tokens, unsubscribe tokens and webhook
	// signing secrets, which are therefore never stored. Load it from a
	// Secret shared by all replicas: when empty a random key is made at
	// first use, and links and signing secrets then change when the process
	// restarts (and differ between replicas).
	Key []byte
	// Clock is the time source; the real clock when nil.
	Clock clock.PassiveClock

	once    sync.Once
	keyOnce sync.Once
	key     []byte
	client  *http.Client
}

// Message is what a subscriber receives: for webhooks, the JSON body.
type Message struct {
	Event string `json:"event"`
	// Page is the status page the message is about.
	Page MessagePage `json:"page"`
	// Title is a one-line summary ("API is down").
	Title string `json:"title"`
	// Text is the public update, maintenance description or confirmation
	// text.
	Text       string    `json:"text"`
	IncidentID string    `json:"incident_id,omitempty"`
	WindowID   string    `json:"maintenance_id,omitempty"`
	Monitors   []string  `json:"monitors,omitempty"`
	At         time.Time `json:"at"`
	// ConfirmURL is set on confirmation requests.
	ConfirmURL string `json:"confirm_url,omitempty"`
	// SigningSecret is set on the confirmation request of a webhook: the
	// secret that signs its requests (X-Service-Signature).
	SigningSecret string `json:"signing_secret,omitempty"`
	// UnsubscribeURL ends the subscription.
	UnsubscribeURL string `json:"unsubscribe_url,omitempty"`
}

// MessagePage names the page of a message.
type MessagePage struct {
	Slug  string `json:"slug"`
	Title string `json:"title"`
	URL   string `json:"url"`
}

func (n *Notifier) init() {
	n.once.Do(func() {
		n.client = n.Client
		if n.client == nil {
			guard := netguard.Guard{AllowPrivate: n.AllowPrivateTargets}
			n.client = &http.Client{
				Transport: &http.Transport{
					DialContext:           guard.Dialer(attemptTimeout).DialContext,
					TLSClientConfig:       trust.ClientConfig(),
					TLSHandshakeTimeout:   attemptTimeout,
					ResponseHeaderTimeout: attemptTimeout,
					MaxIdleConnsPerHost:   2,
					IdleConnTimeout:       90 * time.Second,
				},
				CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
			}
		}
	})
}

func (n *Notifier) now() time.Time {
	if n.Clock == nil {
		return time.Now()
	}
	return n.Clock.Now()
}

func (n *Notifier) secretKey() []byte {
	n.keyOnce.Do(func() {
		if len(n.Key) > 0 {
			n.key = n.Key
			return
		}
		n.key = make([]byte, 32)
		if _, err := rand.Read(n.key); err != nil {
			panic(fmt.Sprintf("statuspage: read random subscription key: %v", err))
		}
	})
	return n.key
}

func (n *Notifier) mac(purpose, id string) []byte {
	m := hmac.New(sha256.New, n.secretKey())
	m.Write([]byte("statuspage-" + purpose + "\x00" + id))
	return m.Sum(nil)
}

// SigningSecret is the secret that signs the webhook requests of a
// subscriber: derived from Key, never stored.
func (n *Notifier) SigningSecret(subscriberID string) string {
	return "whsec_" + base64.RawURLEncoding.EncodeToString(n.mac("webhook-secret", subscriberID))
}

// unsubscribeToken is the token of a subscriber's unsubscribe links:
// the subscriber id and a MAC of it.
func (n *Notifier) unsubscribeToken(subscriberID string) string {
	return subscriberID + "." + base64.RawURLEncoding.EncodeToString(n.mac("unsubscribe", subscriberID)[:24])
}

// checkUnsubscribeToken returns the subscriber id of a valid token.
func (n *Notifier) checkUnsubscribeToken(token string) (string, bool) {
	id, sig, ok := strings.Cut(token, ".")
	if !ok || id == "" {
		return "", false
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil {
		return "", false
	}
	return id, hmac.Equal(got, n.mac("unsubscribe", id)[:24])
}

// confirmToken is the token of a subscriber's confirmation link sent at
// sentAt: a MAC of both, so the outbox holds no token and a renewed
// confirmation (a new sentAt) replaces the old link.
func (n *Notifier) confirmToken(subscriberID string, sentAt time.Time) string {
	return base64.RawURLEncoding.EncodeToString(n.mac("confirm", subscriberID+"\x00"+strconv.FormatInt(sentAt.Unix(), 10)))
}

// outboxNamespace is the UUID namespace of the outbox event ids of status
// page notifications.
var outboxNamespace = uuid.MustParse("9d3c2f0e-6a51-4b7e-8f0a-5f1d2c7e4b93")

// eventID is the outbox event id of one announcement: the same for the same
// page, event and subject (key), on every replica and after restarts, so a
// retried announcement is enqueued once.
func eventID(pageUID, event, key string) string {
	return uuid.NewSHA1(outboxNamespace, []byte(pageUID+"\x00"+event+"\x00"+key)).String()
}

// enqueue stores ev and its deliveries in the outbox. An event that was
// enqueued before (same id) is not an error: the announcement was made.
func (n *Notifier) enqueue(ctx context.Context, ev store.OutboxEvent) error {
	if len(ev.Channels) == 0 {
		return nil
	}
	if err := n.Store.EnqueueEvents(ctx, ev); err != nil {
		ds, lerr := n.Store.ListDeliveries(ctx, store.DeliveryQuery{EventID: ev.ID, Limit: 1})
		if lerr != nil || len(ds) == 0 {
			return fmt.Errorf("enqueue %s notification: %w", ev.Kind, err)
		}
		ctrl.LoggerFrom(ctx).V(1).Info("status page notification was enqueued before", "event", ev.Kind, "id", ev.ID)
		return nil
	}
	if n.Kick != nil {
		n.Kick()
	}
	return nil
}

// DeliverOutbox sends one outbox delivery to its subscriber; the alerting
// worker calls it (it implements alerting.Target). The subscriber is read
// again, so one who unsubscribed meanwhile gets nothing, and the links and
// signing secret of the message are derived now.
func (n *Notifier) DeliverOutbox(ctx context.Context, d store.Delivery) (int, bool, error) {
	n.init()
	sub, err := n.Store.GetSubscriber(ctx, strings.TrimPrefix(d.ChannelID, OutboxPrefix))
	if errors.Is(err, store.ErrNotFound) {
		return 0, true, errors.New("the subscriber no longer exists")
	}
	if err != nil {
		return 0, false, fmt.Errorf("read subscriber: %w", err)
	}
	var msg Message
	if err := json.Unmarshal(d.Payload, &msg); err != nil {
		return 0, true, fmt.Errorf("decode notification: %w", err)
	}
	if msg.Event == EventSubscriptionConfirm {
		if sub.Confirmed() {
			return 0, false, nil // confirmed meanwhile: nothing to ask
		}
		if sub.ConfirmationSentAt == nil {
			return 0, true, errors.New("the subscriber has no pending confirmation")
		}
		msg.ConfirmURL = msg.Page.URL + "/confirm?token=" + n.confirmToken(sub.ID, *sub.ConfirmationSentAt)
		if sub.Channel == store.SubscriberWebhook {
			// The endpoint's owner, not whoever submitted the form, learns
			// the secret that signs the notifications.
			msg.SigningSecret = n.SigningSecret(sub.ID)
		}
	} else {
		if !sub.Confirmed() {
			return 0, true, errors.New("the subscriber is not confirmed")
		}
		msg.UnsubscribeURL = msg.Page.URL + "/unsubscribe?token=" + n.unsubscribeToken(sub.ID)
	}
	status, err := n.send(ctx, d.ID, sub, msg)
	var perm *permanentError
	return status, errors.As(err, &perm), err
}

// retryAfterError is a retryable answer (429, 503) with the receiver's
// Retry-After header: the alerting worker, which schedules the retry, reads
// it through the RetryAfter method and honours it as it does for alerts.
type retryAfterError struct {
	err   error
	after string
}

func (e *retryAfterError) Error() string      { return e.err.Error() }
func (e *retryAfterError) Unwrap() error      { return e.err }
func (e *retryAfterError) RetryAfter() string { return e.after }

// permanentError is a failure that retrying cannot fix.
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// send performs one delivery of msg to sub; id is the delivery id (the
// X-Service-Delivery header of webhooks, stable across retries).
func (n *Notifier) send(ctx context.Context, id string, sub store.Subscriber, msg Message) (int, error) {
	switch sub.Channel {
	case store.SubscriberEmail:
		if n.Mailer == nil {
			return 0, &permanentError{errors.New("no mailer is configured")}
		}
		if err := n.Mailer.SendMail(ctx, sub.Address, emailSubject(msg), messageText(msg)); err != nil {
			return 0, fmt.Errorf("send e-mail: %w", err)
		}
		return 0, nil
	case store.SubscriberChat:
		body, _ := json.Marshal(map[string]string{"text": chatText(msg)})
		return n.post(ctx, id, sub, msg.Event, body, false)
	case store.SubscriberWebhook:
		if n.Sign == nil {
			return 0, &permanentError{errors.New("webhook signing is not configured")}
		}
		body, err := json.Marshal(msg)
		if err != nil {
			return 0, &permanentError{fmt.Errorf("encode webhook body: %w", err)}
		}
		return n.post(ctx, id, sub, msg.Event, body, true)
	}
	return 0, &permanentError{fmt.Errorf("unknown channel %q", sub.Channel)}
}

// post sends a JSON POST to the subscriber's URL, signed for webhooks.
func (n *Notifier) post(ctx context.Context, id string, sub store.Subscriber, event string, body []byte, signed bool) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, sub.Address, bytes.NewReader(body))
	if err != nil {
		return 0, &permanentError{errors.New("invalid subscriber URL")}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", alertevent.UserAgent)
	if signed {
		ts := strconv.FormatInt(n.now().Unix(), 10)
		req.Header.Set(alertevent.HeaderEvent, event)
		req.Header.Set(alertevent.HeaderDelivery, id)
		req.Header.Set(alertevent.HeaderTimestamp, ts)
		req.Header.Set(alertevent.HeaderSignature, n.Sign([]byte(n.SigningSecret(sub.ID)), ts, body))
	}
	resp, err := n.client.Do(req)
	if err != nil {
		if netguard.IsBlocked(err) {
			return 0, &permanentError{err}
		}
		return 0, fmt.Errorf("post to subscriber: %w", redactURL(err))
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	// Subscribers' answers are judged by the alert webhooks' rules, so a
	// 409 or 425 is retried here as it is for alerts.
	c := resp.StatusCode
	switch alertevent.Classify(c) {
	case alertevent.Delivered:
		return c, nil
	case alertevent.Permanent:
		return c, &permanentError{fmt.Errorf("subscriber answered %d", c)}
	}
	err = fmt.Errorf("subscriber answered %d", c)
	if c == http.StatusTooManyRequests || c == http.StatusServiceUnavailable {
		return c, &retryAfterError{err: err, after: resp.Header.Get("Retry-After")}
	}
	return c, err
}

// redactURL drops the request URL from a transport error: chat URLs are
// credentials, and the error is stored in the delivery's attempt log.
func redactURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func emailSubject(m Message) string {
	if m.Event == EventSubscriptionConfirm {
		return "Confirm your subscription to " + m.Page.Title + " status"
	}
	return "[" + m.Page.Title + " status] " + m.Title
}

// messageText is the plain-text form of a message (e-mail body).
func messageText(m Message) string {
	var b strings.Builder
	if m.Event == EventSubscriptionConfirm {
		fmt.Fprintf(&b, "Someone, hopefully you, subscribed this address to updates of the %s status page.\n\n", m.Page.Title)
		fmt.Fprintf(&b, "Confirm the subscription within %d hours: %s\n\n", int(ConfirmTTL.Hours()), m.ConfirmURL)
		b.WriteString("If you did not ask for it, ignore this message: nothing will be sent.\n")
		return b.String()
	}
	b.WriteString(m.Title + "\n\n")
	if m.Text != "" {
		b.WriteString(m.Text + "\n\n")
	}
	if len(m.Monitors) > 0 {
		b.WriteString("Affects: " + strings.Join(m.Monitors, ", ") + "\n")
	}
	fmt.Fprintf(&b, "%s\nStatus page: %s\n", m.At.UTC().Format("2006-01-02 15:04 UTC"), m.Page.URL)
	if m.UnsubscribeURL != "" {
		b.WriteString("Unsubscribe: " + m.UnsubscribeURL + "\n")
	}
	return b.String()
}

// chatText is the Slack-compatible mrkdwn text of a message.
func chatText(m Message) string {
	if m.Event == EventSubscriptionConfirm {
		return fmt.Sprintf("This channel was subscribed to updates of the *%s* status page. <%s|Confirm the subscription> (link valid %d hours); ignore this message otherwise.",
			m.Page.Title, m.ConfirmURL, int(ConfirmTTL.Hours()))
	}
	text := "*" + m.Page.Title + " status:* " + m.Title
	if m.Text != "" {
		text += "\n" + m.Text
	}
	text += "\n<" + m.Page.URL + "|Status page>"
	if m.UnsubscribeURL != "" {
		text += " · <" + m.UnsubscribeURL + "|Unsubscribe>"
	}
	return text
}

// pageURL is the public URL of a page.
func (n *Notifier) pageURL(page *monv1.StatusPage) string {
	return n.BaseURL + "/s/" + Slug(page)
}

func (n *Notifier) messagePage(page *monv1.StatusPage) MessagePage {
	return MessagePage{Slug: Slug(page), Title: page.Spec.Title, URL: n.pageURL(page)}
}

// broadcast enqueues msg for every confirmed subscriber of page; key names
// what is announced (with the page and event it makes the outbox event id).
func (n *Notifier) broadcast(ctx context.Context, page *monv1.StatusPage, msg Message, key string) error {
	subs, err := n.Store.ListSubscribers(ctx, string(page.UID), true)
	if err != nil {
		return fmt.Errorf("list subscribers of status page %s: %w", page.Name, err)
	}
	msg.Page = n.messagePage(page)
	payload, err := json.Marshal(msg)
	if err != nil {
		return fmt.Errorf("encode notification: %w", err)
	}
	ev := store.OutboxEvent{ID: eventID(string(page.UID), msg.Event, key), Namespace: page.Namespace, Kind: msg.Event,
		Payload: payload}
	for _, s := range subs {
		ev.Channels = append(ev.Channels, OutboxPrefix+s.ID)
	}
	return n.enqueue(ctx, ev)
}

// monitorPages returns the published pages of namespace ns that list the
// monitor with UID monitorUID, with the monitor's display name on each.
func (n *Notifier) monitorPages(ctx context.Context, ns, monitorUID string) ([]monv1.StatusPage, []string, error) {
	mon, err := monitor.ByUID(ctx, n.Reader, ns, monitorUID)
	if err != nil || mon == nil {
		return nil, nil, err
	}
	pages, refs, err := PagesOf(ctx, n.Reader, mon)
	if err != nil {
		return nil, nil, err
	}
	var out []monv1.StatusPage
	var names []string
	for i, p := range pages {
		if p.Spec.IsPublic && p.DeletionTimestamp.IsZero() {
			out = append(out, p)
			names = append(names, displayName(refs[i], mon))
		}
	}
	return out, names, nil
}

// PublicUpdate notifies the subscribers of every published page that shows
// the monitor of a public incident note (text is the note's body). The REST
// layer calls it when a note with public=true is added.
func (n *Notifier) PublicUpdate(ctx context.Context, ns, monitorUID, incidentID, text string) error {
	return n.incidentEvent(ctx, ns, monitorUID, incidentID, EventIncidentUpdated, text)
}

// IncidentOpened notifies the subscribers of the pages that show the
// monitor that it is down. The engine calls it when it opens an incident.
func (n *Notifier) IncidentOpened(ctx context.Context, ns, monitorUID, incidentID string) error {
	return n.incidentEvent(ctx, ns, monitorUID, incidentID, EventIncidentOpened, "")
}

// IncidentResolved notifies the subscribers of the pages that show the
// monitor that its incident is resolved. The engine (and the REST resolve)
// calls it.
func (n *Notifier) IncidentResolved(ctx context.Context, ns, monitorUID, incidentID string) error {
	return n.incidentEvent(ctx, ns, monitorUID, incidentID, EventIncidentResolved, "")
}

func (n *Notifier) incidentEvent(ctx context.Context, ns, monitorUID, incidentID, event, text string) error {
	pages, names, err := n.monitorPages(ctx, ns, monitorUID)
	if err != nil {
		return err
	}
	now := n.now().UTC()
	for i := range pages {
		var title string
		switch event {
		case EventIncidentResolved:
			title = incidentTitle(names[i], &now)
		case EventIncidentUpdated:
			title = "Update: " + incidentTitle(names[i], nil)
		default:
			title = incidentTitle(names[i], nil)
		}
		msg := Message{Event: event, Title: title, Text: text, IncidentID: incidentID, Monitors: []string{names[i]}, At: now}
		// An update is identified by its text: the same note announced
		// twice is enqueued once.
		if err := n.broadcast(ctx, &pages[i], msg, incidentID+"\x00"+text); err != nil {
			return err
		}
	}
	return nil
}

// Maintenance notifies the subscribers of the published pages of the
// window's namespace that show a monitor the window covers that its
// occurrence starting at occurrence started (started) or ended. The
// maintenance controller calls it on the transition.
func (n *Notifier) Maintenance(ctx context.Context, window *monv1.MaintenanceWindow, started bool, occurrence time.Time) error {
	var pages monv1.StatusPageList
	if err := n.Reader.List(ctx, &pages, client.InNamespace(window.Namespace)); err != nil {
		return fmt.Errorf("list status pages: %w", err)
	}
	event, title := EventMaintenanceEnded, "Maintenance completed: "+window.Spec.Title
	if started {
		event, title = EventMaintenanceStarted, "Maintenance started: "+window.Spec.Title
	}
	for i := range pages.Items {
		page := &pages.Items[i]
		if !page.Spec.IsPublic || !page.DeletionTimestamp.IsZero() {
			continue
		}
		res, err := ResolveMonitors(ctx, n.Reader, page)
		if err != nil {
			return err
		}
		var entries []*pageMonitor
		for _, e := range res.Entries {
			if e.Monitor != nil {
				entries = append(entries, &pageMonitor{ref: e.Ref, mon: e.Monitor, pub: PublicMonitor{Name: displayName(e.Ref, e.Monitor)}})
			}
		}
		affected := affectedMonitors(window, entries)
		if len(affected) == 0 {
			continue
		}
		msg := Message{Event: event, Title: title, Text: window.Spec.Description, WindowID: string(window.UID),
			Monitors: affected, At: n.now().UTC()}
		if err := n.broadcast(ctx, page, msg, string(window.UID)+"\x00"+strconv.FormatInt(occurrence.Unix(), 10)); err != nil {
			return err
		}
	}
	return nil
}

// Subscribers lists a page's subscribers by channel, pending ones included.
func (n *Notifier) Subscribers(ctx context.Context, pageUID string) (restapi.PageSubscribers, error) {
	out := restapi.NoPageSubscribers()
	subs, err := n.Store.ListSubscribers(ctx, pageUID, false)
	if err != nil {
		return out, fmt.Errorf("list subscribers: %w", err)
	}
	for _, s := range subs {
		v := restapi.PageSubscriber{ID: s.ID, Address: s.Address, Confirmed: s.Confirmed(), CreatedAt: s.CreatedAt.UTC(), ConfirmedAt: s.ConfirmedAt}
		switch s.Channel {
		case store.SubscriberEmail:
			out.Email = append(out.Email, v)
		case store.SubscriberChat:
			v.Address = maskURL(s.Address)
			out.Chat = append(out.Chat, v)
		case store.SubscriberWebhook:
			v.Address = maskURL(s.Address)
			out.Webhook = append(out.Webhook, v)
		}
		out.Total++
	}
	return out, nil
}

// maskURL keeps the scheme, host and last four characters of a URL.
func maskURL(raw string) string {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return "…"
	}
	host, path, _ := strings.Cut(rest, "/")
	if path == "" {
		return scheme + "://" + host
	}
	tail := path
	if len(tail) > 4 {
		tail = tail[len(tail)-4:]
	}
	return scheme + "://" + host + "/…" + tail
}
