package alerting

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/alertevent"
	"github.com/uptime-operator/uptime-operator/internal/credentials"
	"github.com/uptime-operator/uptime-operator/internal/textutil"
)

// excerptLimit bounds the response excerpt stored with an attempt.
const excerptLimit = 256

// Sign returns the X-Service-Signature value: "sha256=" followed by the hex
// HMAC-SHA256 of timestamp + "." + body under secret.
func Sign(secret []byte, timestamp string, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(timestamp))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// Endpoints are the provider base URLs of the non-webhook channel types.
// Zero fields take the public defaults; tests point them at local servers.
type Endpoints struct {
	// PagerDuty is the Events API v2 base (https://events.pagerduty.com).
	PagerDuty string
	// OpsgenieUS and OpsgenieEU are the alert API bases of the two regions.
	OpsgenieUS, OpsgenieEU string
	// Telegram is the Bot API base (https://api.telegram.org).
	Telegram string
	// TelegramBotToken is the service's bot, used by channels without
	// botTokenFrom.
	TelegramBotToken string
	// GitHub is the REST API base (https://api.github.com).
	GitHub string
	// SMS, Voice, WhatsApp and Email are the relay endpoints of the phone and
	// email providers: each receives a JSON POST ({to, body} for phones,
	// {from, to, subject, text} for email). They are the fallback when
	// Worker.Twilio and Worker.SMTP are not configured; when neither is,
	// deliveries to those channels fail permanently.
	SMS, Voice, WhatsApp, Email string
	// ProviderToken is sent as a bearer token to the relay endpoints.
	ProviderToken string
	// EmailFrom is the sender address of emails.
	EmailFrom string
}

func (e Endpoints) withDefaults() Endpoints {
	def := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	def(&e.PagerDuty, "https://events.pagerduty.com")
	def(&e.OpsgenieUS, "https://api.opsgenie.com")
	def(&e.OpsgenieEU, "https://api.eu.opsgenie.com")
	def(&e.Telegram, "https://api.telegram.org")
	def(&e.GitHub, "https://api.github.com")
	def(&e.EmailFrom, "alerts@uptime-operator.local")
	return e
}

// outgoing is one request ready to send.
type outgoing struct {
	method, url string
	header      http.Header
	body        []byte
	// skip means the channel has nothing to do for this event (a resolve for
	// an incident without an issue); the delivery counts as delivered.
	skip bool
	// mail, when set, is sent over SMTP instead of an HTTP request.
	mail *MailMessage
	// keepBody reads the whole response (up to 1 MiB) for onSuccess.
	keepBody bool
	// onSuccess runs after a 2xx answer (the code host's issue link); its
	// error is logged, since retrying would repeat the request.
	onSuccess func(ctx context.Context, body []byte) error
	// then is sent after this request succeeds (comment, then close); the
	// attempt's result is the first failure or the last success.
	then *outgoing
}

// configError is a delivery failure no retry can fix (a provider that is not
// configured, an event the channel cannot represent).
type configError struct{ msg string }

func (e *configError) Error() string { return e.msg }

func permanent(format string, args ...any) error {
	return &configError{msg: fmt.Sprintf(format, args...)}
}

// isPermanent reports whether err cannot be fixed by retrying: a
// configuration error or a permanent (5xx) SMTP reply.
func isPermanent(err error) bool {
	var ce *configError
	var se *SMTPError
	return errors.As(err, &ce) || (errors.As(err, &se) && se.Code >= 500)
}

// requestBuilder turns a delivery into the channel's request.
type requestBuilder struct {
	reader    client.Reader
	endpoints Endpoints
	now       time.Time
	// store finds and records code-host issues of incidents (may be nil).
	store issueStore
	// smtp sends email when set; else the HTTP relay of endpoints does.
	smtp *SMTP
	// twilio sends phone alerts when configured; else the relays do.
	twilio *Twilio
	// gate holds alert emails back from unconfirmed recipients (may be nil).
	gate RecipientGate
}

// RecipientGate tells which alert email recipients have confirmed: emails
// go to the allowed addresses only. The recipients package implements it.
type RecipientGate interface {
	Allowed(ctx context.Context, namespace string, emails []string) (allowed, held []string, err error)
}

// confirmedOnly narrows to to the addresses gate allows. Nothing allowed is a
// permanent failure that names the held addresses; a store error is
// retried.
func (b *requestBuilder) confirmedOnly(ctx context.Context, namespace string, to []string) ([]string, error) {
	if b.gate == nil {
		return to, nil
	}
	allowed, held, err := b.gate.Allowed(ctx, namespace, to)
	if err != nil {
		return nil, fmt.Errorf("read recipient confirmations: %w", err)
	}
	if len(allowed) == 0 {
		return nil, permanent("not sent: %s has not confirmed alert emails (GET /alert-recipients)", strings.Join(held, ", "))
	}
	return allowed, nil
}

// build makes the request of delivery id (kind, payload) for ch with the
// sender of the channel's type.
func (b *requestBuilder) build(ctx context.Context, ch *monv1.AlertChannel, id, kind string, payload []byte) (*outgoing, error) {
	s, ok := senders[ch.Spec.Type]
	if !ok {
		return nil, permanent("channel type %q is not supported", ch.Spec.Type)
	}
	return s.build(ctx, &delivery{requestBuilder: b, ch: ch, id: id, kind: kind, payload: payload, sum: summarize(payload)})
}

// delivery is one event on its way to one channel: what a sender builds
// the request from, with the builder's endpoints, clock and providers.
type delivery struct {
	*requestBuilder
	ch       *monv1.AlertChannel
	id, kind string
	payload  []byte
	sum      summary
}

// secret reads the Secret key sel of the channel's namespace; what names
// the credential when the channel does not configure it.
func (d *delivery) secret(ctx context.Context, sel *monv1.SecretKeySelector, what string) (string, error) {
	if sel == nil {
		return "", permanent("%s is not configured", what)
	}
	return ChannelSecretValue(ctx, d.reader, d.ch, sel)
}

// hookURL is the channel's incoming-webhook URL, from its Secret when it
// names one.
func (d *delivery) hookURL(ctx context.Context) (string, error) {
	if d.ch.Spec.WebhookURLFrom != nil {
		return d.secret(ctx, d.ch.Spec.WebhookURLFrom, "the webhook URL")
	}
	if d.ch.Spec.WebhookURL == "" {
		return "", permanent("the webhook URL is not configured")
	}
	return d.ch.Spec.WebhookURL, nil
}

// jsonPost is a JSON POST of body to u.
func jsonPost(u string, body any) (*outgoing, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, permanent("encode request: %v", err)
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", alertevent.UserAgent)
	return &outgoing{method: http.MethodPost, url: u, header: h, body: raw}, nil
}

// EmailMessage is the body posted to the email relay.
type EmailMessage struct {
	From    string   `json:"from"`
	To      []string `json:"to"`
	Subject string   `json:"subject"`
	Text    string   `json:"text"`
}

// email is the request that sends msg: over SMTP when it is configured,
// else through the HTTP email relay.
func (b *requestBuilder) email(msg MailMessage) (*outgoing, error) {
	if b.smtp != nil && b.smtp.Addr != "" {
		return &outgoing{mail: &msg}, nil
	}
	if b.endpoints.Email == "" {
		return nil, permanent("no email provider is configured")
	}
	out, _ := jsonPost(b.endpoints.Email, EmailMessage{From: b.endpoints.EmailFrom, To: msg.To, Subject: msg.Subject, Text: msg.Text})
	b.authorizeRelay(out)
	return out, nil
}

func (b *requestBuilder) authorizeRelay(out *outgoing) {
	if b.endpoints.ProviderToken != "" {
		out.header.Set("Authorization", "Bearer "+b.endpoints.ProviderToken)
	}
}

// ChannelSecretValue reads one key of a Secret ch references, when ch may
// read that Secret (credentials.ChannelReferable: its own or opted in); a
// Secret it may not read is a permanent failure, its value never used.
func ChannelSecretValue(ctx context.Context, r client.Reader, ch *monv1.AlertChannel, sel *monv1.SecretKeySelector) (string, error) {
	var s corev1.Secret
	if err := r.Get(ctx, client.ObjectKey{Namespace: ch.Namespace, Name: sel.Name}, &s); err != nil {
		if apierrors.IsNotFound(err) {
			return "", fmt.Errorf("secret %s not found", sel.Name)
		}
		return "", fmt.Errorf("get secret %s: %w", sel.Name, err)
	}
	if err := credentials.ChannelReferable(&s, ch); err != nil {
		return "", permanent("%v", err)
	}
	v, ok := s.Data[sel.Key]
	if !ok {
		return "", fmt.Errorf("secret %s has no key %s", sel.Name, sel.Key)
	}
	return strings.TrimSpace(string(v)), nil
}

// summary is the human-readable form of a payload for chat, email and
// incident-management channels.
type summary struct {
	Event, Title, Link string
	Lines              []string
	Fields             map[string]any
}

func summarize(payload []byte) summary {
	var f map[string]any
	_ = json.Unmarshal(payload, &f)
	str := func(k string) string {
		s, _ := f[k].(string)
		return s
	}
	s := summary{Event: str("event"), Title: str("title"), Fields: f}
	s.Link = str("incident_url")
	if s.Link == "" {
		s.Link = str("url")
	}
	add := func(label, v string) {
		if v != "" {
			s.Lines = append(s.Lines, label+": "+v)
		}
	}
	add("Monitor", str("monitor_name"))
	add("Target", str("monitor_url"))
	add("Reason", str("reason"))
	add("Region", str("region"))
	if d, ok := f["duration_seconds"].(float64); ok {
		add("Downtime", (time.Duration(d) * time.Second).String())
	}
	add("Explanation", str("explanation"))
	add("Started", str("started_at"))
	add("Expires", str("expires_at"))
	add("Description", str("description"))
	add("Detail", str("detail"))
	return s
}

func (s summary) markdown(bold string) string {
	var b strings.Builder
	b.WriteString(bold + s.Title + bold)
	for _, l := range s.Lines {
		b.WriteString("\n" + l)
	}
	if s.Link != "" {
		b.WriteString("\n" + s.Link)
	}
	return b.String()
}

func (s summary) plain() string { return s.markdown("") }

func (s summary) resolves() bool {
	return s.Event == alertevent.MonitorUp || s.Event == alertevent.IncidentResolved
}

func (s summary) dedupKey(deliveryID string) string {
	if id, ok := s.Fields["incident_id"].(string); ok && id != "" {
		return id
	}
	return deliveryID
}

func (s summary) source() string {
	if u, ok := s.Fields["monitor_url"].(string); ok && u != "" {
		return u
	}
	return "uptime-operator"
}

func (s summary) color() string {
	if s.resolves() {
		return "2EB67D"
	}
	return "E01E5A"
}

// sendAll performs out (an SMTP send or an HTTP request) and the requests
// chained after it, stopping at the first that does not succeed, and runs
// the success hooks. mailer sends email; nil means SMTP is not configured.
func sendAll(ctx context.Context, hc *http.Client, mailer *SMTP, out *outgoing) attemptResult {
	var res attemptResult
	var latency time.Duration
	for o := out; o != nil; o = o.then {
		var body []byte
		if o.mail != nil {
			res = sendMail(ctx, mailer, *o.mail)
		} else {
			res, body = send(ctx, hc, o)
		}
		latency += res.latency
		res.latency = latency
		if res.outcome != alertevent.Delivered {
			return res
		}
		if o.onSuccess != nil {
			if err := o.onSuccess(ctx, body); err != nil {
				ctrl.LoggerFrom(ctx).Error(err, "unable to record the response of a delivery")
			}
		}
	}
	return res
}

// sendMail sends one email over SMTP and classifies the outcome: server
// 5xx replies and bad addresses are permanent, the rest is retried.
func sendMail(ctx context.Context, s *SMTP, msg MailMessage) attemptResult {
	if s == nil {
		return attemptResult{outcome: alertevent.Permanent, err: permanent("no SMTP server is configured")}
	}
	start := time.Now()
	err := s.Send(ctx, msg)
	res := attemptResult{latency: time.Since(start), err: err}
	var se *SMTPError
	switch {
	case err == nil:
		res.outcome = alertevent.Delivered
	case isPermanent(err):
		res.outcome = alertevent.Permanent
	default:
		res.outcome = alertevent.Retryable
	}
	if errors.As(err, &se) {
		res.status, res.excerpt = se.Code, textutil.Truncate(se.Msg, excerptLimit)
	}
	return res
}

// send performs one request and classifies the answer. It never follows
// redirects. With out.keepBody the body read so far is returned too.
func send(ctx context.Context, hc *http.Client, out *outgoing) (attemptResult, []byte) {
	start := time.Now()
	req, err := http.NewRequestWithContext(ctx, out.method, out.url, bytes.NewReader(out.body))
	if err != nil {
		return attemptResult{outcome: alertevent.Permanent, err: permanent("invalid endpoint URL")}, nil
	}
	req.Header = out.header.Clone()
	resp, err := hc.Do(req)
	res := attemptResult{latency: time.Since(start)}
	if err != nil {
		res.err = redact(err)
		res.outcome = alertevent.Retryable
		if isBlockedErr(err) {
			res.outcome = alertevent.Permanent
		}
		return res, nil
	}
	defer resp.Body.Close()
	limit := excerptLimit
	if out.keepBody {
		limit = issueBodyLimit
	}
	buf := make([]byte, limit)
	n, _ := readFull(resp.Body, buf)
	_, _ = drain(resp.Body)
	res.latency = time.Since(start)
	res.status = resp.StatusCode
	res.header = resp.Header
	res.excerpt = strings.ToValidUTF8(string(buf[:min(n, excerptLimit)]), "")
	res.outcome = alertevent.Classify(resp.StatusCode)
	return res, buf[:n]
}
