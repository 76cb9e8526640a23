package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProbeRefusesShortToken: an agent whose token file holds fewer than
// probeapi.MinRegionTokenLength characters does not start, and says why.
func TestProbeRefusesShortToken(t *testing.T) {
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("letmein-letmein\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := runProbe(context.Background(), []string{"--region", "eu", "--server", "http://127.0.0.1:1", "--token-file", tokenFile, "--listen", ""}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "at least 32") {
		t.Fatalf("a 15-character token: %v, want refused naming the minimum", err)
	}
}
