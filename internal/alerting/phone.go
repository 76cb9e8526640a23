package alerting

import (
	"encoding/xml"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/alertevent"
	"github.com/uptime-operator/uptime-operator/internal/textutil"
)

// Twilio configures the phone channels (sms, voice, whatsapp) against a
// Twilio-compatible REST API: messages are POSTed form-encoded to
// {BaseURL}/2010-04-01/Accounts/{AccountSID}/Messages.json, calls to
// Calls.json with inline TwiML, both with HTTP basic auth.
type Twilio struct {
	// BaseURL is the API base (https://api.twilio.com when empty).
	BaseURL string
	// AccountSID and AuthToken are the basic-auth credentials; AccountSID
	// is also part of the path.
	AccountSID, AuthToken string
	// From is the E.164 sender number of SMS and calls.
	From string
	// WhatsAppFrom is the E.164 WhatsApp sender (From when empty).
	WhatsAppFrom string
}

// configured reports whether phone alerts can be sent.
func (t *Twilio) configured() bool { return t != nil && t.AccountSID != "" && t.AuthToken != "" }

var e164 = regexp.MustCompile(`^\+[1-9][0-9]{6,14}$`)

// ValidE164 reports whether s is an E.164 phone number: a plus sign and 7 to
// 15 digits, the first not zero.
func ValidE164(s string) bool { return e164.MatchString(s) }

// phoneRequest builds the Twilio request that tells to about text on
// channel type t: an SMS, a WhatsApp message or a call that reads it out.
func (t *Twilio) phoneRequest(typ monv1.AlertChannelType, to, text string) (*outgoing, error) {
	if !ValidE164(to) {
		return nil, permanent("%q is not an E.164 phone number", to)
	}
	from := t.From
	if typ == monv1.ChannelWhatsApp && t.WhatsAppFrom != "" {
		from = t.WhatsAppFrom
	}
	if !ValidE164(from) {
		return nil, permanent("the %s sender %q is not an E.164 phone number", typ, from)
	}
	base := strings.TrimRight(t.BaseURL, "/")
	if base == "" {
		base = "https://api.twilio.com"
	}
	base += "/2010-04-01/Accounts/" + url.PathEscape(t.AccountSID)
	form := url.Values{}
	var u string
	switch typ {
	case monv1.ChannelVoice:
		u = base + "/Calls.json"
		form.Set("To", to)
		form.Set("From", from)
		form.Set("Twiml", twiml(text))
	case monv1.ChannelWhatsApp:
		u = base + "/Messages.json"
		form.Set("To", "whatsapp:"+to)
		form.Set("From", "whatsapp:"+from)
		form.Set("Body", textutil.Truncate(text, 1600))
	default:
		u = base + "/Messages.json"
		form.Set("To", to)
		form.Set("From", from)
		form.Set("Body", textutil.Truncate(text, 320))
	}
	h := http.Header{}
	h.Set("Content-Type", "application/x-www-form-urlencoded")
	h.Set("User-Agent", alertevent.UserAgent)
	req, _ := http.NewRequest(http.MethodPost, u, nil)
	req.SetBasicAuth(t.AccountSID, t.AuthToken)
	h.Set("Authorization", req.Header.Get("Authorization"))
	return &outgoing{method: http.MethodPost, url: u, header: h, body: []byte(form.Encode())}, nil
}

// twiml is the call script: the alert read out twice.
func twiml(text string) string {
	var b strings.Builder
	b.WriteString(`<Response><Say loop="2">`)
	_ = xml.EscapeText(&b, []byte(textutil.Truncate(text, 500)))
	b.WriteString(`</Say></Response>`)
	return b.String()
}
