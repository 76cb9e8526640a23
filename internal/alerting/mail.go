package alerting

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/smtp"
	"net/textproto"
	"strings"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/alertevent"
	"github.com/uptime-operator/uptime-operator/internal/trust"
)

// TLS modes of the SMTP client.
const (
	// SMTPTLSOpportunistic upgrades with STARTTLS when the server offers it
	// and sends in the clear otherwise (the default).
	SMTPTLSOpportunistic = "opportunistic"
	// SMTPTLSStartTLS requires STARTTLS; a server that does not offer it is
	// an error.
	SMTPTLSStartTLS = "starttls"
	// SMTPTLSImplicit connects with TLS from the first byte (port 465).
	SMTPTLSImplicit = "tls"
	// SMTPTLSNone never uses TLS (a local relay).
	SMTPTLSNone = "none"
)

// SMTP configures the email sender: alert emails of email channels,
// escalation emails and the owner's failing-connection notice.
type SMTP struct {
	// Addr is the server's host:port.
	Addr string
	// From is the envelope and header sender address.
	From string
	// Username and Password enable AUTH PLAIN. net/smtp refuses to send them
	// over an unencrypted connection to anything but localhost.
	Username, Password string
	// TLSMode is one of opportunistic (default), starttls, tls or none.
	TLSMode string
	// TLSConfig overrides the TLS settings (server name and roots); tests
	// trust their own certificate through it.
	TLSConfig *tls.Config
	// HelloName is the EHLO name (localhost when empty).
	HelloName string
}

// MailMessage is one plain-text email.
type MailMessage struct {
	To      []string
	Subject string
	Text    string
}

// SMTPError is a reply of the server that ended a send. Codes 4xx are
// transient and retried; 5xx are permanent.
type SMTPError struct {
	Code int
	Msg  string
}

func (e *SMTPError) Error() string { return fmt.Sprintf("smtp %d %s", e.Code, e.Msg) }

// Send delivers msg over SMTP within ctx's deadline: it connects, upgrades
// with STARTTLS as TLSMode says, authenticates when credentials are set,
// and sends one message to every recipient.
func (s SMTP) Send(ctx context.Context, msg MailMessage) error {
	if s.Addr == "" {
		return permanent("no SMTP server is configured")
	}
	from, err := mail.ParseAddress(s.From)
	if err != nil {
		return permanent("invalid sender address %q", s.From)
	}
	var rcpts []string
	for _, to := range msg.To {
		a, err := mail.ParseAddress(to)
		if err != nil {
			return permanent("invalid recipient address %q", to)
		}
		rcpts = append(rcpts, a.Address)
	}
	if len(rcpts) == 0 {
		return permanent("the email has no recipients")
	}
	host, _, err := net.SplitHostPort(s.Addr)
	if err != nil {
		return permanent("invalid SMTP address %q", s.Addr)
	}
	tlsCfg := s.tlsConfig(host)

	d := net.Dialer{Timeout: alertevent.AttemptTimeout}
	var conn net.Conn
	if s.TLSMode == SMTPTLSImplicit {
		conn, err = (&tls.Dialer{NetDialer: &d, Config: tlsCfg}).DialContext(ctx, "tcp", s.Addr)
	} else {
		conn, err = d.DialContext(ctx, "tcp", s.Addr)
	}
	if err != nil {
		return fmt.Errorf("connect to smtp server: %w", err)
	}
	// net/smtp has no context: the deadline bounds the whole dialogue, and
	// cancellation closes the connection.
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()

	c, err := smtp.NewClient(conn, host)
	if err != nil {
		_ = conn.Close()
		return smtpErr("greeting", err)
	}
	defer c.Close()
	hello := s.HelloName
	if hello == "" {
		hello = "localhost"
	}
	if err := c.Hello(hello); err != nil {
		return smtpErr("EHLO", err)
	}
	if s.TLSMode != SMTPTLSImplicit && s.TLSMode != SMTPTLSNone {
		if ok, _ := c.Extension("STARTTLS"); ok {
			if err := c.StartTLS(tlsCfg); err != nil {
				return smtpErr("STARTTLS", err)
			}
		} else if s.TLSMode == SMTPTLSStartTLS {
			return permanent("the SMTP server does not offer STARTTLS")
		}
	}
	if s.Username != "" {
		if ok, _ := c.Extension("AUTH"); !ok {
			return permanent("the SMTP server does not offer AUTH")
		}
		if err := c.Auth(smtp.PlainAuth("", s.Username, s.Password, host)); err != nil {
			return smtpErr("AUTH", err)
		}
	}
	if err := c.Mail(from.Address); err != nil {
		return smtpErr("MAIL FROM", err)
	}
	for _, r := range rcpts {
		if err := c.Rcpt(r); err != nil {
			return smtpErr("RCPT TO", err)
		}
	}
	wc, err := c.Data()
	if err != nil {
		return smtpErr("DATA", err)
	}
	if _, err := wc.Write(buildMessage(from, rcpts, msg, time.Now())); err != nil {
		_ = wc.Close()
		return smtpErr("DATA", err)
	}
	if err := wc.Close(); err != nil {
		return smtpErr("DATA", err)
	}
	// The message is accepted once DATA ends; a failed QUIT changes nothing.
	_ = c.Quit()
	return nil
}

func (s SMTP) tlsConfig(host string) *tls.Config {
	if s.TLSConfig != nil {
		cfg := s.TLSConfig.Clone()
		if cfg.ServerName == "" {
			cfg.ServerName = host
		}
		return cfg
	}
	return &tls.Config{ServerName: host, RootCAs: trust.Roots(), MinVersion: tls.VersionTLS12}
}

// smtpErr names the step that failed; server replies become *SMTPError
// (5xx permanent, 4xx retried).
func smtpErr(step string, err error) error {
	var te *textproto.Error
	if errors.As(err, &te) {
		return fmt.Errorf("smtp %s: %w", step, &SMTPError{Code: te.Code, Msg: te.Msg})
	}
	return fmt.Errorf("smtp %s: %w", step, err)
}

// buildMessage renders an RFC 5322 message: UTF-8 plain text, quoted-printable,
// with the subject encoded when it is not ASCII. Header values never carry
// line breaks from the input.
func buildMessage(from *mail.Address, to []string, msg MailMessage, now time.Time) []byte {
	var b bytes.Buffer
	oneLine := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	header := func(k, v string) { b.WriteString(k + ": " + v + "\r\n") }
	header("From", from.String())
	header("To", strings.Join(to, ", "))
	header("Subject", mime.QEncoding.Encode("utf-8", oneLine(msg.Subject)))
	header("Date", now.UTC().Format(time.RFC1123Z))
	header("Message-ID", "<"+randomHex(16)+"@"+domainOf(from.Address)+">")
	header("MIME-Version", "1.0")
	header("Content-Type", "text/plain; charset=utf-8")
	header("Content-Transfer-Encoding", "quoted-printable")
	header("Auto-Submitted", "auto-generated")
	b.WriteString("\r\n")
	qp := quotedprintable.NewWriter(&b)
	_, _ = qp.Write([]byte(strings.ReplaceAll(strings.ReplaceAll(msg.Text, "\r\n", "\n"), "\n", "\r\n")))
	_ = qp.Close()
	return b.Bytes()
}

func domainOf(addr string) string {
	if i := strings.LastIndexByte(addr, '@'); i >= 0 {
		return addr[i+1:]
	}
	return "localhost"
}

func randomHex(n int) string {
	buf := make([]byte, n)
	_, _ = rand.Read(buf)
	return hex.EncodeToString(buf)
}
