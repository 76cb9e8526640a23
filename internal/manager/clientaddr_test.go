package manager_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/apikeys"
	"github.com/uptime-operator/uptime-operator/internal/testenv"
)

// TestTrustedProxiesReachEveryRoute: the manager's direct listener resolves
// client addresses with its --trusted-proxies setting, so behind the proxy
// one client's invalid keys block that client only.
func TestTrustedProxiesReachEveryRoute(t *testing.T) {
	// The package's manager trusts the loopback as a proxy (TestMain).
	env := testenv.Use(t, env)
	ctx := context.Background()
	key, _, err := apikeys.Create(ctx, env.Client, env.Namespace(t, nil), "ci", apikeys.Standard)
	if err != nil {
		t.Fatal(err)
	}
	h := env.Manager.Handler()
	do := func(client, key string) int {
		r := httptest.NewRequest(http.MethodGet, "/automation/whoami", nil)
		r.RemoteAddr = "127.0.0.1:40000"
		r.Header.Set("X-Forwarded-For", client)
		r.Header.Set("Authorization", "Bearer "+key)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	deadline := time.Now().Add(30 * time.Second)
	for do("198.51.100.7", key) != http.StatusOK {
		if time.Now().After(deadline) {
			t.Fatal("the key never authenticated")
		}
		time.Sleep(200 * time.Millisecond)
	}
	bad := "sk_" + strings.Repeat("z", 43)
	for range 100 {
		do("203.0.113.66", bad)
	}
	if code := do("203.0.113.66", key); code != http.StatusTooManyRequests {
		t.Fatalf("client with 100 invalid keys: %d, want 429", code)
	}
	if code := do("198.51.100.7", key); code != http.StatusOK {
		t.Fatalf("another client behind the same proxy: %d, want 200", code)
	}
}
