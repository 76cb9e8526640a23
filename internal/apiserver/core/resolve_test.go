package core

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

// countingReader counts the lists that reach the API server.
type countingReader struct {
	client.Reader
	lists int
}

func (c *countingReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	c.lists++
	return c.Reader.List(ctx, list, opts...)
}

func monitorWithUID(name string) *monv1.Monitor {
	return &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Namespace: "ws", Name: name, UID: types.UID("uid-" + name)}}
}

// resolveDeps are Deps whose cache (indexed on uid) holds a and b, and
// whose API server also holds c, created a moment ago by another writer.
func resolveDeps(t *testing.T) (*Deps, *countingReader) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := monv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	byUID := func(o client.Object) []string { return []string{string(o.GetUID())} }
	cached := fake.NewClientBuilder().WithScheme(scheme).WithIndex(&monv1.Monitor{}, monv1.UIDIndex, byUID).
		WithObjects(monitorWithUID("a"), monitorWithUID("b")).Build()
	server := fake.NewClientBuilder().WithScheme(scheme).
		WithObjects(monitorWithUID("a"), monitorWithUID("b"), monitorWithUID("c")).Build()
	reader := &countingReader{Reader: server}
	return &Deps{Client: cached, Reader: reader}, reader
}

// TestResolveIDsReadsTheServerOncePerRequest: however many ids the cache
// does not know, one request lists the kind on the API server once, and
// that list finds an object the cache has not seen yet.
func TestResolveIDsReadsTheServerOncePerRequest(t *testing.T) {
	d, reader := resolveDeps(t)
	ctx := WithRequestReads(context.Background())
	ids := []string{"uid-a", "uid-c", "uid-a"}
	for i := 0; i < 500; i++ {
		ids = append(ids, fmt.Sprintf("unknown-%d", i))
	}
	found, err := d.ResolveIDs(ctx, &monv1.MonitorList{}, "ws", ids)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 2 || found["uid-a"].GetName() != "a" || found["uid-c"].GetName() != "c" {
		t.Fatalf("found %v, want a and c", found)
	}
	if reader.lists != 1 {
		t.Fatalf("%d lists on the API server, want 1", reader.lists)
	}
	// Later lookups of the same request reuse that list.
	for i := 0; i < 10; i++ {
		if _, err := d.FindByUID(ctx, &monv1.MonitorList{}, "ws", "still-unknown"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("FindByUID of an unknown id: %v, want ErrNotFound", err)
		}
	}
	if reader.lists != 1 {
		t.Fatalf("%d lists on the API server after more lookups, want 1", reader.lists)
	}
	// Ids the cache knows cost no read of the API server.
	if obj, err := d.FindByUID(WithRequestReads(context.Background()), &monv1.MonitorList{}, "ws", "uid-b"); err != nil || obj.GetName() != "b" {
		t.Fatalf("FindByUID(uid-b) = %v, %v", obj, err)
	}
	if reader.lists != 1 {
		t.Fatalf("a cached id listed the API server")
	}
	// Another namespace's id is not found.
	if _, err := d.FindByUID(WithRequestReads(context.Background()), &monv1.MonitorList{}, "other", "uid-a"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("an id of another namespace: %v, want ErrNotFound", err)
	}
}

func TestRefsByIDNamesEachMissingID(t *testing.T) {
	d, _ := resolveDeps(t)
	refs, errs, err := d.RefsByID(WithRequestReads(context.Background()), &monv1.MonitorList{}, "ws",
		[]string{"uid-b", "nope", "uid-b", "uid-a"}, "monitor_ids", "monitor")
	if err != nil {
		t.Fatal(err)
	}
	if len(refs) != 2 || refs[0].Name != "b" || refs[1].Name != "a" {
		t.Fatalf("refs %v, want b and a in order, once each", refs)
	}
	if len(errs) != 1 || errs[0].Field != "monitor_ids[1]" {
		t.Fatalf("errors %v, want one for monitor_ids[1]", errs)
	}
}

func TestTooManyIDs(t *testing.T) {
	if TooManyIDs("ids", 500, 500, "monitors") != nil {
		t.Fatal("500 of 500 refused")
	}
	ae := TooManyIDs("routing.monitor_ids", 501, 500, "monitors")
	if ae == nil || ae.Status != http.StatusBadRequest || ae.Body.Code != CodeValidation ||
		len(ae.Body.Errors) != 1 || ae.Body.Errors[0].Field != "routing.monitor_ids" {
		t.Fatalf("TooManyIDs(501 of 500) = %+v", ae)
	}
}
