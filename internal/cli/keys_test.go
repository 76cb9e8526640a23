package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestKeysHelpWithoutCluster: help of the keys command needs no kubeconfig
// (issue 28 row 8: `uptime-operator keys -h` exited 1 with a kubeconfig
// error); an unknown verb is refused before any cluster is asked.
func TestKeysHelpWithoutCluster(t *testing.T) {
	t.Setenv("KUBECONFIG", "/nonexistent/kubeconfig")
	t.Setenv("HOME", t.TempDir())
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	for _, args := range [][]string{{"keys", "-h"}, {"keys", "--help"}, {"keys", "help"}, {"keys", "create", "-h"}, {"keys", "list", "--help"}} {
		var stdout, stderr bytes.Buffer
		if err := Main(context.Background(), args, &stdout, &stderr); err != nil {
			t.Errorf("%v: %v (stderr %q)", args, err, stderr.String())
		}
		if !strings.Contains(stderr.String(), "usage") && !strings.Contains(stderr.String(), "-namespace") {
			t.Errorf("%v printed no help: %q", args, stderr.String())
		}
	}
	var stdout, stderr bytes.Buffer
	err := Main(context.Background(), []string{"keys", "rotate"}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), `unknown keys command "rotate"`) {
		t.Errorf("keys rotate: %v", err)
	}
}
