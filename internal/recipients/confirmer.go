package recipients

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/uuid"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/uptime-operator/uptime-operator/internal/store"
)

// Defaults of the Confirmer's timings.
const (
	DefaultInterval    = 30 * time.Second
	DefaultTokenTTL    = 7 * 24 * time.Hour
	DefaultResendAfter = time.Minute
)

// ConfirmPath is the public path prefix of confirmation links; the token
// follows it.
const ConfirmPath = "/recipients/confirm/"

// OutboxPrefix marks the outbox deliveries of confirmation emails: the
// delivery's channel id is the prefix followed by the address. The manager
// registers the Confirmer as the alerting worker's Target for it.
const OutboxPrefix = "recipient-confirm:"

// EventConfirm is the outbox event kind of a confirmation email.
const EventConfirm = "recipient.confirm"

var (
	// ErrNotRecipient means the address is not named by any resource of the
	// namespace.
	ErrNotRecipient = errors.New("not an alert recipient of this workspace")
	// ErrNoMailer means email delivery is not configured.
	ErrNoMailer = errors.New("email delivery is not configured")
)

// TooSoonError is returned by Resend when a confirmation went to the address
// less than ResendAfter ago.
type TooSoonError struct{ RetryAfter time.Duration }

func (e *TooSoonError) Error() string {
	return fmt.Sprintf("a confirmation was sent less than a minute ago; retry in %s", e.RetryAfter.Round(time.Second))
}

// Mailer sends one plain-text email.
type Mailer interface {
	Send(ctx context.Context, to, subject, text string) error
}

// MailerFunc adapts a function to Mailer.
type MailerFunc func(ctx context.Context, to, subject, text string) error

// Send implements Mailer.
func (f MailerFunc) Send(ctx context.Context, to, subject, text string) error {
	return f(ctx, to, subject, text)
}

// Confirmer sends confirmation emails to new alert recipients, confirms
// them, and tells which addresses may receive alert emails. As a manager
// Runnable it asks every new address of every namespace once, on the
// leader only.
type Confirmer struct {
	// Reader lists the resources naming recipients (the manager's cache).
	Reader client.Reader
	// Store keeps the confirmation state.
	Store Store
	// Mailer sends the confirmations; without one nothing is sent and
	// Resend returns ErrNoMailer.
	Mailer Mailer
	// Key derives the link tokens, so the outbox holds none. Load it from a
	// Secret shared by all replicas: when empty a random key is made at
	// first use, and links sent but not yet delivered when the process
	// restarts do not work (Resend sends a new one).
	Key []byte
	// Kick wakes the delivery worker after a confirmation is enqueued; may
	// be nil.
	Kick func()
	// BaseURL is the externally visible base URL of the direct listener;
	// confirmation links start with it.
	BaseURL string
	// Required holds alert emails back from unconfirmed addresses.
	Required bool
	// Clock is the time source; the real clock when nil.
	Clock clock.PassiveClock
	// Interval is how often new addresses are looked for (DefaultInterval).
	Interval time.Duration
	// TokenTTL is how long a link works (DefaultTokenTTL).
	TokenTTL time.Duration
	// ResendAfter is the least time between two confirmations to one
	// address (DefaultResendAfter).
	ResendAfter time.Duration
	Log         logr.Logger

	keyOnce sync.Once
	key     []byte
}

func (c *Confirmer) now() time.Time {
	if c.Clock == nil {
		return time.Now()
	}
	return c.Clock.Now()
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// NeedLeaderElection makes one replica send the automatic confirmations.
func (c *Confirmer) NeedLeaderElection() bool { return true }

// Start asks new addresses every Interval until ctx ends.
func (c *Confirmer) Start(ctx context.Context) error {
	if c.Mailer == nil {
		c.Log.Info("email delivery is not configured: alert recipients are not sent confirmations")
		<-ctx.Done()
		return nil
	}
	t := time.NewTicker(orDefault(c.Interval, DefaultInterval))
	defer t.Stop()
	for {
		if n, err := c.AskNew(ctx); err != nil && ctx.Err() == nil {
			c.Log.Error(err, "unable to send confirmations to new alert recipients", "sent", n)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// AskNew sends a confirmation to every address of every namespace that was
// never sent one, and returns how many went out.
func (c *Confirmer) AskNew(ctx context.Context) (int, error) {
	if c.Mailer == nil {
		return 0, ErrNoMailer
	}
	all, err := List(ctx, c.Reader, "")
	if err != nil {
		return 0, err
	}
	known, err := c.Store.ListAlertRecipients(ctx, "")
	if err != nil {
		return 0, err
	}
	asked := map[[2]string]bool{}
	for _, k := range known {
		asked[[2]string{k.Namespace, k.Email}] = true
	}
	sent := 0
	var errs []error
	for _, r := range all {
		if asked[[2]string{r.Namespace, Key(r.Email)}] {
			continue
		}
		if _, err := c.send(ctx, r); err != nil {
			errs = append(errs, err)
			continue
		}
		sent++
	}
	return sent, errors.Join(errs...)
}

// State is a recipient with its confirmation state.
type State struct {
	Recipient
	// Record is the stored state, zero when no confirmation was sent yet.
	Record store.AlertRecipient
}

// Status is confirmed, pending (a confirmation was sent) or unconfirmed
// (none was sent yet).
func (s State) Status() string {
	switch {
	case s.Record.Confirmed():
		return "confirmed"
	case s.Record.ConfirmationSentAt != nil:
		return "pending"
	}
	return "unconfirmed"
}

// States lists the recipients of namespace with their confirmation state.
func (c *Confirmer) States(ctx context.Context, namespace string) ([]State, error) {
	all, err := List(ctx, c.Reader, namespace)
	if err != nil {
		return nil, err
	}
	known, err := c.Store.ListAlertRecipients(ctx, namespace)
	if err != nil {
		return nil, err
	}
	byEmail := map[string]store.AlertRecipient{}
	for _, k := range known {
		byEmail[k.Email] = k
	}
	out := make([]State, 0, len(all))
	for _, r := range all {
		out = append(out, State{Recipient: r, Record: byEmail[Key(r.Email)]})
	}
	return out, nil
}

// Resend sends a new confirmation to email, a recipient of namespace,
// replacing the pending link. A confirmed address is returned as it is
// without sending anything.
func (c *Confirmer) Resend(ctx context.Context, namespace, email string) (State, bool, error) {
	states, err := c.States(ctx, namespace)
	if err != nil {
		return State{}, false, err
	}
	i := slices.IndexFunc(states, func(s State) bool { return Key(s.Email) == Key(email) })
	if i < 0 {
		return State{}, false, ErrNotRecipient
	}
	st := states[i]
	if st.Record.Confirmed() {
		return st, false, nil
	}
	if c.Mailer == nil {
		return st, false, ErrNoMailer
	}
	if sent := st.Record.ConfirmationSentAt; sent != nil {
		wait := orDefault(c.ResendAfter, DefaultResendAfter) - c.now().Sub(*sent)
		if wait > 0 {
			return st, false, &TooSoonError{RetryAfter: wait}
		}
	}
	rec, err := c.send(ctx, st.Recipient)
	if err != nil {
		return st, false, err
	}
	st.Record = rec
	return st, true, nil
}

// send records a new confirmation of r and enqueues its email in the same
// transaction: the alerting worker delivers it through DeliverOutbox, with
// the retries of alerts, even across restarts. The token is not stored
// anywhere: the store keeps its hash, and the delivery derives it again
// from the address and the time it was recorded.
func (c *Confirmer) send(ctx context.Context, r Recipient) (store.AlertRecipient, error) {
	sentAt := c.now().UTC().Truncate(time.Second)
	email := Key(r.Email)
	payload, err := json.Marshal(confirmPayload{Sources: r.Sources})
	if err != nil {
		return store.AlertRecipient{}, fmt.Errorf("encode confirmation: %w", err)
	}
	ev := store.OutboxEvent{
		ID:        uuid.NewSHA1(outboxNamespace, []byte(r.Namespace+"\x00"+email+"\x00"+strconv.FormatInt(sentAt.Unix(), 10))).String(),
		Namespace: r.Namespace, Kind: EventConfirm, Payload: payload,
		Channels: []string{OutboxPrefix + email},
	}
	rec, err := c.Store.RecordRecipientConfirmation(ctx, r.Namespace, email, HashToken(c.token(r.Namespace, email, sentAt)), sentAt, ev)
	if err != nil {
		return rec, fmt.Errorf("record confirmation of %s: %w", r.Email, err)
	}
	if c.Kick != nil {
		c.Kick()
	}
	c.Log.Info("enqueued an alert recipient confirmation", "namespace", r.Namespace, "email", r.Email)
	return rec, nil
}

// confirmPayload is the outbox payload of a confirmation email.
type confirmPayload struct {
	// Sources are the kinds of resource that name the address.
	Sources []string `json:"sources"`
}

// outboxNamespace is the UUID namespace of confirmation event ids.
var outboxNamespace = uuid.MustParse("2e7a9c41-0b6d-4f38-a1e5-7c9d3b8f6a20")

// token is the link token of the confirmation of email in namespace
// recorded at sentAt: a MAC of the three under Key.
func (c *Confirmer) token(namespace, email string, sentAt time.Time) string {
	c.keyOnce.Do(func() {
		c.key = c.Key
		if len(c.key) == 0 {
			c.key = make([]byte, 32)
			if _, err := rand.Read(c.key); err != nil {
				panic(fmt.Sprintf("recipients: read random key: %v", err))
			}
		}
	})
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte("recipient-confirm\x00" + namespace + "\x00" + email + "\x00" + strconv.FormatInt(sentAt.Unix(), 10)))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// DeliverOutbox mails one enqueued confirmation; the alerting worker calls
// it (it implements alerting.Target). The recipient's record is read again:
// a confirmed address gets nothing, and a resent confirmation makes the
// link of the latest one.
func (c *Confirmer) DeliverOutbox(ctx context.Context, d store.Delivery) (int, bool, error) {
	if c.Mailer == nil {
		return 0, true, ErrNoMailer
	}
	email := strings.TrimPrefix(d.ChannelID, OutboxPrefix)
	known, err := c.Store.ListAlertRecipients(ctx, d.Namespace)
	if err != nil {
		return 0, false, fmt.Errorf("read alert recipients: %w", err)
	}
	i := slices.IndexFunc(known, func(k store.AlertRecipient) bool { return k.Email == email })
	switch {
	case i < 0 || known[i].ConfirmationSentAt == nil:
		return 0, true, errors.New("no confirmation is pending for the address")
	case known[i].Confirmed():
		return 0, false, nil
	}
	var p confirmPayload
	if err := json.Unmarshal(d.Payload, &p); err != nil {
		return 0, true, fmt.Errorf("decode confirmation: %w", err)
	}
	r := Recipient{Namespace: d.Namespace, Email: email, Sources: p.Sources}
	token := c.token(d.Namespace, email, *known[i].ConfirmationSentAt)
	if err := c.Mailer.Send(ctx, email, "Confirm alert emails from uptime-operator", c.message(r, token)); err != nil {
		return 0, false, fmt.Errorf("send confirmation to %s: %w", email, err)
	}
	return 0, false, nil
}

func (c *Confirmer) message(r Recipient, token string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "This address was added as an alert email recipient of the uptime-operator workspace %q (%s).\n\n",
		r.Namespace, strings.ReplaceAll(strings.Join(r.Sources, ", "), "_", " "))
	if c.Required {
		b.WriteString("Alert emails are held back until you confirm that you want them:\n\n")
	} else {
		b.WriteString("Please confirm that you want to receive its alert emails:\n\n")
	}
	fmt.Fprintf(&b, "%s%s%s\n\n", strings.TrimRight(c.BaseURL, "/"), ConfirmPath, token)
	fmt.Fprintf(&b, "The link works for %s. If you did not expect this email, ignore it.\n",
		humanDuration(orDefault(c.TokenTTL, DefaultTokenTTL)))
	return b.String()
}

func humanDuration(d time.Duration) string {
	if d%(24*time.Hour) == 0 {
		if n := int(d / (24 * time.Hour)); n != 1 {
			return fmt.Sprintf("%d days", n)
		}
		return "1 day"
	}
	return d.String()
}

// Confirm confirms the address whose pending link carries token; a used,
// replaced, expired or unknown token is store.ErrNotFound.
func (c *Confirmer) Confirm(ctx context.Context, token string) (store.AlertRecipient, error) {
	now := c.now()
	return c.Store.ConfirmAlertRecipient(ctx, HashToken(token), now.Add(-orDefault(c.TokenTTL, DefaultTokenTTL)), now)
}

// Allowed splits emails, alert recipients of namespace, into those that may
// be sent alert emails and those held back. Without Required every address
// is allowed.
func (c *Confirmer) Allowed(ctx context.Context, namespace string, emails []string) (allowed, held []string, err error) {
	if !c.Required {
		return emails, nil, nil
	}
	known, err := c.Store.ListAlertRecipients(ctx, namespace)
	if err != nil {
		return nil, nil, err
	}
	confirmed := map[string]bool{}
	for _, k := range known {
		confirmed[k.Email] = k.Confirmed()
	}
	for _, e := range emails {
		if confirmed[Key(e)] {
			allowed = append(allowed, e)
		} else {
			held = append(held, e)
		}
	}
	return allowed, held, nil
}

// HashToken is the stored form of a confirmation token.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}
