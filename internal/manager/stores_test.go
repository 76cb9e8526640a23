package manager

import (
	"reflect"
	"testing"

	"github.com/uptime-operator/uptime-operator/internal/store"
)

// TestConsumerStoresAreNarrow checks that every consumer's store interface
// is a strict part of store.Store: one that grew back into the whole store
// fails. With -v it prints each interface's size against the store's, the
// table in docs/architecture.md.
func TestConsumerStoresAreNarrow(t *testing.T) {
	full := reflect.TypeFor[store.Store]()
	t.Logf("%-28s %s", "interface", "methods")
	t.Logf("%-28s %d", full, full.NumMethod())
	for _, c := range consumerStores {
		if c.NumMethod() >= full.NumMethod() {
			t.Errorf("%s has %d methods, as many as store.Store: it is not narrow", c, c.NumMethod())
		}
		t.Logf("%-28s %d", c, c.NumMethod())
	}
}
