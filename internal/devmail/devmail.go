// Package devmail is the mail sink of the dev environment: a minimal SMTP
// server on loopback that writes every message it receives into a
// directory as an .eml file, so `make run` shows alert emails, recipient
// confirmations and subscriber mail without a real mail server.
//
// It speaks just enough SMTP (RFC 5321) for the manager's client: HELO or
// EHLO, MAIL, RCPT, DATA (with dot-unstuffing), RSET, NOOP and QUIT, with
// neither TLS nor authentication. It is not for production.
package devmail

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/mail"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"
)

// maxMessageBytes bounds one message.
const maxMessageBytes = 10 << 20

// Sink receives mail on Addr and writes it to Dir.
type Sink struct {
	// Dir receives one .eml file per message.
	Dir string
	// Log, when set, is told about every message.
	Log func(format string, args ...any)

	ln  net.Listener
	seq atomic.Int64
}

// Listen opens the sink on a loopback port.
func (s *Sink) Listen() error {
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return fmt.Errorf("mail directory: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listen for mail: %w", err)
	}
	s.ln = ln
	return nil
}

// Addr is the host:port to send mail to.
func (s *Sink) Addr() string { return s.ln.Addr().String() }

// Serve accepts connections until ctx ends.
func (s *Sink) Serve(ctx context.Context) error {
	go func() {
		<-ctx.Done()
		_ = s.ln.Close()
	}()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		go s.session(c)
	}
}

// session serves one SMTP connection.
func (s *Sink) session(c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	w := bufio.NewWriter(c)
	reply := func(format string, args ...any) bool {
		_ = c.SetWriteDeadline(time.Now().Add(30 * time.Second))
		fmt.Fprintf(w, format+"\r\n", args...)
		return w.Flush() == nil
	}
	var from string
	var to []string
	if !reply("220 uptime-operator dev mail sink") {
		return
	}
	for {
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Minute))
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimRight(line, "\r\n")
		verb := strings.ToUpper(strings.SplitN(line, " ", 2)[0])
		switch verb {
		case "EHLO":
			reply("250-uptime-operator dev mail sink")
			reply("250 SIZE %d", maxMessageBytes)
		case "HELO":
			reply("250 uptime-operator dev mail sink")
		case "MAIL":
			from, to = addressOf(line), nil
			reply("250 OK")
		case "RCPT":
			to = append(to, addressOf(line))
			reply("250 OK")
		case "DATA":
			if len(to) == 0 {
				reply("503 RCPT first")
				continue
			}
			reply("354 end with <CRLF>.<CRLF>")
			msg, err := readData(r)
			if err != nil {
				reply("552 %s", err)
				return
			}
			path, err := s.save(from, to, msg)
			if err != nil {
				reply("451 %s", err)
				continue
			}
			s.logf("mail to %s: %q (%s)", strings.Join(to, ", "), subjectOf(msg), path)
			reply("250 OK")
			from, to = "", nil
		case "RSET":
			from, to = "", nil
			reply("250 OK")
		case "NOOP":
			reply("250 OK")
		case "QUIT":
			reply("221 bye")
			return
		default:
			reply("502 command not implemented")
		}
	}
}

func (s *Sink) logf(format string, args ...any) {
	if s.Log != nil {
		s.Log(format, args...)
	}
}

// readData reads a DATA section up to the lone dot, unstuffing dots.
func readData(r *bufio.Reader) ([]byte, error) {
	var b strings.Builder
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		if line == ".\r\n" || line == ".\n" {
			return []byte(b.String()), nil
		}
		if strings.HasPrefix(line, ".") {
			line = line[1:]
		}
		if b.Len()+len(line) > maxMessageBytes {
			return nil, fmt.Errorf("message larger than %d bytes", maxMessageBytes)
		}
		b.WriteString(line)
	}
}

// save writes msg with the envelope as X- headers in front.
func (s *Sink) save(from string, to []string, msg []byte) (string, error) {
	name := fmt.Sprintf("%s-%04d.eml", time.Now().UTC().Format("20060102T150405Z"), s.seq.Add(1))
	path := filepath.Join(s.Dir, name)
	env := fmt.Sprintf("X-Envelope-From: %s\r\nX-Envelope-To: %s\r\n", from, strings.Join(to, ", "))
	if err := os.WriteFile(path, append([]byte(env), msg...), 0o644); err != nil {
		return "", fmt.Errorf("save message: %w", err)
	}
	return path, nil
}

// addressOf takes the <address> of a MAIL or RCPT line.
func addressOf(line string) string {
	i, j := strings.IndexByte(line, '<'), strings.LastIndexByte(line, '>')
	if i < 0 || j < i {
		return ""
	}
	return line[i+1 : j]
}

// subjectOf is a message's decoded Subject header.
func subjectOf(msg []byte) string {
	m, err := mail.ReadMessage(strings.NewReader(string(msg)))
	if err != nil {
		return ""
	}
	dec := new(mime.WordDecoder)
	if s, err := dec.DecodeHeader(m.Header.Get("Subject")); err == nil {
		return s
	}
	return m.Header.Get("Subject")
}
