package statuspage

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
)

// A page shows the monitors its spec lists, then the Monitors of its
// namespace that join it by label (monv1.StatusPageLabel). Every reader of
// a page's monitors (the controller, the public view, the notifier, the
// REST API) goes through Join, so they agree on what a page shows.

// Join returns the entries a page shows: spec.monitors in order, then the
// Monitors of joined that carry StatusPageLabel with the page's name and
// that spec.monitors does not list, by display name then name, each under
// its StatusPageSectionAnnotation; at most monv1.MaxStatusPageMonitors in
// all. leftOff counts the joined Monitors beyond that bound. joined may hold
// other Monitors of the namespace: they are ignored, as are Monitors being
// deleted.
func Join(page *monv1.StatusPage, joined []monv1.Monitor) (entries []monv1.StatusPageMonitor, leftOff int) {
	entries = slices.Clone(page.Spec.Monitors)
	listed := make(map[string]bool, len(entries))
	for _, e := range entries {
		listed[e.MonitorRef.Name] = true
	}
	var extra []*monv1.Monitor
	for i := range joined {
		m := &joined[i]
		if m.Namespace == page.Namespace && m.Labels[monv1.StatusPageLabel] == page.Name &&
			m.DeletionTimestamp.IsZero() && !listed[m.Name] {
			extra = append(extra, m)
		}
	}
	slices.SortFunc(extra, func(a, b *monv1.Monitor) int {
		return cmp.Or(cmp.Compare(displayName(monv1.StatusPageMonitor{}, a), displayName(monv1.StatusPageMonitor{}, b)), cmp.Compare(a.Name, b.Name))
	})
	for _, m := range extra {
		if len(entries) >= monv1.MaxStatusPageMonitors {
			leftOff++
			continue
		}
		entries = append(entries, joinedEntry(m))
	}
	return entries, leftOff
}

// joinedEntry is the entry of a Monitor that joins a page by label: its
// name and the section its annotation names (cut to the 100 characters a
// section has).
func joinedEntry(m *monv1.Monitor) monv1.StatusPageMonitor {
	section := m.Annotations[monv1.StatusPageSectionAnnotation]
	if len(section) > 100 {
		section = section[:100]
	}
	return monv1.StatusPageMonitor{MonitorRef: monv1.LocalObjectReference{Name: m.Name}, Section: section}
}

// listJoined lists the Monitors of the page's namespace that join it by label.
func listJoined(ctx context.Context, r client.Reader, page *monv1.StatusPage) ([]monv1.Monitor, error) {
	var list monv1.MonitorList
	if err := r.List(ctx, &list, client.InNamespace(page.Namespace), client.MatchingLabels{monv1.StatusPageLabel: page.Name}); err != nil {
		return nil, fmt.Errorf("list the monitors of status page %s: %w", page.Name, err)
	}
	return list.Items, nil
}

// Entry is one monitor a page shows: its entry and the Monitor, nil when a
// listed Monitor does not exist.
type Entry struct {
	Ref     monv1.StatusPageMonitor
	Monitor *monv1.Monitor
}

// Resolved is what a page shows, read: its entries in order, the names of
// listed monitors that do not exist, and how many joined Monitors the
// bound left off.
type Resolved struct {
	Entries []Entry
	Missing []string
	LeftOff int
}

// ResolveMonitors reads the monitors a page shows (see Join), in order.
func ResolveMonitors(ctx context.Context, r client.Reader, page *monv1.StatusPage) (Resolved, error) {
	joined, err := listJoined(ctx, r, page)
	if err != nil {
		return Resolved{}, err
	}
	refs, leftOff := Join(page, joined)
	byName := make(map[string]*monv1.Monitor, len(joined))
	for i := range joined {
		byName[joined[i].Name] = &joined[i]
	}
	out := Resolved{Entries: make([]Entry, 0, len(refs)), LeftOff: leftOff}
	for _, ref := range refs {
		m := byName[ref.MonitorRef.Name]
		if m == nil {
			var got monv1.Monitor
			err := r.Get(ctx, client.ObjectKey{Namespace: page.Namespace, Name: ref.MonitorRef.Name}, &got)
			if apierrors.IsNotFound(err) {
				out.Entries = append(out.Entries, Entry{Ref: ref})
				out.Missing = append(out.Missing, ref.MonitorRef.Name)
				continue
			}
			if err != nil {
				return Resolved{}, fmt.Errorf("get monitor %s: %w", ref.MonitorRef.Name, err)
			}
			m = &got
		}
		out.Entries = append(out.Entries, Entry{Ref: ref, Monitor: m})
	}
	return out, nil
}

// PagesOf returns the pages of the Monitor's namespace that show it, each
// with the Monitor's entry there: those that list it by name and the page
// its StatusPageLabel names (when the bound does not leave it off).
func PagesOf(ctx context.Context, r client.Reader, m *monv1.Monitor) ([]monv1.StatusPage, []monv1.StatusPageMonitor, error) {
	pages, err := ListBy(ctx, r, IndexMonitor, m.Name, client.InNamespace(m.Namespace))
	if err != nil {
		return nil, nil, err
	}
	var out []monv1.StatusPage
	var refs []monv1.StatusPageMonitor
	for _, p := range pages {
		for _, ref := range p.Spec.Monitors {
			if ref.MonitorRef.Name == m.Name {
				out, refs = append(out, p), append(refs, ref)
				break
			}
		}
	}
	name, ok := m.Labels[monv1.StatusPageLabel]
	if !ok || slices.ContainsFunc(out, func(p monv1.StatusPage) bool { return p.Name == name }) {
		return out, refs, nil
	}
	var page monv1.StatusPage
	err = r.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: name}, &page)
	if apierrors.IsNotFound(err) {
		return out, refs, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("get status page %s: %w", name, err)
	}
	joined, err := listJoined(ctx, r, &page)
	if err != nil {
		return nil, nil, err
	}
	if entries, _ := Join(&page, joined); !slices.ContainsFunc(entries, func(e monv1.StatusPageMonitor) bool { return e.MonitorRef.Name == m.Name }) {
		return out, refs, nil // the label is not (yet) in the cache, or the bound leaves m off
	}
	return append(out, page), append(refs, joinedEntry(m)), nil
}
