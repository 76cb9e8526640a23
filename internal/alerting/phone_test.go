package alerting

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/alertevent"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

func TestValidE164(t *testing.T) {
	for s, want := range map[string]bool{
		"+4915112345678": true, "+14155550100": true, "+1234567": true, "+123456789012345": true,
		"4915112345678": false, "+0123456789": false, "+123456": false, "+1234567890123456": false,
		"+49 151 1234567": false, "+49-151-1234567": false, "": false, "whatsapp:+4915112345678": false,
	} {
		if got := ValidE164(s); got != want {
			t.Errorf("ValidE164(%q) = %v, want %v", s, got, want)
		}
	}
}

// twilioServer is a local Twilio-compatible API that records requests and
// answers 201 like the real one.
type twilioServer struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []twilioReq
}

type twilioReq struct {
	path, user, pass, contentType string
	form                          url.Values
}

func newTwilioServer(t *testing.T) *twilioServer {
	ts := &twilioServer{}
	ts.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, _ := r.BasicAuth()
		_ = r.ParseForm()
		ts.mu.Lock()
		ts.reqs = append(ts.reqs, twilioReq{path: r.URL.Path, user: user, pass: pass, contentType: r.Header.Get("Content-Type"), form: r.PostForm})
		ts.mu.Unlock()
		if user != "AC123" || pass != "tok" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"code": 20003, "message": "Authenticate"}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"sid": "SM0001", "status": "queued"}`))
	}))
	t.Cleanup(ts.Close)
	return ts
}

func TestPhoneChannelsThroughTwilio(t *testing.T) {
	ts := newTwilioServer(t)
	mk := func(name string, typ monv1.AlertChannelType, to string) *monv1.AlertChannel {
		ch := channel(name, typ, nil)
		ch.Spec.To = to
		return ch
	}
	h := newHarness(t, mk("sms", monv1.ChannelSMS, "+4915112345678"), mk("voice", monv1.ChannelVoice, "+14155550100"),
		mk("wa", monv1.ChannelWhatsApp, "+4915112345678"), mk("bad", monv1.ChannelSMS, "0151 1234"))
	w := h.worker("a")
	w.Twilio = &Twilio{BaseURL: ts.URL, AccountSID: "AC123", AuthToken: "tok", From: "+15005550006", WhatsAppFrom: "+14155238886"}
	p, _ := alertevent.NewIncidentPayload(alertevent.MonitorDown, alertevent.IncidentFacts{MonitorName: "API <prod> & co", IncidentID: "inc-1", Reason: "timeout"})

	deliver := func(channelID string) store.Delivery {
		t.Helper()
		ev, _ := newEvent("team", alertevent.MonitorDown, p, []string{channelID})
		if err := h.st.EnqueueEvents(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
		if _, err := w.ProcessDue(context.Background()); err != nil {
			t.Fatal(err)
		}
		ds, _ := h.st.ListDeliveries(context.Background(), store.DeliveryQuery{EventID: ev.ID})
		if len(ds) != 1 {
			t.Fatalf("deliveries = %+v", ds)
		}
		return ds[0]
	}
	last := func() twilioReq {
		ts.mu.Lock()
		defer ts.mu.Unlock()
		return ts.reqs[len(ts.reqs)-1]
	}
	common := func(t *testing.T, r twilioReq, path string) {
		t.Helper()
		if r.path != path || r.user != "AC123" || r.pass != "tok" || r.contentType != "application/x-www-form-urlencoded" {
			t.Errorf("request = %+v", r)
		}
	}

	t.Run("sms", func(t *testing.T) {
		if d := deliver("uid-sms"); d.Status != store.DeliveryDelivered {
			t.Fatalf("delivery = %+v", d)
		}
		r := last()
		common(t, r, "/2010-04-01/Accounts/AC123/Messages.json")
		if r.form.Get("To") != "+4915112345678" || r.form.Get("From") != "+15005550006" ||
			r.form.Get("Body") != "API <prod> & co is DOWN: timeout" {
			t.Errorf("form = %v", r.form)
		}
	})
	t.Run("voice", func(t *testing.T) {
		if d := deliver("uid-voice"); d.Status != store.DeliveryDelivered {
			t.Fatalf("delivery = %+v", d)
		}
		r := last()
		common(t, r, "/2010-04-01/Accounts/AC123/Calls.json")
		want := `<Response><Say loop="2">API &lt;prod&gt; &amp; co is DOWN: timeout</Say></Response>`
		if r.form.Get("To") != "+14155550100" || r.form.Get("From") != "+15005550006" || r.form.Get("Twiml") != want {
			t.Errorf("form = %v", r.form)
		}
	})
	t.Run("whatsapp", func(t *testing.T) {
		if d := deliver("uid-wa"); d.Status != store.DeliveryDelivered {
			t.Fatalf("delivery = %+v", d)
		}
		r := last()
		common(t, r, "/2010-04-01/Accounts/AC123/Messages.json")
		if r.form.Get("To") != "whatsapp:+4915112345678" || r.form.Get("From") != "whatsapp:+14155238886" {
			t.Errorf("form = %v", r.form)
		}
	})
	t.Run("invalid number fails permanently without a request", func(t *testing.T) {
		ts.mu.Lock()
		before := len(ts.reqs)
		ts.mu.Unlock()
		d := deliver("uid-bad")
		if d.Status != store.DeliveryFailed || d.Attempts != 1 || !strings.Contains(d.LastError, "E.164") {
			t.Errorf("delivery = %+v", d)
		}
		ts.mu.Lock()
		defer ts.mu.Unlock()
		if len(ts.reqs) != before {
			t.Error("an invalid number must not reach the provider")
		}
	})
	t.Run("bad credentials are permanent", func(t *testing.T) {
		w.Twilio.AuthToken = "wrong"
		defer func() { w.Twilio.AuthToken = "tok" }()
		d := deliver("uid-sms")
		if d.Status != store.DeliveryFailed || d.Attempts != 1 {
			t.Errorf("delivery = %+v", d)
		}
		as := h.attempts(d.ID)
		if len(as) != 1 || as[0].StatusCode != 401 || !strings.Contains(as[0].Excerpt, "Authenticate") {
			t.Errorf("attempts = %+v", as)
		}
	})
}
