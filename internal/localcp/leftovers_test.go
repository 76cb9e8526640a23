package localcp

import (
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestStopLeftovers(t *testing.T) {
	state := t.TempDir()
	other := t.TempDir()
	// Processes that look like etcd of this state and of another one.
	start := func(argv0 string) *exec.Cmd {
		cmd := exec.Command("bash", "-c", `exec -a "$0" sleep 60`, argv0)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd
	}
	mine := start(filepath.Join(state, "etcd", "etcd"))
	theirs := start(filepath.Join(other, "etcd", "etcd"))
	time.Sleep(200 * time.Millisecond) // let exec -a take effect

	t0 := time.Now()
	stopped, err := StopLeftovers(state)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(stopped, mine.Process.Pid) || slices.Contains(stopped, theirs.Process.Pid) {
		t.Fatalf("stopped %v; want %d only", stopped, mine.Process.Pid)
	}
	if time.Since(t0) > 5*time.Second {
		t.Fatalf("stopping took %s", time.Since(t0))
	}
	if err := mine.Wait(); err == nil {
		t.Fatal("the leftover was not stopped")
	}
	if gone(theirs.Process.Pid) {
		t.Fatal("another state's process was stopped")
	}
}
