package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/uptime-operator/uptime-operator/internal/apikeys"
	"github.com/uptime-operator/uptime-operator/internal/manager"
)

// runKeys manages API keys with the kubeconfig from the usual places
// (--kubeconfig, $KUBECONFIG, ~/.kube/config, in-cluster).
func runKeys(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	const keysUsage = "usage: uptime-operator keys create|list|delete [flags]; 'uptime-operator keys create -h' shows the flags"
	if len(args) == 0 {
		return errors.New(keysUsage)
	}
	verb := args[0]
	// Help and unknown verbs are answered before any kubeconfig is loaded,
	// so `keys -h` works on a machine without a cluster.
	switch verb {
	case "-h", "-help", "--help", "help":
		fmt.Fprintln(stderr, keysUsage)
		return nil
	case "create", "list", "delete":
	default:
		return fmt.Errorf("unknown keys command %q; %s", verb, keysUsage)
	}
	fs := newFlagSet("keys "+verb, stderr)
	ns := fs.String("namespace", "default", "workspace (namespace) of the key")
	name := fs.String("name", "", "key name (create), or name or prefix of the key to delete")
	level := fs.String("level", "read-only", "access level: read-only, standard or automation")
	if ok, err := parse(fs, args[1:]); !ok || err != nil {
		return err
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("load kubeconfig: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: manager.Scheme()})
	if err != nil {
		return fmt.Errorf("create client: %w", err)
	}
	switch verb {
	case "create":
		lvl, err := apikeys.ParseLevel(*level)
		if err != nil {
			return err
		}
		key, k, err := apikeys.Create(ctx, c, *ns, *name, lvl)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "created %s key %q in namespace %s (secret %s); it is shown only once:\n", k.Level, k.Name, k.Namespace, k.SecretName)
		fmt.Fprintln(stdout, key)
		return nil
	case "list":
		keys, err := apikeys.List(ctx, c, *ns)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tLEVEL\tPREFIX\tCREATED\tDISABLED\tSECRET")
		for _, k := range keys {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%t\t%s\n", k.Name, k.Level, k.DisplayPrefix, k.CreatedAt.UTC().Format("2006-01-02T15:04:05Z"), k.Disabled, k.SecretName)
		}
		return tw.Flush()
	case "delete":
		if *name == "" {
			return fmt.Errorf("--name is required (the key's name or prefix)")
		}
		if err := apikeys.Delete(ctx, c, *ns, *name); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "deleted key %q from namespace %s\n", *name, *ns)
		return nil
	}
	return fmt.Errorf("unknown keys verb %q: use create, list or delete", verb)
}
