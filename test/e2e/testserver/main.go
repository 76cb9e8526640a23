// Command testserver is the workload of the end-to-end suite (test/e2e),
// built into a small image of its own. One Pod of it is the monitored
// target, another the webhook receiver:
//
//   - GET / answers 200 "ok" while healthy and 503 after POST /fail, until
//     POST /recover: the suite makes the target go down and come back.
//   - POST /hooks/uptime receives a webhook channel's deliveries and checks
//     each signature with the verifier of docs/alerting.md (HMAC-SHA256 over
//     timestamp + "." + body, with WEBHOOK_SECRET, within 5 minutes).
//     GET /deliveries lists what arrived, with the check's verdict, so the
//     suite can tell that a signed monitor.down reached a Pod in the cluster.
//     Between POST /hooks/hold and POST /hooks/release every delivery is
//     answered 503 with Retry-After: 30 (and listed with refused true), so
//     the suite can keep deliveries in flight across an upgrade.
//   - With TLS_CERT_FILE and TLS_KEY_FILE set, the same handlers are also
//     served over HTTPS on TLS_LISTEN (default :8443): webhook channels
//     accept https:// URLs only, so the receiver serves a certificate from
//     the suite's test CA, which the chart's trustedCA makes the manager trust.
//   - GET /ws is a WebSocket endpoint that echoes every message (websocket
//     monitors), and GRPC_LISTEN (default :9090) serves the standard gRPC
//     health service in plaintext, SERVING for the whole server and for
//     "e2e.Target" (grpc monitors); both follow /fail and /recover.
package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log"
	"math"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// verified reports whether r carries a valid signature of body under secret
// (docs/alerting.md, "Receiving webhooks").
func verified(r *http.Request, body, secret []byte) bool {
	ts, err := strconv.ParseInt(r.Header.Get("X-Service-Timestamp"), 10, 64)
	if err != nil || math.Abs(float64(time.Now().Unix()-ts)) > 300 {
		return false
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(strconv.FormatInt(ts, 10) + "."))
	mac.Write(body)
	want := "sha256=" + hex.EncodeToString(mac.Sum(nil))
	return hmac.Equal([]byte(want), []byte(r.Header.Get("X-Service-Signature")))
}

// Delivery is one request received on /hooks/uptime.
type Delivery struct {
	ID       string          `json:"id"`
	Verified bool            `json:"verified"`
	Refused  bool            `json:"refused,omitempty"`
	Body     json.RawMessage `json:"body"`
	Received time.Time       `json:"received"`
}

func main() {
	secret := []byte(os.Getenv("WEBHOOK_SECRET"))
	listen := os.Getenv("LISTEN")
	if listen == "" {
		listen = ":8080"
	}
	var failing, holding atomic.Bool
	var mu sync.Mutex
	var deliveries []Delivery

	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		if failing.Load() {
			http.Error(w, "failing on purpose", http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "ok\n")
	})
	// /app renders its content with JavaScript only, as single-page apps
	// do: the HTML alone answers 200 without the text a browser check
	// waits for.
	mux.HandleFunc("GET /app", func(w http.ResponseWriter, r *http.Request) {
		if failing.Load() {
			http.Error(w, "failing on purpose", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, `<!doctype html><title>E2E app</title><main id="app"></main>
<script>setTimeout(function () {
  var h = document.createElement("h1"); h.id = "ready"; h.textContent = "Storefront ready";
  document.getElementById("app").appendChild(h);
}, 300);</script>`)
	})
	mux.HandleFunc("GET /ws", func(w http.ResponseWriter, r *http.Request) {
		if failing.Load() {
			http.Error(w, "failing on purpose", http.StatusServiceUnavailable)
			return
		}
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		for {
			typ, msg, err := c.Read(r.Context())
			if err != nil {
				return
			}
			if err := c.Write(r.Context(), typ, msg); err != nil {
				return
			}
		}
	})
	healthSrv := health.NewServer()
	setHealth := func(serving bool) {
		st := healthpb.HealthCheckResponse_SERVING
		if !serving {
			st = healthpb.HealthCheckResponse_NOT_SERVING
		}
		healthSrv.SetServingStatus("", st)
		healthSrv.SetServingStatus("e2e.Target", st)
	}
	setHealth(true)
	go serveGRPC(healthSrv)
	mux.HandleFunc("POST /fail", func(w http.ResponseWriter, r *http.Request) {
		failing.Store(true)
		setHealth(false)
		log.Print("testserver: failing")
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /recover", func(w http.ResponseWriter, r *http.Request) {
		failing.Store(false)
		setHealth(true)
		log.Print("testserver: healthy")
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /hooks/uptime", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		ok := len(secret) > 0 && verified(r, body, secret)
		d := Delivery{ID: r.Header.Get("X-Service-Delivery"), Verified: ok, Refused: ok && holding.Load(), Received: time.Now().UTC()}
		if json.Valid(body) {
			d.Body = body
		}
		mu.Lock()
		deliveries = append(deliveries, d)
		mu.Unlock()
		log.Printf("testserver: delivery %s verified=%v %s", d.ID, ok, body)
		if !ok {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		if d.Refused {
			w.Header().Set("Retry-After", "30")
			http.Error(w, "holding deliveries", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /hooks/hold", func(w http.ResponseWriter, r *http.Request) {
		holding.Store(true)
		log.Print("testserver: holding deliveries")
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /hooks/release", func(w http.ResponseWriter, r *http.Request) {
		holding.Store(false)
		log.Print("testserver: accepting deliveries")
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /deliveries", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(deliveries)
	})
	if cert, key := os.Getenv("TLS_CERT_FILE"), os.Getenv("TLS_KEY_FILE"); cert != "" && key != "" {
		tlsListen := os.Getenv("TLS_LISTEN")
		if tlsListen == "" {
			tlsListen = ":8443"
		}
		go func() {
			log.Printf("testserver: listening on %s (TLS)", tlsListen)
			log.Fatal(http.ListenAndServeTLS(tlsListen, cert, key, mux))
		}()
	}
	log.Printf("testserver: listening on %s", listen)
	log.Fatal(http.ListenAndServe(listen, mux))
}

// serveGRPC serves the health service on GRPC_LISTEN (default :9090).
func serveGRPC(hs *health.Server) {
	listen := os.Getenv("GRPC_LISTEN")
	if listen == "" {
		listen = ":9090"
	}
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", listen)
	if err != nil {
		log.Fatal(err)
	}
	srv := grpc.NewServer()
	healthpb.RegisterHealthServer(srv, hs)
	log.Printf("testserver: gRPC health on %s", listen)
	log.Fatal(srv.Serve(ln))
}
