package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/conditions"
	"github.com/uptime-operator/uptime-operator/internal/manager"
)

// watcher follows the Monitors through a list and watch of its own and
// keeps, per name, the uid and whether the status is reconciled: the
// observed generation is current and Ready is True.
type watcher struct {
	cfg *rest.Config

	mu    sync.Mutex
	state map[string]monitorSeen
	nOK   int
}

type monitorSeen struct {
	uid   string
	ready bool
}

func newWatcher(cfg *rest.Config) *watcher {
	return &watcher{cfg: cfg, state: map[string]monitorSeen{}}
}

func seen(m *monv1.Monitor) monitorSeen {
	return monitorSeen{uid: string(m.UID), ready: m.Generation > 0 && m.Status.ObservedGeneration == m.Generation &&
		conditions.IsTrue(m.Status.Conditions, monv1.ConditionReady)}
}

func (w *watcher) set(name string, s monitorSeen, deleted bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if old, ok := w.state[name]; ok && old.ready {
		w.nOK--
	}
	if deleted {
		delete(w.state, name)
		return
	}
	w.state[name] = s
	if s.ready {
		w.nOK++
	}
}

func (w *watcher) ready() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.nOK
}

func (w *watcher) uid(name string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.state[name].uid
}

func (w *watcher) uids() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, 0, len(w.state))
	for _, s := range w.state {
		out = append(out, s.uid)
	}
	return out
}

// run lists and watches until ctx ends, relisting when a watch ends.
func (w *watcher) run(ctx context.Context) {
	c, err := client.NewWithWatch(w.cfg, client.Options{Scheme: manager.Scheme()})
	if err != nil {
		say("watcher: %v", err)
		return
	}
	for ctx.Err() == nil {
		rv, err := w.list(ctx, c)
		if err != nil {
			say("watcher: list: %v", err)
			time.Sleep(time.Second)
			continue
		}
		wi, err := c.Watch(ctx, &monv1.MonitorList{}, client.InNamespace(workspaceNS),
			&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true}})
		if err != nil {
			say("watcher: watch: %v", err)
			time.Sleep(time.Second)
			continue
		}
		for ev := range wi.ResultChan() {
			m, ok := ev.Object.(*monv1.Monitor)
			if !ok {
				continue
			}
			switch ev.Type {
			case watch.Added, watch.Modified:
				w.set(m.Name, seen(m), false)
			case watch.Deleted:
				w.set(m.Name, monitorSeen{}, true)
			}
		}
		wi.Stop()
	}
}

func (w *watcher) list(ctx context.Context, c client.WithWatch) (string, error) {
	fresh := map[string]monitorSeen{}
	rv, cont := "", ""
	for {
		var list monv1.MonitorList
		if err := c.List(ctx, &list, client.InNamespace(workspaceNS), client.Limit(5000), client.Continue(cont)); err != nil {
			return "", err
		}
		for i := range list.Items {
			fresh[list.Items[i].Name] = seen(&list.Items[i])
		}
		if rv == "" {
			rv = list.ResourceVersion
		}
		if cont = list.Continue; cont == "" {
			break
		}
	}
	w.mu.Lock()
	w.state, w.nOK = fresh, 0
	for _, s := range fresh {
		if s.ready {
			w.nOK++
		}
	}
	w.mu.Unlock()
	return rv, nil
}

// sample is one line of the Prometheus text format.
type sample struct {
	name   string
	labels map[string]string
	value  float64
}

// parseMetrics reads the Prometheus text exposition format (comments
// skipped; label values may hold escaped quotes).
func parseMetrics(text string) []sample {
	var out []sample
	for _, line := range strings.Split(text, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		s := sample{labels: map[string]string{}}
		rest := line
		if i := strings.IndexAny(line, "{ "); i >= 0 && line[i] == '{' {
			s.name = line[:i]
			rest = line[i+1:]
			for {
				rest = strings.TrimLeft(rest, ", ")
				if strings.HasPrefix(rest, "}") {
					rest = rest[1:]
					break
				}
				eq := strings.Index(rest, `="`)
				if eq < 0 {
					break
				}
				key := rest[:eq]
				rest = rest[eq+2:]
				var val strings.Builder
				for len(rest) > 0 && rest[0] != '"' {
					if rest[0] == '\\' && len(rest) > 1 {
						rest = rest[1:]
					}
					val.WriteByte(rest[0])
					rest = rest[1:]
				}
				rest = strings.TrimPrefix(rest, `"`)
				s.labels[key] = val.String()
			}
		} else if i >= 0 {
			s.name, rest = line[:i], line[i:]
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			continue
		}
		s.value = v
		out = append(out, s)
	}
	return out
}

func scrape(url string) ([]sample, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return parseMetrics(string(raw)), nil
}

// scrapeGauge reads one series; selector is a name, optionally with
// labels in the text format (`name{a="b"}`), which must all match.
func scrapeGauge(url, selector string) (float64, error) {
	want := parseMetrics(selector + " 0")
	if len(want) != 1 {
		return 0, fmt.Errorf("bad selector %q", selector)
	}
	ss, err := scrape(url)
	if err != nil {
		return 0, err
	}
	for _, s := range ss {
		if s.name == want[0].name && matches(s.labels, want[0].labels) {
			return s.value, nil
		}
	}
	return 0, fmt.Errorf("%s not found at %s", selector, url)
}

func matches(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

func sumPrefix(ss []sample, name string) float64 {
	var t float64
	for _, s := range ss {
		if s.name == name {
			t += s.value
		}
	}
	return t
}

// quantile returns the upper bound of the histogram bucket that holds
// quantile q of the observations made between two scrapes.
func quantile(before, after []sample, name string, q float64) string {
	bucket := func(ss []sample) map[string]float64 {
		out := map[string]float64{}
		for _, s := range ss {
			if s.name == name+"_bucket" {
				out[s.labels["le"]] += s.value
			}
		}
		return out
	}
	b0, b1 := bucket(before), bucket(after)
	total := b1["+Inf"] - b0["+Inf"]
	if total <= 0 {
		return "no observations"
	}
	type le struct {
		bound float64
		text  string
		count float64
	}
	var les []le
	for k, v := range b1 {
		bound, err := strconv.ParseFloat(k, 64)
		if err != nil {
			continue
		}
		les = append(les, le{bound, k, v - b0[k]})
	}
	// Sort by bound.
	for i := 1; i < len(les); i++ {
		for j := i; j > 0 && les[j].bound < les[j-1].bound; j-- {
			les[j], les[j-1] = les[j-1], les[j]
		}
	}
	for _, l := range les {
		if l.count >= q*total {
			return fmt.Sprintf("≤ %s s (of %.0f)", l.text, total)
		}
	}
	return fmt.Sprintf("> %s s (of %.0f)", les[len(les)-1].text, total)
}
