package core_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/uptime-operator/uptime-operator/internal/apikeys"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core"
	"github.com/uptime-operator/uptime-operator/internal/apiserver/core/coretest"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// heldWrites is the fixture's SQLite store with its key-use writes held
// until release is closed, as a writer busy with ingest holds them.
type heldWrites struct {
	store.Store
	release chan struct{}
}

func (h heldWrites) TouchAPIKey(ctx context.Context, keyID string, at time.Time) error {
	select {
	case <-h.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	return h.Store.TouchAPIKey(ctx, keyID, at)
}

// TestKeyUseDoesNotHoldRequests: an API-key request is answered while the
// store has not yet written the key's use (the SQLite writer, shared with
// ingest, made each key's first request of a minute wait for it), and the
// use is recorded once the store takes the write.
func TestKeyUseDoesNotHoldRequests(t *testing.T) {
	f := coretest.New(t)
	full, key, err := apikeys.Create(context.Background(), f.K8s, "team", "reader", apikeys.ReadOnly)
	if err != nil {
		t.Fatal(err)
	}
	held := heldWrites{Store: f.Store, release: make(chan struct{})}
	rt := core.NewRouter(f.Deps, core.RouterOptions{Keys: f.K8s, Store: held})
	rt.Handle(http.MethodGet, "/ping", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	req := httptest.NewRequest(http.MethodGet, "/ping", nil)
	req.Header.Set("Authorization", "Bearer "+full)
	done := make(chan int, 1)
	go func() {
		rec := httptest.NewRecorder()
		rt.Mux.ServeHTTP(rec, req)
		done <- rec.Code
	}()
	select {
	case code := <-done:
		if code != http.StatusNoContent {
			t.Fatalf("GET /ping = %d", code)
		}
	case <-time.After(30 * time.Second):
		close(held.release)
		t.Fatal("the request waited for the store to record the key's use")
	}
	close(held.release)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		used, err := f.Store.APIKeyLastUsed(context.Background(), key.ID)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := used[key.ID]; ok {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the key's use was not recorded once the store took the write")
}
