// Package cli implements the subcommands of the uptime-operator binary.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
)

// Version is set at build time with -ldflags "-X .../internal/cli.Version=…".
var Version = "dev"

type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func commands() map[string]command {
	return map[string]command{
		"manager": {"run the controllers, admission webhooks and the API server", runManager},
		"probe":   {"run a probe agent for one region", runProbe},
		"mcp":     {"run the MCP tool server (stdio, or HTTP with --http)", runMCPServer},
		"dev":     {"start a local control plane with the operator, a local region and the API", runDev},
		"keys":    {"create, list and delete API keys (create|list|delete)", runKeys},
		"apply":   {"apply monitor specs from files through the API (monitoring as code, for CI)", runApply},
		"version": {"print the version", func(_ context.Context, _ []string, out, _ io.Writer) error {
			_, err := fmt.Fprintln(out, Version)
			return err
		}},
	}
}

// Main runs the subcommand named by args[0].
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cmds := commands()
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr, cmds)
		if len(args) == 0 {
			return errors.New("no subcommand given")
		}
		return nil
	}
	c, ok := cmds[args[0]]
	if !ok {
		usage(stderr, cmds)
		return fmt.Errorf("unknown subcommand %q", args[0])
	}
	return c.run(ctx, args[1:], stdout, stderr)
}

func usage(w io.Writer, cmds map[string]command) {
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintln(w, "usage: uptime-operator <subcommand> [flags]")
	fmt.Fprintln(w)
	for _, n := range names {
		fmt.Fprintf(w, "  %-8s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'uptime-operator <subcommand> -h' for its flags.")
}

// newFlagSet returns a flag set that reports errors instead of exiting.
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("uptime-operator "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parse parses args and treats -h as success.
func parse(fs *flag.FlagSet, args []string) (bool, error) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}
