package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
)

// TestLogFormat checks that --log-format json writes JSON lines, console
// writes readable lines, neither puts a stack trace on an error unless
// --zap-stacktrace-level asks for one, and any other format is refused.
func TestLogFormat(t *testing.T) {
	jsonEntry := func(t *testing.T, out string) map[string]any {
		var entry map[string]any
		if err := json.Unmarshal([]byte(strings.SplitN(out, "\n", 2)[0]), &entry); err != nil {
			t.Fatalf("not a JSON line: %v\n%s", err, out)
		}
		if entry["msg"] != "unable to reach" || entry["error"] != "boom" || entry["region"] != "local" {
			t.Errorf("entry %v: want msg, error and region", entry)
		}
		return entry
	}
	for _, tc := range []struct {
		args  []string
		check func(t *testing.T, out string)
	}{
		{[]string{"--log-format", LogJSON}, func(t *testing.T, out string) {
			if entry := jsonEntry(t, out); entry["stacktrace"] != nil {
				t.Errorf("entry %v: an operational error carries no stack trace by default", entry)
			}
		}},
		{[]string{"--log-format", LogJSON, "--zap-stacktrace-level", "error"}, func(t *testing.T, out string) {
			if entry := jsonEntry(t, out); entry["stacktrace"] == nil {
				t.Errorf("entry %v: --zap-stacktrace-level error asks for a stack trace", entry)
			}
		}},
		{[]string{"--log-format", LogConsole}, func(t *testing.T, out string) {
			if strings.HasPrefix(out, "{") || strings.Count(strings.TrimSpace(out), "\n") != 0 {
				t.Fatalf("want one readable line, got:\n%s", out)
			}
			for _, want := range []string{"ERROR", "test", "unable to reach", `"error": "boom"`, `"region": "local"`} {
				if !strings.Contains(out, want) {
					t.Errorf("line %q lacks %q", out, want)
				}
			}
			if strings.Contains(out, ".go:") && strings.Contains(out, "\n\t") {
				t.Errorf("console lines carry no stack trace:\n%s", out)
			}
		}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			fs := newFlagSet("test", io.Discard)
			logs := bindLogFlags(fs, LogConsole)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			log, err := logs.logger(&buf)
			if err != nil {
				t.Fatal(err)
			}
			log.WithName("test").Error(errors.New("boom"), "unable to reach", "region", "local")
			tc.check(t, buf.String())
		})
	}
	fs := newFlagSet("test", io.Discard)
	logs := bindLogFlags(fs, LogJSON)
	if err := fs.Parse([]string{"--log-format", "text"}); err != nil {
		t.Fatal(err)
	}
	if _, err := logs.logger(io.Discard); err == nil || !strings.Contains(err.Error(), "--log-format") {
		t.Errorf("--log-format text: err = %v, want a refusal naming the flag", err)
	}
}

// TestManagerLogFormatFlag checks that the manager and the probe agent take
// --log-format and refuse a bad value before doing anything else.
func TestManagerLogFormatFlag(t *testing.T) {
	for _, args := range [][]string{
		{"manager", "--log-format", "xml"},
		{"probe", "--region", "r", "--server", "http://127.0.0.1:1", "--log-format", "xml"},
	} {
		err := Main(t.Context(), args, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "--log-format must be json or console") {
			t.Errorf("%v: err = %v", args, err)
		}
	}
}

// TestCheckListeners checks that a port in use is reported with the flag
// that names it, before anything starts.
func TestCheckListeners(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	freeAddr := free.Addr().String()
	free.Close()
	if err := checkListeners([]listener{{"--api-listen", freeAddr, ""}}); err != nil {
		t.Errorf("free address: %v", err)
	}
	err = checkListeners([]listener{{"--api-listen", freeAddr, ""}, {"--aggregated-listen", busy.Addr().String(), ""}})
	if err == nil || !strings.Contains(err.Error(), "--aggregated-listen "+busy.Addr().String()+": the address is already in use") {
		t.Errorf("busy address: err = %v", err)
	}
}
