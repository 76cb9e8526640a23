package testutil

import (
	"fmt"
	"os"
)

// PostgresDSNEnv names the PostgreSQL server that the store's conformance
// tests, the replica tests and the benchmarks use; `make test` and CI start
// one with hack/postgres.sh and set it.
const PostgresDSNEnv = "UPTIME_TEST_POSTGRES_DSN"

// PostgresDSN returns the test server's DSN. Without one it fails the test
// when every test must run (CI=true, or UPTIME_BROWSER_TESTS=required as
// `make test` sets) and skips it otherwise, saying how to start a server.
func PostgresDSN(t TB) string {
	t.Helper()
	if dsn := os.Getenv(PostgresDSNEnv); dsn != "" {
		return dsn
	}
	reason := fmt.Sprintf("%s is not set; start a server with: eval \"$(hack/postgres.sh | tail -n1)\"", PostgresDSNEnv)
	if browserRequired() {
		t.Fatalf("this test needs PostgreSQL: %s", reason)
		return ""
	}
	t.Skip(reason)
	return ""
}
