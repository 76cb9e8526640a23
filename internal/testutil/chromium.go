// Package testutil holds helpers shared by test suites: the Debian chromium
// browser for the browser tests, and HTTPS servers with certificates from a
// private CA.
package testutil

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// BrowserTestsEnv, set to "required" (as `make test` and CI do), makes a
// missing chromium fail the browser tests instead of skipping them: the
// README promises that `make test` runs every test.
const BrowserTestsEnv = "UPTIME_BROWSER_TESTS"

// browserAction is what Chromium does about the browser.
type browserAction int

const (
	browserUse     browserAction = iota // chromium is on PATH
	browserInstall                      // install the Debian package first
	browserFail                         // missing and required: fail the test
	browserSkip                         // missing and optional: skip the test
)

// chromiumAction decides: use a chromium on PATH; else install it when
// running as root and the run requires browser tests (or opts in with
// UPTIME_INSTALL_CHROMIUM=1); else fail when required and skip otherwise.
func chromiumAction(found, root, required, optIn bool) browserAction {
	switch {
	case found:
		return browserUse
	case root && (required || optIn):
		return browserInstall
	case required:
		return browserFail
	default:
		return browserSkip
	}
}

// browserRequired reports whether this run must run the browser tests.
func browserRequired() bool {
	return os.Getenv(BrowserTestsEnv) == "required" || os.Getenv("CI") == "true"
}

// TB is what Chromium needs of a test (testing.TB and GinkgoT() both fit).
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Skip(args ...any)
}

// Chromium returns the path of a chromium binary for a browser test,
// installing the Debian package when it is missing and the run is allowed to
// (see chromiumAction). When there is none it fails the test if browser
// tests are required (UPTIME_BROWSER_TESTS=required or CI=true) and skips
// it otherwise, saying what is missing either way.
func Chromium(t TB) string {
	t.Helper()
	path, reason := EnsureChromium()
	if path != "" {
		return path
	}
	if browserRequired() {
		t.Fatalf("this browser test needs chromium and %s=required (or CI=true) is set: %s", BrowserTestsEnv, reason)
		return ""
	}
	fmt.Fprintln(os.Stderr, "skipping a browser test:", reason)
	t.Skip(reason)
	return ""
}

// EnsureChromium returns the path of a chromium binary, installing the
// package when it is missing and the run is allowed to; otherwise it returns
// why there is none.
func EnsureChromium() (path, reason string) {
	p, err := exec.LookPath("chromium")
	switch chromiumAction(err == nil, os.Geteuid() == 0, browserRequired(), os.Getenv("UPTIME_INSTALL_CHROMIUM") == "1") {
	case browserUse:
		return p, ""
	case browserFail, browserSkip:
		return "", "chromium is not installed: install the Debian package (apt-get install chromium), or run `make test` as root, which installs it"
	}
	ictx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	install := func(args ...string) error {
		cmd := exec.CommandContext(ictx, "apt-get", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("apt-get %s: %w: %s", strings.Join(args, " "), err, lastLines(string(out), 5))
		}
		return nil
	}
	if err := install("install", "-y", "--no-install-recommends", "chromium"); err != nil {
		// A fresh machine has no package lists yet.
		if err := install("update"); err != nil {
			return "", "chromium could not be installed: " + err.Error()
		}
		if err := install("install", "-y", "--no-install-recommends", "chromium"); err != nil {
			return "", "chromium could not be installed: " + err.Error()
		}
	}
	p, err = exec.LookPath("chromium")
	if err != nil {
		return "", "chromium is not on PATH after installing it"
	}
	return p, ""
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
