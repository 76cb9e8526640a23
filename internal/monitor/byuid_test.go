package monitor

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

// listCounter counts the lists that are not narrowed by the uid index.
type listCounter struct {
	client.Reader
	full int
}

func (l *listCounter) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	o := &client.ListOptions{}
	o.ApplyOptions(opts)
	if o.FieldSelector == nil {
		l.full++
	}
	return l.Reader.List(ctx, list, opts...)
}

// TestByUID: with the cache's uid index a Monitor is found without listing
// its namespace; without the index (a plain reader) by a scan. Either way
// the caller gets its own copy, and a uid of another namespace or none is
// not found.
func TestByUID(t *testing.T) {
	ctx := context.Background()
	scheme := runtime.NewScheme()
	_ = monv1.AddToScheme(scheme)
	var objs []client.Object
	for _, n := range []string{"a", "b", "c"} {
		objs = append(objs, &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: n, UID: types.UID("uid-" + n)}})
	}
	indexed := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).
		WithIndex(&monv1.Monitor{}, monv1.UIDIndex, func(o client.Object) []string { return []string{string(o.GetUID())} }).Build()
	plain := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
	for name, r := range map[string]client.Reader{"indexed": indexed, "plain": plain} {
		t.Run(name, func(t *testing.T) {
			c := &listCounter{Reader: r}
			m, err := ByUID(ctx, c, "team", "uid-b")
			if err != nil || m == nil || m.Name != "b" {
				t.Fatalf("ByUID(uid-b) = %v, %v; want monitor b", m, err)
			}
			if name == "indexed" && c.full != 0 {
				t.Errorf("listed the namespace %d times with the index in place", c.full)
			}
			m.Name = "changed"
			if again, _ := ByUID(ctx, c, "team", "uid-b"); again == nil || again.Name != "b" {
				t.Errorf("a change to the returned Monitor reached the reader: %v", again)
			}
			for _, miss := range [][2]string{{"other", "uid-b"}, {"team", "uid-x"}} {
				if m, err := ByUID(ctx, c, miss[0], miss[1]); err != nil || m != nil {
					t.Errorf("ByUID(%s, %s) = %v, %v; want nil", miss[0], miss[1], m, err)
				}
			}
		})
	}
}
