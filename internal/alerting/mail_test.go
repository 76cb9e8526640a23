package alerting

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"io"
	"math/big"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/textproto"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/alertevent"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// smtpServer is a loopback SMTP server that speaks enough of the protocol
// for the client: EHLO/HELO, STARTTLS (self-signed certificate), AUTH
// PLAIN, MAIL FROM, RCPT TO, DATA, RSET, NOOP and QUIT.
type smtpServer struct {
	ln       net.Listener
	cert     tls.Certificate
	roots    *x509.CertPool
	offerTLS bool
	// user and pass, when set, are the only credentials AUTH PLAIN takes.
	user, pass string
	// rcptReply answers RCPT TO when set (e.g. "550 5.1.1 no such user").
	rcptReply string

	mu   sync.Mutex
	msgs []smtpMsg
}

type smtpMsg struct {
	from   string
	to     []string
	data   []byte
	tls    bool
	authed string
}

func newSMTPServer(t *testing.T) *smtpServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &smtpServer{ln: ln, offerTLS: true}
	s.cert, s.roots = selfSigned(t)
	go s.serve()
	t.Cleanup(func() { _ = ln.Close() })
	return s
}

func (s *smtpServer) addr() string { return s.ln.Addr().String() }

func (s *smtpServer) messages() []smtpMsg {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]smtpMsg(nil), s.msgs...)
}

func (s *smtpServer) serve() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		go s.handle(c)
	}
}

func (s *smtpServer) handle(raw net.Conn) {
	defer raw.Close()
	_ = raw.SetDeadline(time.Now().Add(10 * time.Second))
	conn := raw
	tp := textproto.NewConn(conn)
	reply := func(line string) { _ = tp.PrintfLine("%s", line) }
	reply("220 test.local ESMTP ready")
	var cur smtpMsg
	tlsOn, authed := false, ""
	for {
		line, err := tp.ReadLine()
		if err != nil {
			return
		}
		verb, arg, _ := strings.Cut(line, " ")
		switch strings.ToUpper(verb) {
		case "EHLO":
			lines := []string{"250-test.local"}
			if s.offerTLS && !tlsOn {
				lines = append(lines, "250-STARTTLS")
			}
			if s.user != "" {
				lines = append(lines, "250-AUTH PLAIN")
			}
			lines = append(lines, "250 8BITMIME")
			for _, l := range lines {
				reply(l)
			}
		case "HELO", "NOOP", "RSET":
			reply("250 OK")
		case "STARTTLS":
			if !s.offerTLS || tlsOn {
				reply("502 not available")
				continue
			}
			reply("220 go ahead")
			tc := tls.Server(raw, &tls.Config{Certificates: []tls.Certificate{s.cert}})
			if err := tc.Handshake(); err != nil {
				return
			}
			conn, tlsOn = tc, true
			tp = textproto.NewConn(conn)
			reply = func(line string) { _ = tp.PrintfLine("%s", line) }
		case "AUTH":
			mech, resp, _ := strings.Cut(arg, " ")
			dec, err := base64.StdEncoding.DecodeString(resp)
			parts := strings.Split(string(dec), "\x00")
			if strings.ToUpper(mech) != "PLAIN" || err != nil || len(parts) != 3 || parts[1] != s.user || parts[2] != s.pass {
				reply("535 5.7.8 authentication failed")
				continue
			}
			authed = parts[1]
			reply("235 2.7.0 authenticated")
		case "MAIL":
			if s.user != "" && authed == "" {
				reply("530 5.7.0 authentication required")
				continue
			}
			cur = smtpMsg{from: addrArg(arg), tls: tlsOn, authed: authed}
			reply("250 OK")
		case "RCPT":
			if s.rcptReply != "" {
				reply(s.rcptReply)
				continue
			}
			cur.to = append(cur.to, addrArg(arg))
			reply("250 OK")
		case "DATA":
			reply("354 end with <CRLF>.<CRLF>")
			data, err := tp.ReadDotBytes()
			if err != nil {
				return
			}
			cur.data = data
			s.mu.Lock()
			s.msgs = append(s.msgs, cur)
			s.mu.Unlock()
			reply("250 2.0.0 queued")
		case "QUIT":
			reply("221 bye")
			return
		default:
			reply("500 unknown command")
		}
	}
}

// addrArg extracts the address of "FROM:<a@b>" or "TO:<a@b>".
func addrArg(arg string) string {
	_, v, _ := strings.Cut(arg, ":")
	v, _, _ = strings.Cut(strings.TrimSpace(v), " ")
	return strings.Trim(v, "<>")
}

// selfSigned makes a certificate for 127.0.0.1 and a pool that trusts it.
func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test.local"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

// parseMail reads a received message and its decoded body.
func parseMail(t *testing.T, data []byte) (*mail.Message, string) {
	t.Helper()
	m, err := mail.ReadMessage(bufio.NewReader(strings.NewReader(string(data))))
	if err != nil {
		t.Fatalf("message does not parse: %v\n%s", err, data)
	}
	var body io.Reader = m.Body
	if m.Header.Get("Content-Transfer-Encoding") == "quoted-printable" {
		body = quotedprintable.NewReader(m.Body)
	}
	b, err := io.ReadAll(body)
	if err != nil {
		t.Fatal(err)
	}
	return m, string(b)
}

func TestEmailChannelOverSMTP(t *testing.T) {
	srv := newSMTPServer(t)
	srv.user, srv.pass = "alerts", "s3cret"
	ch := channel("mail", monv1.ChannelEmail, nil)
	ch.Spec.Emails = []string{"ops@example.com", "oncall@example.com"}
	h := newHarness(t, ch)
	w := h.worker("a")
	w.SMTP = &SMTP{Addr: srv.addr(), From: "Uptime <alerts@uptime.example>", Username: "alerts", Password: "s3cret",
		TLSConfig: &tls.Config{RootCAs: srv.roots}}
	p, _ := alertevent.NewIncidentPayload(alertevent.MonitorDown, alertevent.IncidentFacts{MonitorName: "Checkout API", IncidentID: "inc-1",
		Reason: "connection refused", StartedAt: time.Now()})
	ev, _ := newEvent("team", alertevent.MonitorDown, p, []string{"uid-mail"})
	if err := h.st.EnqueueEvents(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	if _, err := w.ProcessDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	ds, _ := h.st.ListDeliveries(context.Background(), store.DeliveryQuery{EventID: ev.ID})
	if len(ds) != 1 || ds[0].Status != store.DeliveryDelivered {
		t.Fatalf("delivery = %+v", ds)
	}
	msgs := srv.messages()
	if len(msgs) != 1 {
		t.Fatalf("server received %d messages", len(msgs))
	}
	got := msgs[0]
	if !got.tls || got.authed != "alerts" {
		t.Errorf("tls = %v, authenticated as %q; want STARTTLS and AUTH PLAIN", got.tls, got.authed)
	}
	if got.from != "alerts@uptime.example" || strings.Join(got.to, ",") != "ops@example.com,oncall@example.com" {
		t.Errorf("envelope from %q to %v", got.from, got.to)
	}
	m, body := parseMail(t, got.data)
	if s := m.Header.Get("Subject"); s != "Checkout API is DOWN" {
		t.Errorf("Subject = %q", s)
	}
	if f := m.Header.Get("From"); !strings.Contains(f, "alerts@uptime.example") {
		t.Errorf("From = %q", f)
	}
	if to := m.Header.Get("To"); !strings.Contains(to, "ops@example.com") || !strings.Contains(to, "oncall@example.com") {
		t.Errorf("To = %q", to)
	}
	for _, k := range []string{"Date", "Message-Id", "Mime-Version"} {
		if m.Header.Get(k) == "" {
			t.Errorf("header %s missing", k)
		}
	}
	if !strings.HasPrefix(m.Header.Get("Content-Type"), "text/plain; charset=utf-8") {
		t.Errorf("Content-Type = %q", m.Header.Get("Content-Type"))
	}
	if !strings.Contains(body, "Checkout API is DOWN") || !strings.Contains(body, "Reason: connection refused") {
		t.Errorf("body = %q", body)
	}
	eventually(t, func() bool { return h.channel("mail").Status.LastDeliveryAt != nil })
}

// gate confirms the addresses in it.
type gate map[string]bool

func (g gate) Allowed(_ context.Context, _ string, emails []string) (allowed, held []string, err error) {
	for _, e := range emails {
		if g[strings.ToLower(e)] {
			allowed = append(allowed, e)
		} else {
			held = append(held, e)
		}
	}
	return allowed, held, nil
}

func TestUnconfirmedRecipientsAreHeldBack(t *testing.T) {
	srv := newSMTPServer(t)
	ch := channel("mail", monv1.ChannelEmail, nil)
	ch.Spec.Emails = []string{"ops@example.com", "stranger@example.com"}
	h := newHarness(t, ch)
	w := h.worker("a")
	w.SMTP = &SMTP{Addr: srv.addr(), From: "alerts@uptime.example", TLSConfig: &tls.Config{RootCAs: srv.roots}}
	w.Recipients = gate{"ops@example.com": true}
	p, _ := alertevent.NewIncidentPayload(alertevent.MonitorDown, alertevent.IncidentFacts{MonitorName: "api", IncidentID: "inc-1", StartedAt: time.Now()})
	ev, _ := newEvent("team", alertevent.MonitorDown, p, []string{"uid-mail", EmailTargetPrefix + "Ops@example.com", EmailTargetPrefix + "new@example.com"})
	if err := h.st.EnqueueEvents(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	if _, err := w.ProcessDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	var to []string
	for _, m := range srv.messages() {
		to = append(to, strings.Join(m.to, ","))
	}
	slices.Sort(to)
	if want := []string{"Ops@example.com", "ops@example.com"}; !slices.Equal(to, want) {
		t.Errorf("mail went to %v, want %v (the channel's confirmed address and the confirmed recipient)", to, want)
	}
	ds, _ := h.st.ListDeliveries(context.Background(), store.DeliveryQuery{EventID: ev.ID})
	if len(ds) != 3 {
		t.Fatalf("%d deliveries, want 3", len(ds))
	}
	for _, d := range ds {
		switch d.ChannelID {
		case EmailTargetPrefix + "new@example.com":
			if d.Status != store.DeliveryFailed || !strings.Contains(d.LastError, "has not confirmed") {
				t.Errorf("unconfirmed recipient: %s %q, want failed with a reason", d.Status, d.LastError)
			}
		default:
			if d.Status != store.DeliveryDelivered {
				t.Errorf("%s: %s %q, want delivered", d.ChannelID, d.Status, d.LastError)
			}
		}
	}
}

func TestSMTPModes(t *testing.T) {
	msg := MailMessage{To: []string{"ops@example.com"}, Subject: "Störung: API is DOWN\r\nBcc: evil@example.com", Text: "line 1\nline 2"}
	t.Run("plain when STARTTLS is not offered", func(t *testing.T) {
		srv := newSMTPServer(t)
		srv.offerTLS = false
		if err := (SMTP{Addr: srv.addr(), From: "alerts@uptime.example"}).Send(context.Background(), msg); err != nil {
			t.Fatal(err)
		}
		got := srv.messages()
		if len(got) != 1 || got[0].tls {
			t.Fatalf("messages = %+v", got)
		}
		m, body := parseMail(t, got[0].data)
		dec, err := new(mime.WordDecoder).DecodeHeader(m.Header.Get("Subject"))
		if err != nil || dec != "Störung: API is DOWN Bcc: evil@example.com" {
			t.Errorf("subject = %q (%v); line breaks must not start new headers", dec, err)
		}
		if m.Header.Get("Bcc") != "" {
			t.Error("header injection through the subject")
		}
		if strings.TrimRight(body, "\r\n") != "line 1\nline 2" {
			t.Errorf("body = %q", body)
		}
	})
	t.Run("starttls required but not offered", func(t *testing.T) {
		srv := newSMTPServer(t)
		srv.offerTLS = false
		err := (SMTP{Addr: srv.addr(), From: "alerts@uptime.example", TLSMode: SMTPTLSStartTLS}).Send(context.Background(), msg)
		if err == nil || !isPermanent(err) || len(srv.messages()) != 0 {
			t.Fatalf("err = %v, messages %d", err, len(srv.messages()))
		}
	})
	t.Run("untrusted certificate", func(t *testing.T) {
		srv := newSMTPServer(t)
		err := (SMTP{Addr: srv.addr(), From: "alerts@uptime.example"}).Send(context.Background(), msg)
		if err == nil || len(srv.messages()) != 0 {
			t.Fatalf("a certificate that does not verify must fail the send: %v", err)
		}
	})
	t.Run("wrong password is permanent", func(t *testing.T) {
		srv := newSMTPServer(t)
		srv.user, srv.pass = "alerts", "right"
		err := (SMTP{Addr: srv.addr(), From: "alerts@uptime.example", Username: "alerts", Password: "wrong",
			TLSConfig: &tls.Config{RootCAs: srv.roots}}).Send(context.Background(), msg)
		if err == nil || !isPermanent(err) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("4xx is retried, 5xx is not", func(t *testing.T) {
		for reply, perm := range map[string]bool{"451 4.3.0 try later": false, "550 5.1.1 no such user": true} {
			srv := newSMTPServer(t)
			srv.offerTLS, srv.rcptReply = false, reply
			res := sendMail(context.Background(), &SMTP{Addr: srv.addr(), From: "alerts@uptime.example"}, msg)
			want := alertevent.Retryable
			if perm {
				want = alertevent.Permanent
			}
			if res.outcome != want || res.status != atoiPrefix(reply) {
				t.Errorf("%s: outcome %s status %d, want %s", reply, res.outcome, res.status, want)
			}
		}
	})
	t.Run("connection refused is retried", func(t *testing.T) {
		ln, _ := net.Listen("tcp", "127.0.0.1:0")
		addr := ln.Addr().String()
		_ = ln.Close()
		res := sendMail(context.Background(), &SMTP{Addr: addr, From: "alerts@uptime.example"}, msg)
		if res.outcome != alertevent.Retryable {
			t.Errorf("outcome %s (%v)", res.outcome, res.err)
		}
	})
	t.Run("bad recipient is permanent", func(t *testing.T) {
		res := sendMail(context.Background(), &SMTP{Addr: "127.0.0.1:1", From: "alerts@uptime.example"},
			MailMessage{To: []string{"not an address"}, Subject: "x"})
		if res.outcome != alertevent.Permanent {
			t.Errorf("outcome %s (%v)", res.outcome, res.err)
		}
	})
}

func atoiPrefix(s string) int {
	n := 0
	for _, c := range s[:3] {
		n = n*10 + int(c-'0')
	}
	return n
}
