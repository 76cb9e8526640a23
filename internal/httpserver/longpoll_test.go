package httpserver_test

import (
	"encoding/json"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/httpserver"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

// TestProbeLongPollOutlivesTheReadTimeout (issue 27 row 7): the probe API's
// assignments long poll, served with a read timeout much shorter than its
// wait, still answers: with the new list when it changes during the wait,
// with 304 when the wait ends first.
func TestProbeLongPollOutlivesTheReadTimeout(t *testing.T) {
	limits := httpserver.Limits{ReadTimeout: 200 * time.Millisecond, IdleTimeout: 200 * time.Millisecond}
	mem := &probeapi.MemoryServer{Region: "eu", Token: "secret"}
	mem.SetAssignments("eu", nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httpserver.New(probeapi.NewHandler(mem), limits)
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	base := "http://" + ln.Addr().String() + probeapi.PathAssignments + "?region=eu"

	get := func(url string) (*http.Response, error) {
		req, err := http.NewRequest(http.MethodGet, url, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer secret")
		return http.DefaultClient.Do(req)
	}
	changeAfter := 5 * limits.ReadTimeout
	go func() {
		time.Sleep(changeAfter)
		mem.SetAssignments("eu", []probeapi.Assignment{{ID: "m-1"}})
	}()
	start := time.Now()
	resp, err := get(base + "&revision=1&wait=30s")
	if err != nil {
		t.Fatal(err)
	}
	var list probeapi.AssignmentList
	err = json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || err != nil || list.Revision != "2" {
		t.Fatalf("long poll across a change: %d %+v (%v)", resp.StatusCode, list, err)
	}
	if took := time.Since(start); took < changeAfter {
		t.Fatalf("the poll answered after %s, before the change", took)
	}

	resp, err = get(base + "&revision=2&wait=1s")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotModified {
		t.Fatalf("long poll without a change: %d, want 304", resp.StatusCode)
	}
}
