package probes

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/probeapi"
)

// TestHTTPSessionBehavesLikeNetHTTP covers what net/http's Client did for
// checks before they got their own one-connection exchange: gzip, redirect
// method rules, header overrides, cross-domain redirects, chunked bodies.
func TestHTTPSessionBehavesLikeNetHTTP(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/gzip", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept-Encoding") != "gzip" {
			fmt.Fprint(w, "plain")
			return
		}
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		fmt.Fprint(zw, "compressed hello")
		zw.Close()
	})
	mux.HandleFunc("/see-other", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/method", http.StatusSeeOther)
	})
	mux.HandleFunc("/temporary", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/method", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/method", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s body=%q host=%s ua=%s region=%s conn=%s", r.Method, b, r.Host, r.UserAgent(), r.Header.Get(RegionHeader), r.Header.Get("Connection"))
	})
	mux.HandleFunc("/chunked", func(w http.ResponseWriter, _ *http.Request) {
		for i := range 3 {
			fmt.Fprintf(w, "part%d ", i)
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("/no-location", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusFound)
	})
	ts := httptest.NewServer(mux)
	defer ts.Close()
	// other serves a second "domain": 127.0.0.1 and localhost differ.
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "auth=%q", r.Header.Get("Authorization"))
	}))
	defer other.Close()
	mux.HandleFunc("/away", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, strings.Replace(other.URL, "127.0.0.1", "localhost", 1), http.StatusFound)
	})

	cases := []struct {
		name, path, method, body string
		headers                  map[string]string
		wantBody                 string
		wantCode                 int
	}{
		{name: "gzip is decoded", path: "/gzip", wantBody: "compressed hello"},
		{name: "own Accept-Encoding is passed on", path: "/gzip", headers: map[string]string{"Accept-Encoding": "identity"}, wantBody: "plain"},
		{name: "303 turns POST into GET", path: "/see-other", method: "POST", body: "x", wantBody: `GET body=""`},
		{name: "307 keeps method and body", path: "/temporary", method: "PUT", body: "payload", wantBody: `PUT body="payload"`},
		{name: "Host and User-Agent overrides", path: "/method", headers: map[string]string{"host": "example.test", "User-Agent": "custom/1"},
			wantBody: "GET body=\"\" host=example.test ua=custom/1 region=test conn=close"},
		{name: "default User-Agent", path: "/method", wantBody: "ua=" + userAgent},
		{name: "chunked body", path: "/chunked", wantBody: "part0 part1 part2 "},
		{name: "redirect without Location is the answer", path: "/no-location", wantCode: http.StatusFound},
		{name: "credentials stay on their domain", path: "/away", headers: map[string]string{"Authorization": "Bearer s3cr3t"}, wantBody: `auth=""`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := &httpSession{env: testEnv(), maxRedirects: 5}
			out, err := s.fetch(context.Background(), httpRequest{Method: c.method, URL: ts.URL + c.path, Body: c.body, Headers: c.headers, Region: "test"})
			if err != nil {
				t.Fatal(err)
			}
			if c.wantCode != 0 && out.StatusCode != c.wantCode {
				t.Fatalf("status %d, want %d", out.StatusCode, c.wantCode)
			}
			if !strings.Contains(string(out.Body), c.wantBody) {
				t.Fatalf("body %q, want it to contain %q", out.Body, c.wantBody)
			}
		})
	}
}

func TestHTTPHeaderInjectionRefused(t *testing.T) {
	ts := httptest.NewServer(testMux())
	defer ts.Close()
	res := run(t, httpAssignment(ts.URL+"/text", monv1.HTTPConfig{Headers: probeapi.TextHeaders(map[string]string{"X-A": "1\r\nX-Injected: 2"})}), testEnv())
	if res.Status == probeapi.StatusUp || !strings.Contains(res.ErrorMessage, "invalid header") {
		t.Fatalf("got %s %q, want a refused request", res.Status, res.ErrorMessage)
	}
}

func TestHTTPTimings(t *testing.T) {
	ts := httptest.NewServer(testMux())
	defer ts.Close()
	res := run(t, httpAssignment(ts.URL+"/slow", monv1.HTTPConfig{}), testEnv())
	wantStatus(t, res, probeapi.StatusUp)
	if res.Timings == nil || res.Timings.FirstByteMs < 150 || res.Timings.ConnectMs <= 0 || res.ResponseTimeMs < 150 {
		t.Fatalf("timings %+v, response time %d ms", res.Timings, res.ResponseTimeMs)
	}
}

func TestHTTPDetailsEncoding(t *testing.T) {
	for _, d := range []httpDetails{{}, {FinalURL: "http://a/b?x=<1>&y=é", Redirects: 2, BodyBytes: 15, BodyTruncated: true}} {
		want, _ := json.Marshal(&d)
		if got := d.json(); string(got) != string(want) {
			t.Fatalf("got %s want %s", got, want)
		}
	}
}

func TestHTTPResponseHeadersBounded(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		for i := range 20 {
			w.Header().Set(fmt.Sprintf("X-Big-%d", i), strings.Repeat("a", 4<<10))
		}
		fmt.Fprint(w, "ok")
	}))
	defer ts.Close()
	res := run(t, httpAssignment(ts.URL, monv1.HTTPConfig{}), testEnv())
	if res.Status != probeapi.StatusDown || !strings.Contains(res.ErrorMessage, "headers exceeded") {
		t.Fatalf("got %s %q, want down for oversized headers", res.Status, res.ErrorMessage)
	}
}
