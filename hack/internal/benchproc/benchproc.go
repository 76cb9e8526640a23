// Package benchproc starts the processes that the benchmark harnesses under
// hack/ measure (bench-peers, bench-scale).
package benchproc

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// Start runs bin with args and the extra environment env, its output going
// to a new file at logPath. The process is killed if the harness dies, so an
// interrupted run leaves nothing behind.
func Start(bin string, args, env []string, logPath string) (*exec.Cmd, *os.File, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, nil, fmt.Errorf("start %s: %w", bin, err)
	}
	return cmd, logf, nil
}
