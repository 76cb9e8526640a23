// Command pause is the sandbox ("pause") container of the local cluster that
// hack/cluster.sh runs: it holds a Pod's namespaces open and does nothing
// else. Kubernetes' own pause image is a C program pulled from a registry;
// none can be pulled here, so this static Go program is built into an image
// tagged registry.k8s.io/pause:3.10 instead.
//
// As PID 1 of the sandbox it exits on SIGINT or SIGTERM (the runtime stops a
// sandbox with them) and reaps the zombies that PID 1 inherits.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range sigs {
		if s == syscall.SIGCHLD {
			for {
				var ws syscall.WaitStatus
				pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
				if pid <= 0 || err != nil {
					break
				}
			}
			continue
		}
		os.Exit(0)
	}
}
