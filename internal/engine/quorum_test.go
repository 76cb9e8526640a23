package engine

import (
	"slices"
	"testing"
	"time"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

func TestTally(t *testing.T) {
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	fresh := now.Add(-30 * time.Second)
	mon := func(regions ...string) *monv1.Monitor {
		m := &monv1.Monitor{}
		m.Spec.IntervalSeconds = 60
		m.Status.EffectiveRegions = regions
		return m
	}
	v := func(status string) store.Check {
		return store.Check{Status: store.CheckStatus(status), CheckedAt: fresh, ErrorType: "timeout"}
	}
	noMajority := false
	lenient := mon("a", "b", "c", "d")
	lenient.Spec.Confirmation = &monv1.ConfirmationSpec{Regions: 1, Majority: &noMajority}

	for _, tc := range []struct {
		name                        string
		m                           *monv1.Monitor
		votes                       map[string]store.Check
		isp                         map[string]string
		online                      []string
		created                     map[string]time.Time // ProbeRegion creation
		since                       time.Time            // first stored result; the oldest verdict when zero
		outage, recovered, lastMile bool
		required, voting            int
		wantFailing, wantAbstaining []string
	}{
		{name: "one region down", m: mon("a"), votes: map[string]store.Check{"a": v("down")},
			outage: true, required: 1, voting: 1, wantFailing: []string{"a"}},
		{name: "two of three down", m: mon("a", "b", "c"), votes: map[string]store.Check{"a": v("down"), "b": v("down"), "c": v("up")},
			outage: true, required: 2, voting: 3, wantFailing: []string{"a", "b"}},
		{name: "one of three down", m: mon("a", "b", "c"), votes: map[string]store.Check{"a": v("down"), "b": v("up"), "c": v("up")},
			recovered: true, required: 2, voting: 3, wantFailing: []string{"a"}},
		{name: "two of four is no majority", m: mon("a", "b", "c", "d"), votes: map[string]store.Check{"a": v("down"), "b": v("down"), "c": v("up"), "d": v("up")},
			recovered: true, required: 2, voting: 4, wantFailing: []string{"a", "b"}},
		{name: "blocked and unknown abstain", m: mon("a", "b", "c"), votes: map[string]store.Check{"a": v("down"), "b": v("down"), "c": v("blocked")},
			outage: true, required: 2, voting: 2, wantFailing: []string{"a", "b"}, wantAbstaining: []string{"c"}},
		{name: "a lone voter decides", m: mon("a", "b", "c"), votes: map[string]store.Check{"a": v("down"), "b": v("blocked"), "c": v("unknown")},
			outage: true, required: 1, voting: 1, wantFailing: []string{"a"}, wantAbstaining: []string{"b", "c"}},
		{name: "degraded passes", m: mon("a", "b"), votes: map[string]store.Check{"a": v("degraded"), "b": v("degraded")},
			recovered: true, required: 2, voting: 2},
		{name: "stale verdicts abstain and cap the confirmations", m: mon("a", "b"), votes: map[string]store.Check{"a": {Status: store.StatusDown, CheckedAt: now.Add(-time.Hour)}, "b": v("down")},
			outage: true, required: 1, voting: 1, wantFailing: []string{"b"}, wantAbstaining: []string{"a"}},
		{name: "a region without an agent does not hide an outage", m: mon("a", "b", "c"), votes: map[string]store.Check{"a": v("down"), "b": v("down")},
			outage: true, required: 2, voting: 2, wantFailing: []string{"a", "b"}, wantAbstaining: []string{"c"}},
		{name: "online regions yet to report count during the warm-up", m: mon("a", "b", "c"), votes: map[string]store.Check{"a": v("down")}, online: []string{"a", "b"},
			required: 2, voting: 1, wantFailing: []string{"a"}, wantAbstaining: []string{"b", "c"}},
		{name: "regions without an agent are not waited for", m: mon("a", "b", "c"), votes: map[string]store.Check{"a": v("down")}, online: []string{"a"},
			outage: true, required: 1, voting: 1, wantFailing: []string{"a"}, wantAbstaining: []string{"b", "c"}},
		{name: "a region created moments ago is waited for during the warm-up, as if online", m: mon("a", "b", "c"), votes: map[string]store.Check{"a": v("down")},
			online: []string{"a"}, created: map[string]time.Time{"b": now.Add(-time.Minute), "c": now.Add(-24 * time.Hour)},
			required: 2, voting: 1, wantFailing: []string{"a"}, wantAbstaining: []string{"b", "c"}},
		{name: "a region created long ago without an agent is not waited for", m: mon("a", "b", "c"), votes: map[string]store.Check{"a": v("down")},
			online: []string{"a"}, created: map[string]time.Time{"b": now.Add(-time.Hour), "c": now.Add(-24 * time.Hour)},
			outage: true, required: 1, voting: 1, wantFailing: []string{"a"}, wantAbstaining: []string{"b", "c"}},
		{name: "a region silent after the warm-up cannot hold back an outage", online: []string{"a", "b", "c"}, m: mon("a", "b", "c"), votes: map[string]store.Check{"a": v("down"), "b": {Status: "up", CheckedAt: now.Add(-time.Hour)}},
			outage: true, required: 1, voting: 1, wantFailing: []string{"a"}, wantAbstaining: []string{"b", "c"}},
		{name: "an online region that never reported is not waited for after the warm-up", m: mon("a", "b", "c"), votes: map[string]store.Check{"a": v("down")},
			online: []string{"a", "b"}, since: now.Add(-time.Hour),
			outage: true, required: 1, voting: 1, wantFailing: []string{"a"}, wantAbstaining: []string{"b", "c"}},
		{name: "a fresh verdict does not prolong the warm-up", m: mon("a", "b"), votes: map[string]store.Check{"a": v("down")},
			online: []string{"a", "b"}, since: now.Add(-10 * time.Minute),
			outage: true, required: 1, voting: 1, wantFailing: []string{"a"}, wantAbstaining: []string{"b"}},
		{name: "during the warm-up an online silent region is waited for", m: mon("a", "b"), votes: map[string]store.Check{"a": v("down")},
			online: []string{"a", "b"}, since: now.Add(-2 * time.Minute),
			required: 2, voting: 1, wantFailing: []string{"a"}, wantAbstaining: []string{"b"}},
		{name: "after every region fell silent, an online region is waited for again", m: mon("a", "b"),
			votes:  map[string]store.Check{"a": v("down"), "b": {Status: "up", CheckedAt: now.Add(-10 * time.Minute)}},
			online: []string{"a", "b"}, since: fresh,
			required: 2, voting: 1, wantFailing: []string{"a"}, wantAbstaining: []string{"b"}},
		{name: "one of two voters failing is no majority", m: mon("a", "b", "c"), votes: map[string]store.Check{"a": v("down"), "b": v("up")},
			recovered: true, required: 2, voting: 2, wantFailing: []string{"a"}, wantAbstaining: []string{"c"}},
		{name: "all abstain keeps state", m: mon("a", "b"), votes: map[string]store.Check{"a": v("unknown")},
			required: 1, voting: 0, wantAbstaining: []string{"a", "b"}},
		{name: "lenient rule", m: lenient, votes: map[string]store.Check{"a": v("down"), "b": v("up"), "c": v("up"), "d": v("up")},
			outage: true, required: 1, voting: 4, wantFailing: []string{"a"}},
		{name: "only an ISP fails", m: mon("dc1", "dc2", "isp1"), isp: map[string]string{"isp1": "Comcast"},
			votes:     map[string]store.Check{"dc1": v("up"), "dc2": v("up"), "isp1": v("down")},
			recovered: true, lastMile: true, required: 2, voting: 3, wantFailing: []string{"isp1"}},
		{name: "ISP and data centre fail", m: mon("dc1", "isp1", "isp2"), isp: map[string]string{"isp1": "A", "isp2": "B"},
			votes:  map[string]store.Check{"dc1": v("down"), "isp1": v("down"), "isp2": v("down")},
			outage: true, required: 2, voting: 3, wantFailing: []string{"dc1", "isp1", "isp2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			facts := RegionFacts{ISP: tc.isp, Online: map[string]bool{}, Created: tc.created}
			for _, code := range tc.online {
				facts.Online[code] = true
			}
			since := tc.since
			for _, v := range tc.votes {
				if tc.since.IsZero() && (since.IsZero() || v.CheckedAt.Before(since)) {
					since = v.CheckedAt
				}
			}
			q := Tally(tc.m, tc.votes, since, facts, now)
			if q.Outage != tc.outage || q.Recovered != tc.recovered || q.LastMileOnly != tc.lastMile {
				t.Errorf("outage/recovered/lastMile = %v/%v/%v, want %v/%v/%v", q.Outage, q.Recovered, q.LastMileOnly, tc.outage, tc.recovered, tc.lastMile)
			}
			if q.Required != tc.required || q.Voting != tc.voting {
				t.Errorf("required/voting = %d/%d, want %d/%d", q.Required, q.Voting, tc.required, tc.voting)
			}
			if !slices.Equal(q.FailingRegions, tc.wantFailing) {
				t.Errorf("failing = %v, want %v", q.FailingRegions, tc.wantFailing)
			}
			if !slices.Equal(q.Abstaining, tc.wantAbstaining) {
				t.Errorf("abstaining = %v, want %v", q.Abstaining, tc.wantAbstaining)
			}
		})
	}
}

func TestNextExpected(t *testing.T) {
	m := &monv1.Monitor{}
	m.CreationTimestamp.Time = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	m.Spec.Cron = &monv1.CronConfig{CronExpression: "30 2 * * *", GraceSeconds: 600, TimeZone: "Europe/Berlin"}
	got, err := NextExpected(m, nil)
	if err != nil {
		t.Fatal(err)
	}
	// 02:30 Berlin (UTC+1 in winter) plus 10 minutes grace.
	if want := time.Date(2030, 1, 1, 1, 40, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("NextExpected = %s, want %s", got.UTC(), want)
	}
	ping := time.Date(2030, 1, 1, 1, 31, 0, 0, time.UTC)
	got, _ = NextExpected(m, &ping)
	if want := time.Date(2030, 1, 2, 1, 40, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("after a ping: NextExpected = %s, want %s", got.UTC(), want)
	}
}

func TestRuleInWords(t *testing.T) {
	for _, tc := range []struct {
		q    Quorum
		want string
	}{
		{Quorum{Required: 1}, "at least 1 failing region"},
		{Quorum{Required: 2}, "at least 2 failing regions"},
		{Quorum{Required: 1, Majority: true, Voting: 1}, "at least 1 failing region and a majority of the 1 voting region"},
		{Quorum{Required: 2, Majority: true, Voting: 3}, "at least 2 failing regions and a majority of the 3 voting regions"},
	} {
		if got := tc.q.Rule(); got != tc.want {
			t.Errorf("%+v: Rule() = %q, want %q", tc.q, got, tc.want)
		}
	}
}

// TestScreenshotURL: a region's vote links the screenshot of its latest
// check when that check is a failed browser check that took one.
func TestScreenshotURL(t *testing.T) {
	for _, tc := range []struct {
		name  string
		check store.Check
		want  string
	}{
		{"failed browser check with a screenshot", store.Check{ID: "c1", MonitorID: "m1", Status: store.StatusDown,
			Details: []byte(`{"browser":"local","failed_step":0,"screenshot_bytes":48211}`)}, "/monitors/m1/checks/c1/screenshot"},
		{"blocked browser check with a screenshot", store.Check{ID: "c2", MonitorID: "m1", Status: store.StatusBlocked,
			Details: []byte(`{"screenshot_bytes":9}`)}, "/monitors/m1/checks/c2/screenshot"},
		{"failed browser check without one", store.Check{ID: "c3", MonitorID: "m1", Status: store.StatusDown, Details: []byte(`{"browser":"remote"}`)}, ""},
		{"up check", store.Check{ID: "c4", MonitorID: "m1", Status: store.StatusUp, Details: []byte(`{"screenshot_bytes":1}`)}, ""},
		{"http check", store.Check{ID: "c5", MonitorID: "m1", Status: store.StatusDown}, ""},
	} {
		if got := screenshotURL(tc.check); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
