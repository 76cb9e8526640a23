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
"$(dirname "$0")/host-deps.sh" chromium chromium "the browser tests"
