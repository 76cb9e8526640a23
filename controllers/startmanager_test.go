package controllers_test

import (
	"os"
	"testing"

	"github.com/uptime-operator/uptime-operator/internal/manager"
	"github.com/uptime-operator/uptime-operator/internal/testenv"
)

// startManager runs the real manager on envtest for one test and stops it
// when the test ends. Without envtest's binaries the test is skipped, except
// in CI, where it must not pass quietly (make test sets them).
func startManager(t *testing.T, opts manager.Options) *testenv.Env {
	t.Helper()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" && os.Getenv("CI") != "true" {
		t.Skip("KUBEBUILDER_ASSETS is not set (make test sets it)")
	}
	env, err := testenv.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(env.Stop)
	return env
}
