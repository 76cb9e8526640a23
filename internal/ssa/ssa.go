// Package ssa writes the status of an object that more than one writer
// fills, by server-side apply: each writer applies only the fields it owns,
// as a field manager of its own, so neither overwrites the other's. A merge
// patch would replace whole lists (conditions) and needs an optimistic lock
// against the other writer; an apply of a map-list (conditions are keyed
// by type) merges by key and leaves the other manager's entries alone.
//
// AlertChannel status is written this way: the AlertChannel controller
// (monv1.AlertChannelControllerFieldOwner) and the delivery worker
// (monv1.DeliveryFieldOwner).
package ssa

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/csaupgrade"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Options of one status apply.
type Options struct {
	// Owner is the writer's field manager.
	Owner string
	// Locked sends the object's resourceVersion, so the apply fails with a
	// conflict when the object changed since it was read: for a writer whose
	// new values derive from the old ones (a counter).
	Locked bool
}

// ApplyStatus applies status (a struct holding just the fields the writer
// owns, with their JSON names) to the status of obj, of kind gvk, as
// opts.Owner, and updates obj to the stored object. A field the writer owned and leaves out is removed unless
// another manager owns it too. Conflicts with other managers are forced:
// the writers of one status own disjoint fields, so a conflict can only be
// with the shared field owner of earlier releases.
func ApplyStatus(ctx context.Context, c client.Client, obj client.Object, gvk schema.GroupVersionKind, status any, opts Options) error {
	raw, err := json.Marshal(status)
	if err != nil {
		return fmt.Errorf("encode status: %w", err)
	}
	var st map[string]any
	if err := json.Unmarshal(raw, &st); err != nil {
		return fmt.Errorf("decode status: %w", err)
	}
	u := &unstructured.Unstructured{Object: map[string]any{"status": st}}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(obj.GetNamespace())
	u.SetName(obj.GetName())
	if opts.Locked {
		u.SetResourceVersion(obj.GetResourceVersion())
	}
	if err := c.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(opts.Owner), client.ForceOwnership); err != nil {
		return err
	}
	// The answer is the whole object as stored, the other writers' fields
	// and the new resourceVersion included.
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj); err != nil {
		return fmt.Errorf("decode applied %s: %w", gvk.Kind, err)
	}
	return nil
}

// Adoption hands the status fields of a field manager of earlier releases
// (one that wrote the status with updates and merge patches) to the
// writers that apply them now, once per object. Without it the legacy
// manager keeps co-owning every field, and a field a writer stops sending
// (a condition that no longer holds) would never be removed.
type Adoption struct {
	// Legacy is the earlier field manager.
	Legacy string
	// Owner takes the fields no entry of Split names.
	Owner string
	// Split gives other writers their fields: status field names
	// ("consecutiveFailures"), or "conditions/<type>" for one condition.
	Split map[string][]string
}

// Adopt patches obj's managedFields so that the status fields a.Legacy
// owns belong to the writers of a. It reports whether it patched; a
// conflict means obj changed meanwhile and the caller retries.
func Adopt(ctx context.Context, c client.Client, obj client.Object, a Adoption) (bool, error) {
	before := obj.GetManagedFields()
	after, err := a.managedFields(before)
	if err != nil || after == nil {
		return false, err
	}
	patch, err := json.Marshal([]map[string]any{
		{"op": "replace", "path": "/metadata/managedFields", "value": after},
		// As csaupgrade does: a changed object fails with a conflict.
		{"op": "replace", "path": "/metadata/resourceVersion", "value": obj.GetResourceVersion()},
	})
	if err != nil {
		return false, err
	}
	if err := c.Patch(ctx, obj, client.RawPatch(types.JSONPatchType, patch)); err != nil {
		return false, fmt.Errorf("adopt the status fields of %s: %w", a.Legacy, err)
	}
	return true, nil
}

// managedFields returns entries with the legacy status entry split among
// the writers, nil when there is none.
func (a Adoption) managedFields(entries []metav1.ManagedFieldsEntry) ([]metav1.ManagedFieldsEntry, error) {
	i := slices.IndexFunc(entries, func(e metav1.ManagedFieldsEntry) bool {
		return e.Manager == a.Legacy && e.Operation == metav1.ManagedFieldsOperationUpdate && e.Subresource == "status"
	})
	if i < 0 || entries[i].FieldsV1 == nil {
		return nil, nil
	}
	legacy := entries[i]
	var fields map[string]any
	if err := json.Unmarshal(legacy.FieldsV1.Raw, &fields); err != nil {
		return nil, fmt.Errorf("decode managed fields of %s: %w", a.Legacy, err)
	}
	status, _ := fields["f:status"].(map[string]any)
	// Each writer's share goes in as a temporary update manager, which
	// csaupgrade then turns into (or unions with) the writer's apply entry.
	out := slices.Delete(slices.Clone(entries), i, i+1)
	owners := []string{a.Owner}
	for owner, names := range a.Split {
		share := map[string]any{}
		for _, n := range names {
			moveField(status, share, n)
		}
		if len(share) > 0 {
			out = append(out, tempEntry(legacy, owner, share))
			owners = append(owners, owner)
		}
	}
	if len(status) > 0 {
		out = append(out, tempEntry(legacy, a.Owner, status))
	}
	u := &unstructured.Unstructured{}
	u.SetManagedFields(out)
	for _, owner := range owners {
		if err := csaupgrade.UpgradeManagedFields(u, sets.New(tempName(owner)), owner, csaupgrade.Subresource("status")); err != nil {
			return nil, err
		}
	}
	return u.GetManagedFields(), nil
}

// moveField moves the field set of name ("x" or "conditions/<type>") from
// status to share.
func moveField(status, share map[string]any, name string) {
	if status == nil {
		return
	}
	if list, typ, ok := strings.Cut(name, "/"); ok {
		key := "k:" + mustJSON(map[string]string{"type": typ})
		items, _ := status["f:"+list].(map[string]any)
		if v, ok := items[key]; ok {
			delete(items, key)
			dst, _ := share["f:"+list].(map[string]any)
			if dst == nil {
				dst = map[string]any{}
				share["f:"+list] = dst
			}
			dst[key] = v
		}
		return
	}
	if v, ok := status["f:"+name]; ok {
		delete(status, "f:"+name)
		share["f:"+name] = v
	}
}

func tempName(owner string) string { return owner + "/adopting" }

// tempEntry is legacy's entry for status fields fs, renamed for owner.
func tempEntry(legacy metav1.ManagedFieldsEntry, owner string, fs map[string]any) metav1.ManagedFieldsEntry {
	e := legacy
	e.Manager = tempName(owner)
	raw := mustJSON(map[string]any{"f:status": fs})
	e.FieldsV1 = &metav1.FieldsV1{Raw: []byte(raw)}
	return e
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // maps of strings and maps always encode
	}
	return string(b)
}
