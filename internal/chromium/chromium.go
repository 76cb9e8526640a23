package chromium

import (
	"os"
	"os/exec"

	"github.com/chromedp/chromedp"
)

// Names are the browser binaries Find looks up on PATH, in order.
var Names = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"}

// Find returns the browser binary to use: path when it is set (and
// exists), else the first of Names on PATH; "" when there is none.
func Find(path string) string {
	if path != "" {
		if _, err := os.Stat(path); err == nil {
			return path
		}
		return ""
	}
	for _, n := range Names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	return ""
}

// Options are the allocator options of a headless Chromium at path with
// its own profile directory (userDataDir, which the caller makes and
// removes) whose traffic all goes through proxyURL (a GuardProxy),
// loopback included so the guard sees it too. The flags keep it quiet and
// runnable as root in a container: no sandbox (Pods drop the capabilities
// it needs), no GPU, no QUIC (which would bypass the HTTP proxy), no
// first-run, sync, component-update or background requests, and no
// /dev/shm (small in containers).
func Options(path, userDataDir, proxyURL string) []chromedp.ExecAllocatorOption {
	return []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("proxy-server", proxyURL),
		// Loopback goes through the proxy too, so the guard sees it.
		chromedp.Flag("proxy-bypass-list", "<-loopback>"),
		chromedp.UserDataDir(userDataDir),
	}
}
