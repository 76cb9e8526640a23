package statuspage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"mime"
	"net/http"
	"net/mail"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/confirmlink"
	"github.com/uptime-operator/uptime-operator/internal/httpjson"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// Subscription bounds.
const (
	// maxSubscribeBytes bounds the subscribe request body.
	maxSubscribeBytes = 8 << 10
	// maxAddressLen bounds an e-mail address or URL.
	maxAddressLen = 2048
	// resendAfter is the least time between two confirmations to one
	// pending address, so the endpoint cannot be used to flood a mailbox.
	resendAfter = 10 * time.Minute
)

// CodeUnavailable is the error code of a channel the service cannot deliver
// to (no mailer, no webhook signing).
const CodeUnavailable = "CHANNEL_UNAVAILABLE"

// subscribeRequest is the body of POST /s/:slug/subscribe (JSON or form).
type subscribeRequest struct {
	Channel string `json:"channel"`
	Address string `json:"address"`
	URL     string `json:"url"`
}

// readSubscribe decodes and validates a subscribe request.
func readSubscribe(r *http.Request) (store.SubscriberChannel, string, []fieldError, error) {
	var in subscribeRequest
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct == "application/json" {
		dec := json.NewDecoder(r.Body)
		dec.DisallowUnknownFields()
		if err := dec.Decode(&in); err != nil {
			return "", "", nil, fmt.Errorf("decode subscribe request: %w", err)
		}
	} else {
		if err := r.ParseForm(); err != nil {
			return "", "", nil, fmt.Errorf("parse subscribe form: %w", err)
		}
		in = subscribeRequest{Channel: r.PostForm.Get("channel"), Address: r.PostForm.Get("address"), URL: r.PostForm.Get("url")}
	}
	ch := store.SubscriberChannel(strings.ToLower(strings.TrimSpace(in.Channel)))
	if ch == "" {
		ch = store.SubscriberEmail
	}
	addr := strings.TrimSpace(in.Address)
	if addr == "" {
		addr = strings.TrimSpace(in.URL)
	}
	field := "address"
	if ch != store.SubscriberEmail {
		field = "url"
	}
	switch {
	case ch != store.SubscriberEmail && ch != store.SubscriberChat && ch != store.SubscriberWebhook:
		return "", "", []fieldError{{Field: "channel", Message: "must be one of email, chat, webhook"}}, nil
	case addr == "" || len(addr) > maxAddressLen:
		return "", "", []fieldError{{Field: field, Message: "is required, up to 2048 characters"}}, nil
	case ch == store.SubscriberEmail:
		a, err := mail.ParseAddress(addr)
		if err != nil || a.Address != addr || len(addr) > 254 {
			return "", "", []fieldError{{Field: field, Message: "must be an e-mail address"}}, nil
		}
		// The domain is case-insensitive: one subscription per mailbox.
		local, domain, _ := strings.Cut(addr, "@")
		addr = local + "@" + strings.ToLower(domain)
	default:
		u, err := url.Parse(addr)
		if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.Fragment != "" {
			return "", "", []fieldError{{Field: field, Message: "must be an https URL without credentials"}}, nil
		}
	}
	return ch, addr, nil, nil
}

// errChannelUnavailable means the service cannot deliver to the channel.
var errChannelUnavailable = errors.New("channel is not available")

// hashToken is the stored form of a confirmation token.
func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// subscribe stores a pending subscriber (or finds the existing one) and
// enqueues its confirmation. An address that is already confirmed, or whose
// confirmation was sent moments ago, gets nothing, and the caller answers
// the same either way: the endpoint does not tell who is subscribed. The
// stored hash is that of the token the delivery derives from the subscriber
// id and the time the confirmation was sent (confirmToken).
func (n *Notifier) subscribe(ctx context.Context, page *monv1.StatusPage, ch store.SubscriberChannel, addr string) error {
	if (ch == store.SubscriberEmail && n.Mailer == nil) || (ch == store.SubscriberWebhook && n.Sign == nil) {
		return errChannelUnavailable
	}
	now := n.now().UTC().Truncate(time.Second)
	id := uuid.NewString()
	sub, err := n.Store.AddSubscriber(ctx, store.Subscriber{
		ID: id, PageUID: string(page.UID), Namespace: page.Namespace, Channel: ch, Address: addr,
		ConfirmTokenHash: hashToken(n.confirmToken(id, now)), ConfirmationSentAt: &now, CreatedAt: now,
	})
	switch {
	case errors.Is(err, store.ErrSubscriberExists):
		if sub.Confirmed() || (sub.ConfirmationSentAt != nil && now.Sub(*sub.ConfirmationSentAt) < resendAfter) {
			return nil
		}
		if err := n.Store.RenewSubscriberToken(ctx, sub.ID, hashToken(n.confirmToken(sub.ID, now)), now); err != nil {
			return fmt.Errorf("renew confirmation: %w", err)
		}
	case err != nil:
		return fmt.Errorf("add subscriber: %w", err)
	}
	msg := Message{Event: EventSubscriptionConfirm, Page: n.messagePage(page), Title: "Confirm your subscription", At: now}
	payload, err := json.Marshal(msg)
	if err != nil {
		return fmt.Errorf("encode confirmation: %w", err)
	}
	return n.enqueue(ctx, store.OutboxEvent{
		ID: eventID(string(page.UID), msg.Event, sub.ID+"\x00"+strconv.FormatInt(now.Unix(), 10)), Namespace: page.Namespace,
		Kind: msg.Event, Payload: payload, Channels: []string{OutboxPrefix + sub.ID},
	})
}

// ServeSubscribe handles POST /s/:slug/subscribe: a form or JSON body with
// channel (email, chat or webhook; email when empty) and address (e-mail) or
// url (https chat or webhook URL). It stores a pending subscriber, queues the
// confirmation and answers 202 (JSON for JSON requests, else an HTML page).
func (p *Public) ServeSubscribe(w http.ResponseWriter, r *http.Request, slug string) {
	p.init()
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, http.StatusMethodNotAllowed, "", "Method not allowed")
		return
	}
	if p.Notifier == nil {
		writeError(w, http.StatusNotFound, CodeNotFound, "Not found")
		return
	}
	page, ok := p.lookup(w, r, slug)
	if !ok {
		return
	}
	if !p.authorized(r, page) {
		writeError(w, http.StatusUnauthorized, CodeUnauthorized, "This status page is private: sign in at /s/"+Slug(page))
		return
	}
	asJSON := httpjson.Wanted(r)
	r.Body = http.MaxBytesReader(w, r.Body, maxSubscribeBytes)
	ch, addr, invalid, err := readSubscribe(r)
	switch {
	case err != nil:
		p.answer(w, r, page, asJSON, http.StatusBadRequest, errorBody{Error: "Invalid request body", Code: CodeBadRequest},
			"Subscription failed", "The request could not be read.")
		return
	case invalid != nil:
		p.answer(w, r, page, asJSON, http.StatusBadRequest, errorBody{Error: "Validation failed", Code: CodeValidation, Errors: invalid},
			"Subscription failed", "Check the address: "+invalid[0].Field+" "+invalid[0].Message+".")
		return
	}
	err = p.Notifier.subscribe(r.Context(), page, ch, addr)
	switch {
	case errors.Is(err, errChannelUnavailable):
		p.answer(w, r, page, asJSON, http.StatusUnprocessableEntity,
			errorBody{Error: string(ch) + " subscriptions are not available", Code: CodeUnavailable},
			"Subscription failed", "This kind of subscription is not available.")
		return
	case err != nil:
		p.internalError(w, r, err)
		return
	}
	text := "Check your inbox: we sent a link to confirm the subscription."
	if ch != store.SubscriberEmail {
		text = "We posted a message with a confirmation link to the URL."
	}
	p.answer(w, r, page, asJSON, http.StatusAccepted, map[string]any{"status": "pending", "channel": ch},
		"Almost there", text)
}

// ServeConfirm handles /s/:slug/confirm?token=…, the link of the
// confirmation message. GET shows a page whose button POSTs back (mail
// scanners fetch links; see confirmlink); the POST confirms the pending
// subscriber (200) or answers 404 for an unknown, used or expired token.
func (p *Public) ServeConfirm(w http.ResponseWriter, r *http.Request, slug string) {
	page, ok := p.tokenRequest(w, r, slug)
	if !ok {
		return
	}
	title := page.Spec.Title
	if title == "" {
		title = "this status page"
	}
	prompt := confirmlink.Page{Title: "Confirm your subscription to " + title,
		Text: "Confirm that you want to be notified of incidents and maintenance on this status page.", Button: "Confirm subscription"}
	confirmlink.Serve(w, r, prompt, func() {
		ctx := r.Context()
		n := p.Notifier
		if _, err := n.Store.PruneSubscribers(ctx, n.now().Add(-ConfirmTTL)); err != nil {
			p.internalError(w, r, err)
			return
		}
		_, err := n.Store.ConfirmSubscriber(ctx, hashToken(r.URL.Query().Get("token")), n.now())
		switch {
		case errors.Is(err, store.ErrNotFound):
			p.answer(w, r, page, httpjson.Wanted(r), http.StatusNotFound, errorBody{Error: "Invalid or expired link", Code: CodeNotFound},
				"Link expired", "This confirmation link is invalid, used or expired. Subscribe again from the status page.")
		case err != nil:
			p.internalError(w, r, err)
		default:
			p.answer(w, r, page, httpjson.Wanted(r), http.StatusOK, map[string]any{"status": "confirmed"},
				"Subscribed", "You will be notified of incidents and maintenance. Every message has a link to unsubscribe.")
		}
	})
}

// ServeUnsubscribe handles GET and POST /s/:slug/unsubscribe?token=…: the
// link in every notification (POST for one-click List-Unsubscribe). It
// deletes the subscriber and answers 200, also when it was already gone, or
// 404 for a token that is not valid.
func (p *Public) ServeUnsubscribe(w http.ResponseWriter, r *http.Request, slug string) {
	page, ok := p.tokenRequest(w, r, slug)
	if !ok {
		return
	}
	id, valid := p.Notifier.checkUnsubscribeToken(r.URL.Query().Get("token"))
	if !valid {
		p.answer(w, r, page, httpjson.Wanted(r), http.StatusNotFound, errorBody{Error: "Invalid link", Code: CodeNotFound},
			"Invalid link", "This unsubscribe link is not valid.")
		return
	}
	if err := p.Notifier.Store.DeleteSubscriber(r.Context(), id); err != nil && !errors.Is(err, store.ErrNotFound) {
		p.internalError(w, r, err)
		return
	}
	p.answer(w, r, page, httpjson.Wanted(r), http.StatusOK, map[string]any{"status": "unsubscribed"},
		"Unsubscribed", "You will not receive further updates from this status page.")
}

// tokenRequest applies the method rule to a confirm or unsubscribe request
// and finds its page.
func (p *Public) tokenRequest(w http.ResponseWriter, r *http.Request, slug string) (*monv1.StatusPage, bool) {
	p.init()
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		w.Header().Set("Allow", "GET, POST")
		writeError(w, http.StatusMethodNotAllowed, "", "Method not allowed")
		return nil, false
	}
	if p.Notifier == nil {
		writeError(w, http.StatusNotFound, CodeNotFound, "Not found")
		return nil, false
	}
	return p.lookup(w, r, slug)
}

// messagePage is the data of templates/message.html.tmpl.
type messagePage struct {
	Title, Heading, Text string
	Error                bool
	// Back links to the page (none when empty); Link and LinkText offer a
	// next step.
	Back, Link, LinkText string
	Nonce                string
	CSS                  template.CSS
	Accent               template.CSS
	Favicon              template.URL
}

// answer writes v as JSON, or a small HTML page with heading and text.
func (p *Public) answer(w http.ResponseWriter, r *http.Request, page *monv1.StatusPage, asJSON bool, code int, v any, heading, text string) {
	w.Header().Set("Cache-Control", "no-store")
	if asJSON {
		httpjson.Write(w, code, v)
		return
	}
	d := &messagePage{
		Title: page.Spec.Title, Heading: heading, Text: text, Error: code >= 400,
		Back: "/s/" + Slug(page), CSS: pageCSS, Accent: "#0969da", Favicon: defaultFavicon,
	}
	if hexColor.MatchString(page.Spec.AccentColor) {
		d.Accent = template.CSS(page.Spec.AccentColor)
	}
	p.render(w, r, "message.html.tmpl", code, d, true)
}
