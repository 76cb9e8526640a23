#!/usr/bin/env bash
# Makes sure the browser tests can run: they drive the Debian chromium package
# headless (status page rendering, the website-health audit over the DevTools
# protocol; no chromedriver is involved). `make test` runs this first and then
# runs the tests with UPTIME_BROWSER_TESTS=required, so a missing browser fails
# them instead of skipping them.
#
# chromium on PATH: nothing to do. Missing and root: installs it with apt-get,
# as CI does. Missing and not root: exits 1 saying what to install.
set -euo pipefail

if command -v chromium >/dev/null 2>&1; then
	exit 0
fi
if [[ "$(id -u)" != 0 ]]; then
	echo "browser-deps: chromium is missing; the browser tests need it." >&2
	echo "browser-deps: install it with 'sudo apt-get install --no-install-recommends chromium' (or run make test as root)." >&2
	exit 1
fi
echo "browser-deps: installing chromium for the browser tests (apt-get, once)" >&2
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y --no-install-recommends chromium >/tmp/browser-deps-apt.log 2>&1; then
	apt-get update >>/tmp/browser-deps-apt.log 2>&1 || true
	if ! apt-get install -y --no-install-recommends chromium >>/tmp/browser-deps-apt.log 2>&1; then
		echo "browser-deps: apt-get could not install chromium; last lines of /tmp/browser-deps-apt.log:" >&2
		tail -n 5 /tmp/browser-deps-apt.log >&2
		exit 1
	fi
fi
command -v chromium >/dev/null 2>&1 || { echo "browser-deps: chromium is not on PATH after installing it" >&2; exit 1; }
echo "browser-deps: $(chromium --version 2>/dev/null || echo chromium installed)" >&2
