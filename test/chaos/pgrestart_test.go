//go:build chaos

package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/engine"
	"github.com/uptime-operator/uptime-operator/internal/manager"
	"github.com/uptime-operator/uptime-operator/internal/probeserver"
	"github.com/uptime-operator/uptime-operator/probes"
)

// privatePG is a PostgreSQL server of the test's own (hack/postgres.sh on
// another port and data directory), so restarting it cannot disturb the
// shared test server on 55432.
type privatePG struct {
	dsn, data, bin string
}

func startPrivatePG(t *testing.T) *privatePG {
	t.Helper()
	dir := t.TempDir()
	port := strings.TrimPrefix(freeAddr(t)[len("127.0.0.1"):], ":")
	pg := &privatePG{data: filepath.Join(dir, "pg")}
	cmd := exec.Command("../../hack/postgres.sh")
	cmd.Env = append(os.Environ(), "PG_PORT="+port, "PG_DATA="+pg.data, "PG_DB=uptime_chaos")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("hack/postgres.sh: %v\n%s", err, out.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	last := lines[len(lines)-1]
	pg.dsn = strings.TrimSuffix(strings.TrimPrefix(last, "export UPTIME_TEST_POSTGRES_DSN='"), "'")
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_ctl")
	sort.Strings(bins)
	if len(bins) == 0 {
		t.Fatal("no pg_ctl found")
	}
	pg.bin = filepath.Dir(bins[len(bins)-1])
	t.Cleanup(func() { _ = pg.ctl("stop", "-m", "immediate") })
	// hack/postgres.sh turns fsync and synchronous_commit off for fast
	// tests; a crash then loses the commits of the last moment, which is
	// the configuration's promise, not the product's. This server crashes
	// on purpose, so it is as durable as a production one.
	conn, err := pgx.Connect(context.Background(), pg.dsn)
	must(t, err)
	defer conn.Close(context.Background())
	for _, q := range []string{"ALTER SYSTEM SET fsync = on", "ALTER SYSTEM SET synchronous_commit = on", "ALTER SYSTEM SET full_page_writes = on", "SELECT pg_reload_conf()"} {
		_, err := conn.Exec(context.Background(), q)
		must(t, err)
	}
	return pg
}

func (pg *privatePG) ctl(args ...string) error {
	full := append([]string{"-u", "postgres", "--", filepath.Join(pg.bin, "pg_ctl"), "-D", pg.data, "-l", filepath.Join(pg.data, "server.log"), "-w", "-t", "60"}, args...)
	out, err := exec.Command("runuser", full...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("pg_ctl %v: %v: %s", args, err, out)
	}
	return nil
}

// idRecorder is the agent's transport: it records the id of every result
// the agent tries to push, whatever the answer.
type idRecorder struct {
	mu    sync.Mutex
	ids   map[string]time.Time // first attempt
	acked map[string]int       // answers 2xx that carried the id
	acks  []time.Time          // when each 2xx answer to a push arrived
	rt    http.RoundTripper
	// parent, when set, records the same ids (one recorder of all agents
	// beside each agent's own).
	parent *idRecorder
}

// note records ids as sent now (first time only).
func (r *idRecorder) note(ids []string) {
	r.mu.Lock()
	for _, id := range ids {
		if _, seen := r.ids[id]; !seen {
			r.ids[id] = time.Now()
		}
	}
	r.mu.Unlock()
	if r.parent != nil {
		r.parent.note(ids)
	}
}

// ack records a 2xx answer to a push of ids.
func (r *idRecorder) ack(ids []string) {
	r.mu.Lock()
	for _, id := range ids {
		r.acked[id]++
	}
	r.acks = append(r.acks, time.Now())
	r.mu.Unlock()
	if r.parent != nil {
		r.parent.ack(ids)
	}
}

// firstAckAfter returns when the first push after t was acknowledged (zero:
// none was).
func (r *idRecorder) firstAckAfter(t time.Time) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, at := range r.acks {
		if at.After(t) {
			return at
		}
	}
	return time.Time{}
}

func (r *idRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var batchIDs []string
	if req.Method == http.MethodPost && req.Body != nil && strings.HasSuffix(req.URL.Path, "/results") {
		b, _ := io.ReadAll(req.Body)
		req.Body.Close()
		req.Body = io.NopCloser(bytes.NewReader(b))
		var batch struct {
			Results []struct {
				ID string `json:"id"`
			} `json:"results"`
		}
		if json.Unmarshal(b, &batch) == nil {
			for _, res := range batch.Results {
				batchIDs = append(batchIDs, res.ID)
			}
			r.note(batchIDs)
		}
	}
	res, err := r.rt.RoundTrip(req)
	if err == nil && res.StatusCode/100 == 2 && len(batchIDs) > 0 {
		r.ack(batchIDs)
	}
	return res, err
}

// sent returns the ids first sent before cutoff (zero: all).
func (r *idRecorder) sent(cutoff ...time.Time) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.ids))
	for id, at := range r.ids {
		if len(cutoff) == 0 || at.Before(cutoff[0]) {
			out = append(out, id)
		}
	}
	return out
}

// TestPostgresRestartMidIngest runs the manager on a private PostgreSQL
// with two real probe agents (their buffer and retry code, against the real
// probe API over loopback) checking a local target, restarts PostgreSQL
// (immediate stop, as a crash) while results flow, and compares the result
// ids the agents sent with the ids stored: none may be lost.
func TestPostgresRestartMidIngest(t *testing.T) {
	t.Parallel()
	pg := startPrivatePG(t)
	const ns = "uptime-operator-system"
	env := startEnv(t, manager.Options{Store: pg.dsn, APIListen: "127.0.0.1:0", AllowPrivateTargets: true, Namespace: ns})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	apiAddr, err := env.Manager.APIAddr(ctx)
	must(t, err)
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok")) }))
	defer target.Close()
	must(t, env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))

	rec := &idRecorder{ids: map[string]time.Time{}, acked: map[string]int{}, rt: http.DefaultTransport.(*http.Transport).Clone()}
	agentCtx, stopAgents := context.WithCancel(ctx)
	defer stopAgents()
	var agents sync.WaitGroup
	regions := []string{"eu-1", "us-1"}
	for _, code := range regions {
		token := engine.NewHeartbeatToken()
		must(t, env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tok-" + code, Namespace: ns},
			Data: map[string][]byte{probeserver.RegionTokenKey: []byte(token)}}))
		must(t, env.Client.Create(ctx, &monv1.ProbeRegion{ObjectMeta: metav1.ObjectMeta{Name: code}, Spec: monv1.ProbeRegionSpec{
			Placement: monv1.ProbePlacement{Mode: monv1.PlacementRemote, TokenSecretRef: &monv1.SecretKeySelector{Name: "tok-" + code, Key: probeserver.RegionTokenKey}}}}))
		tokenFile := filepath.Join(t.TempDir(), code+".token")
		must(t, os.WriteFile(tokenFile, []byte(token), 0o600))
		agents.Add(1)
		go func() {
			defer agents.Done()
			_ = probes.RunAgent(agentCtx, probes.AgentOptions{
				Region: code, ServerURL: "http://" + apiAddr, TokenFile: tokenFile, AllowPrivate: true,
				BufferDir: filepath.Join(t.TempDir(), "buffer-"+code), IntervalUnit: 20 * time.Millisecond,
				FlushInterval: 100 * time.Millisecond, PollWait: time.Second, HTTPClient: &http.Client{Transport: rec, Timeout: 10 * time.Second},
			})
		}()
	}
	for i := 0; i < 5; i++ {
		must(t, env.Client.Create(ctx, &monv1.Monitor{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pg-%d", i), Namespace: "default"},
			Spec: monv1.MonitorSpec{URL: target.URL, IntervalSeconds: 30, Regions: regions, HTTP: &monv1.HTTPConfig{TimeoutMs: 2000}}}))
	}
	waitFor(t, "results to flow", 60*time.Second, func() bool { return len(rec.sent()) >= 50 })

	// Crash PostgreSQL while results flow, keep it down a while, start it.
	before := len(rec.sent())
	must(t, pg.ctl("stop", "-m", "immediate"))
	down := time.Now()
	time.Sleep(8 * time.Second)
	must(t, pg.ctl("start"))
	downFor := time.Since(down)
	waitFor(t, "results after the restart", 60*time.Second, func() bool { return len(rec.sent()) > before+200 })
	// Results first sent in the last seconds before the agents stop may be
	// cut off with them (an agent stopping is not the fault under test);
	// every result first sent before that had seconds of retries with the
	// database up, so each must be stored.
	cutoff := time.Now()
	time.Sleep(5 * time.Second)
	stopAgents()
	agents.Wait()
	time.Sleep(time.Second)

	sent := rec.sent(cutoff)
	all := rec.sent()
	conn, err := pgx.Connect(context.Background(), pg.dsn)
	must(t, err)
	defer conn.Close(context.Background())
	var stored int
	must(t, conn.QueryRow(context.Background(), `SELECT count(*) FROM checks WHERE id = ANY($1)`, sent).Scan(&stored))
	if stored != len(sent) {
		rows, err := conn.Query(context.Background(), `SELECT id FROM checks WHERE id = ANY($1)`, sent)
		must(t, err)
		have := map[string]bool{}
		for rows.Next() {
			var id string
			must(t, rows.Scan(&id))
			have[id] = true
		}
		rows.Close()
		for _, id := range sent {
			if !have[id] {
				t.Logf("lost %s: first sent %s after the crash, acknowledged %d times", id, rec.ids[id].Sub(down).Round(time.Millisecond), rec.acked[id])
			}
		}
	}
	var total, known int
	must(t, conn.QueryRow(context.Background(), `SELECT count(*) FROM checks`).Scan(&total))
	must(t, conn.QueryRow(context.Background(), `SELECT count(*) FROM checks WHERE id = ANY($1)`, all).Scan(&known))
	t.Logf("PostgreSQL down %s; %d result ids sent before the cut-off, %d of them stored; %d checks in the table", downFor.Round(100*time.Millisecond), len(sent), stored, total)
	during := 0
	for _, id := range sent {
		if at := rec.ids[id]; !at.Before(down) && at.Before(down.Add(downFor)) {
			during++
		}
	}
	record(t, "results first sent while PostgreSQL was down (buffered, retried)", fmt.Sprint(during), "> 0", during > 0)
	record(t, fmt.Sprintf("results lost across a %s PostgreSQL crash", downFor.Round(time.Second)), fmt.Sprintf("%d of %d sent", len(sent)-stored, len(sent)), "0", stored == len(sent))
	recordCount(t, "stored checks no agent sent", total-known, 0)
}

func waitFor(t *testing.T, what string, timeout time.Duration, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
