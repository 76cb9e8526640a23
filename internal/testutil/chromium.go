// Package testutil holds helpers shared by test suites: installing the
// Debian chromium browser for the browser tests, and HTTPS servers with
// certificates from a private CA.
package testutil

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// EnsureChromium returns the path of a chromium binary, installing the
// package when it is missing and the run is allowed to (root, and CI=true
// or UPTIME_INSTALL_CHROMIUM=1). Otherwise it returns why the browser test is
// skipped.
func EnsureChromium() (path, skipReason string) {
	if p, err := exec.LookPath("chromium"); err == nil {
		return p, ""
	}
	if os.Geteuid() != 0 || (os.Getenv("CI") != "true" && os.Getenv("UPTIME_INSTALL_CHROMIUM") != "1") {
		return "", "chromium is not installed; run as root with CI=true or UPTIME_INSTALL_CHROMIUM=1 to install the Debian package"
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
	p, err := exec.LookPath("chromium")
	if err != nil {
		return "", "chromium is not on PATH after installing it"
	}
	return p, ""
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
