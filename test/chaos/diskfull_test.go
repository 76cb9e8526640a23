//go:build chaos

package chaos

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/uptime-operator/uptime-operator/internal/manager"
	"github.com/uptime-operator/uptime-operator/internal/store"
)

// TestSQLiteVolumeFull runs the manager with its SQLite file on a small
// tmpfs that the test mounts (in the suite's own mount namespace), fills the
// volume to the last byte and measures: writes fail with an error saying
// the disk is full, /readyz fails, PRAGMA integrity_check stays "ok", no
// acknowledged write is lost, and once space returns /readyz and writes
// recover without a restart.
func TestSQLiteVolumeFull(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=16m"); err != nil {
		t.Fatalf("mount tmpfs: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	dbPath := filepath.Join(dir, "uptime.db")
	health := freeAddr(t)
	env := startEnv(t, manager.Options{Store: dbPath, HealthAddr: health, DefaultPlan: "pro"})
	st := env.Manager.Store
	ctx := context.Background()
	readyz := func() int {
		res, err := http.Get("http://" + health + "/readyz")
		if err != nil {
			return 0
		}
		res.Body.Close()
		return res.StatusCode
	}
	if got := waitStatus(readyz, http.StatusOK, 30*time.Second); got != http.StatusOK {
		t.Fatalf("/readyz before the fault: %d", got)
	}

	// Writes the store acknowledged: none of them may be missing later.
	var acked []string
	seq := 0
	write := func(n int, msg string) error {
		checks := make([]store.Check, n)
		for i := range checks {
			seq++
			checks[i] = store.Check{ID: fmt.Sprintf("chaos-%06d", seq), MonitorID: "m-full", Namespace: "chaos", Region: "eu-1",
				CheckedAt: time.Now(), Status: store.StatusDown, ErrorMessage: msg}
		}
		if _, err := st.InsertChecks(ctx, checks); err != nil {
			return err
		}
		for _, c := range checks {
			acked = append(acked, c.ID)
		}
		return nil
	}
	for i := 0; i < 20; i++ {
		must(t, write(50, strings.Repeat("before ", 50)))
	}

	// Fill the volume: a filler file takes every free byte.
	filler := filepath.Join(dir, "filler")
	f, err := os.Create(filler)
	must(t, err)
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("fill: %v", err)
			}
			break
		}
	}
	for _, size := range []int{4096, 512, 64, 1} {
		for {
			if _, err := f.Write(chunk[:size]); err != nil {
				break
			}
		}
	}
	_ = f.Close()

	var writeErr error
	for i := 0; i < 200 && writeErr == nil; i++ {
		writeErr = write(50, strings.Repeat("during ", 50))
	}
	clear := writeErr != nil && strings.Contains(writeErr.Error(), "full")
	msg := "none (writes still succeed)"
	if writeErr != nil {
		msg = writeErr.Error()
		if i := strings.LastIndex(msg, ": "); i >= 0 {
			msg = msg[i+2:]
		}
	}
	record(t, "a write on the full volume", msg, `an error saying the disk is full`, clear)
	start := time.Now()
	got := waitStatus(readyz, notOK, 30*time.Second)
	record(t, "/readyz while full", fmt.Sprintf("%d after %s", got, time.Since(start).Round(100*time.Millisecond)), "not 200", got != http.StatusOK && got != 0)
	record(t, "integrity_check while full", integrity(t, dbPath), "ok", integrity(t, dbPath) == "ok")

	// Space returns.
	must(t, os.Remove(filler))
	start = time.Now()
	got = waitStatus(readyz, http.StatusOK, 30*time.Second)
	record(t, "/readyz once space returns (no restart)", fmt.Sprintf("%d after %s", got, time.Since(start).Round(100*time.Millisecond)), "200", got == http.StatusOK)
	err = write(50, strings.Repeat("after ", 50))
	record(t, "a write once space returns", errText(err), "ok", err == nil)

	var stored int
	db := openRO(t, dbPath)
	defer db.Close()
	must(t, db.QueryRow(`SELECT count(*) FROM checks WHERE monitor_id = 'm-full'`).Scan(&stored))
	lost := 0
	for _, id := range acked {
		var one int
		if err := db.QueryRow(`SELECT 1 FROM checks WHERE id = ?`, id).Scan(&one); err != nil {
			lost++
		}
	}
	record(t, "acknowledged writes lost", fmt.Sprintf("%d of %d (%d stored)", lost, len(acked), stored), "0", lost == 0)
	record(t, "integrity_check after recovery", integrity(t, dbPath), "ok", integrity(t, dbPath) == "ok")
}

func errText(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

func openRO(t *testing.T, path string) *sql.DB {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	must(t, err)
	return db
}

func integrity(t *testing.T, path string) string {
	db := openRO(t, path)
	defer db.Close()
	var res string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&res); err != nil {
		return err.Error()
	}
	return res
}

// notOK is a want of waitStatus: any answer but 200.
const notOK = -1

// waitStatus polls get until it returns want (notOK: an answer other than
// 200) or timeout passes, and returns the last status.
func waitStatus(get func() int, want int, timeout time.Duration) int {
	deadline := time.Now().Add(timeout)
	for {
		got := get()
		if got == want || (want == notOK && got != http.StatusOK && got != 0) || time.Now().After(deadline) {
			return got
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// freeAddr returns a loopback address with a port free right now.
// handedOut are the ports freeAddr returned: a closed listener's port is free
// again at once, so the kernel may hand the same port to the next
// Listen(":0"), and two servers of one test would then race for it.
var handedOut sync.Map

// freeAddr returns a loopback address that nothing listens on and that no
// earlier call returned.
func freeAddr(t *testing.T) string {
	for {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		must(t, err)
		addr := ln.Addr().String()
		_ = ln.Close()
		if _, taken := handedOut.LoadOrStore(addr, true); !taken {
			return addr
		}
	}
}
