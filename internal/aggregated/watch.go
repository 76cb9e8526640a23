package aggregated

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// DefaultWatchInterval is how often a watch of incidents reads the open
// incidents again. Incidents are rows of the store, which has no change
// feed shared by the manager's replicas; polling the open ones is cheap
// (their number is small) and works on every replica.
const DefaultWatchInterval = 2 * time.Second

// maxWatch ends a watch without timeoutSeconds, as kube-apiserver does
// (--min-request-timeout, 30 minutes); clients re-watch.
const maxWatch = 30 * time.Minute

// watcher is one watch stream: the incidents it reported and whether each
// matched the selectors, so it can tell ADDED, MODIFIED and DELETED.
type watcher struct {
	w       http.ResponseWriter
	flush   func()
	out     output
	headers bool
	// open are the open incidents seen at the last poll by id; resolved
	// incidents do not change on their own and are not polled.
	open map[string]seen
}

type seen struct {
	inc     Incident
	key     string
	matched bool
}

// watchIncidents streams watch events of the incidents l selects. From
// resourceVersion "" or "0" the stream starts with an ADDED event per
// selected incident; from a list's version it starts with the incidents
// changed since (ADDED if opened since, else MODIFIED). Then, every
// interval, it compares the open incidents with the last poll: an incident
// that opens is ADDED, one that changes (acknowledged, confirmed by another
// region, resolved) is MODIFIED, one that leaves the selection (resolved
// under status.state=open) or the store is DELETED.
func (s *Server) watchIncidents(w http.ResponseWriter, r *http.Request, l *lister, resourceVersion string, out output) {
	since := int64(0)
	if resourceVersion != "" && resourceVersion != "0" {
		v, err := strconv.ParseInt(resourceVersion, 10, 64)
		if err != nil || v < 0 {
			writeStatus(w, http.StatusBadRequest, "BadRequest", "invalid resourceVersion "+strconv.Quote(resourceVersion))
			return
		}
		since = v
	}
	timeout := maxWatch
	if t, err := strconv.Atoi(r.URL.Query().Get("timeoutSeconds")); err == nil && t > 0 && time.Duration(t)*time.Second < timeout {
		timeout = time.Duration(t) * time.Second
	}
	flusher, _ := w.(http.Flusher)
	wt := &watcher{w: w, out: out, headers: true, open: map[string]seen{}, flush: func() {
		if flusher != nil {
			flusher.Flush()
		}
	}}
	// The initial state: every selected incident (the stream reports those
	// changed since the client's version), and the open ones to poll.
	all, _, err := l.scan(position{}, 0, l.status())
	if err != nil {
		writeRESTError(w, err)
		return
	}
	open, err := s.openIncidents(l)
	if err != nil {
		writeRESTError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	for i := range all {
		inc := &all[i]
		v, _ := strconv.ParseInt(inc.ResourceVersion, 10, 64)
		switch {
		case since == 0, inc.CreationTimestamp.UnixMicro() > since:
			wt.send(watch.Added, inc)
		case v > since:
			wt.send(watch.Modified, inc)
		}
	}
	for _, inc := range open {
		wt.open[inc.Name] = seen{inc: inc, key: inc.changeKey(), matched: l.matches(&inc)}
	}
	wt.flush()

	tick := time.NewTicker(s.watchInterval())
	defer tick.Stop()
	end := time.NewTimer(timeout)
	defer end.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-end.C:
			return
		case <-tick.C:
		}
		if err := s.pollOpen(r, l, wt); err != nil {
			wt.sendStatus(err)
			return
		}
		wt.flush()
	}
}

func (s *Server) watchInterval() time.Duration {
	if s.opts.WatchInterval > 0 {
		return s.opts.WatchInterval
	}
	return DefaultWatchInterval
}

// openIncidents reads every open incident of l's namespaces, selected or
// not: an open incident may enter the selection later (resolved under
// status.state=resolved).
func (s *Server) openIncidents(l *lister) ([]Incident, error) {
	every := *l
	every.fields, every.labels = everything()
	open, _, err := every.scan(position{}, 0, "ongoing")
	return open, err
}

// pollOpen compares the open incidents with the last poll and reports the
// differences.
func (s *Server) pollOpen(r *http.Request, l *lister, wt *watcher) error {
	open, err := s.openIncidents(l)
	if err != nil {
		return err
	}
	now := map[string]bool{}
	for i := range open {
		inc := &open[i]
		now[inc.Name] = true
		wt.update(inc, l.matches(inc))
	}
	for id, was := range wt.open {
		if now[id] {
			continue
		}
		// No longer open: resolved, or gone from the store.
		inc, err := s.getIncident(r, l.caller, was.inc.Namespace, id)
		var re *restError
		switch {
		case errors.As(err, &re) && re.code == http.StatusNotFound:
			if was.matched {
				wt.send(watch.Deleted, &was.inc)
			}
		case err != nil:
			return err
		default:
			inc.Status.Cause, inc.Status.Postmortem, inc.Status.Notes = "", "", nil
			wt.update(&inc, l.matches(&inc))
		}
		delete(wt.open, id)
	}
	return nil
}

// update reports inc's change since the last poll and remembers it while
// it is open.
func (wt *watcher) update(inc *Incident, matched bool) {
	key := inc.changeKey()
	was, known := wt.open[inc.Name]
	switch {
	case matched && !(known && was.matched):
		wt.send(watch.Added, inc)
	case matched && was.key != key:
		wt.send(watch.Modified, inc)
	case !matched && known && was.matched:
		wt.send(watch.Deleted, inc)
	}
	if inc.Status.State == StateOpen {
		wt.open[inc.Name] = seen{inc: *inc, key: key, matched: matched}
	}
}

// send writes one watch event, the object as a Table row when the client
// asked for tables.
func (wt *watcher) send(typ watch.EventType, inc *Incident) {
	var obj any = inc
	if wt.out.table {
		obj = wt.out.table1([]Incident{*inc}, inc.ResourceVersion, "", wt.headers)
		wt.headers = false
	}
	raw, _ := json.Marshal(obj)
	_ = json.NewEncoder(wt.w).Encode(&metav1.WatchEvent{Type: string(typ), Object: runtime.RawExtension{Raw: raw}})
}

// sendStatus ends the stream with an ERROR event.
func (wt *watcher) sendStatus(err error) {
	writeErrorEvent(wt.w, err)
	wt.flush()
}

// writeErrorEvent writes the ERROR event that ends a watch stream.
func writeErrorEvent(w io.Writer, err error) {
	st := &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure,
		Code: http.StatusInternalServerError, Reason: metav1.StatusReasonInternalError, Message: err.Error()}
	raw, _ := json.Marshal(st)
	_ = json.NewEncoder(w).Encode(&metav1.WatchEvent{Type: string(watch.Error), Object: runtime.RawExtension{Raw: raw}})
}
