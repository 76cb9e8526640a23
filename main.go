// Command uptime-operator is the single binary of uptime-operator. Its
// subcommands are the manager (controllers, webhooks, APIs), the probe agent,
// the MCP server, the local development environment and API key management.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/uptime-operator/uptime-operator/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := cli.Main(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "uptime-operator:", err)
		os.Exit(cli.ExitCode(err))
	}
}
