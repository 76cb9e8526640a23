package core

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/uptime-operator/uptime-operator/internal/apikeys"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/store/sqlite"
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
	sch := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(sch)
	k8s := fake.NewClientBuilder().WithScheme(sch).Build()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "h.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	full, key, err := apikeys.Create(context.Background(), k8s, "team", "reader", apikeys.ReadOnly)
	if err != nil {
		t.Fatal(err)
	}
	held := heldWrites{Store: st, release: make(chan struct{})}
	rt := NewRouter(&Deps{Client: k8s, Reader: k8s, Clock: clock.RealClock{}}, RouterOptions{Keys: k8s, Store: held})
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
		used, err := st.APIKeyLastUsed(context.Background(), key.ID)
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
