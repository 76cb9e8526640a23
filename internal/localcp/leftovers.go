package localcp

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// StopLeftovers stops etcd and kube-apiserver processes still running on
// stateDir: a dev environment killed with SIGKILL cannot stop its children,
// and a new one on the same state would find etcd's data directory locked
// and the ports taken. It reports the processes it stopped. Processes are
// found by their command line naming stateDir's etcd data or
// kube-apiserver certificate directory (Linux /proc).
func StopLeftovers(stateDir string) ([]int, error) {
	markers := [][]byte{
		[]byte(filepath.Join(stateDir, "etcd")),
		[]byte(filepath.Join(stateDir, "apiserver")),
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, nil // not Linux: nothing to look at
	}
	var stopped []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		exe := filepath.Base(string(bytes.SplitN(cmdline, []byte{0}, 2)[0]))
		if exe != "etcd" && exe != "kube-apiserver" {
			continue
		}
		for _, m := range markers {
			if bytes.Contains(cmdline, m) {
				if err := stop(pid); err != nil {
					return stopped, fmt.Errorf("stop leftover %s (pid %d): %w", exe, pid, err)
				}
				stopped = append(stopped, pid)
				break
			}
		}
	}
	return stopped, nil
}

// stop sends SIGTERM, then SIGKILL if the process is still there after 10 s.
func stop(pid int) error {
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		if err == syscall.ESRCH {
			return nil
		}
		return err
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if gone(pid) {
			return nil
		}
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && err != syscall.ESRCH {
		return err
	}
	return nil
}

// gone reports whether pid has exited: no such process, or a zombie
// waiting for its parent.
func gone(pid int) bool {
	if syscall.Kill(pid, 0) == syscall.ESRCH {
		return true
	}
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	// The state follows the parenthesised command name: "pid (comm) S ...".
	if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
		return stat[i+2] == 'Z'
	}
	return false
}
