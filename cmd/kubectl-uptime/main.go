// Command kubectl-uptime is the kubectl plugin `kubectl uptime`: incidents,
// checks and explanations of uptime-operator from kubectl, through
// kube-apiserver with the user's kubeconfig (docs/kubectl.md).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/uptime-operator/uptime-operator/internal/kubectlplugin"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := kubectlplugin.Main(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "kubectl uptime:", kubectlplugin.EscapeControl(err.Error()))
		os.Exit(1)
	}
}
