package devmail

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/uptime-operator/uptime-operator/internal/alerting"
)

func TestSinkKeepsWhatTheManagerSends(t *testing.T) {
	dir := t.TempDir()
	var logged []string
	s := &Sink{Dir: filepath.Join(dir, "mail"), Log: func(f string, a ...any) { logged = append(logged, f) }}
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = s.Serve(ctx) }()

	smtp := alerting.SMTP{Addr: s.Addr(), From: "Uptime <uptime@localhost>", TLSMode: "none"}
	body := "line one\n.starts with a dot\nStörung"
	if err := smtp.Send(ctx, alerting.MailMessage{To: []string{"ops@example.com", "dev@example.com"},
		Subject: "Störung: API is DOWN", Text: body}); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "mail", "*.eml"))
	if err != nil || len(files) != 1 {
		t.Fatalf("files %v (%v)", files, err)
	}
	raw, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	for _, want := range []string{"X-Envelope-From: uptime@localhost", "X-Envelope-To: ops@example.com, dev@example.com", "Subject: "} {
		if !strings.Contains(text, want) {
			t.Errorf("message lacks %q:\n%s", want, text)
		}
	}
	if subjectOf([]byte(strings.SplitN(text, "\r\n", 3)[2])) != "Störung: API is DOWN" {
		t.Errorf("subject not decoded from %s", text)
	}
	if !strings.Contains(text, ".starts with a dot") || strings.Contains(text, "\r\n..starts") {
		t.Errorf("dot-stuffing not undone:\n%s", text)
	}
	if len(logged) != 1 {
		t.Errorf("logged %d messages", len(logged))
	}
}
