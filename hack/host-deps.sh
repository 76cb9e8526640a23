#!/usr/bin/env bash
# Makes sure a host program a make target needs is installed: COMMAND on PATH,
# or, when missing and root, the Debian PACKAGE installed with apt-get (as CI
# does on a fresh machine); missing and not root: exits 1 saying what to
# install. `make test` uses it for chromium (hack/browser-deps.sh) and
# `make chaos` for nft (nftables).
#
# Usage: hack/host-deps.sh COMMAND PACKAGE WHO-NEEDS-IT
set -euo pipefail
cmd="$1" pkg="$2" why="$3"
if command -v "$cmd" >/dev/null 2>&1; then
	exit 0
fi
if [[ "$(id -u)" != 0 ]]; then
	echo "host-deps: $cmd is missing; $why need(s) it." >&2
	echo "host-deps: install it with 'sudo apt-get install --no-install-recommends $pkg' (or run make as root)." >&2
	exit 1
fi
echo "host-deps: installing $pkg for $why (apt-get, once)" >&2
export DEBIAN_FRONTEND=noninteractive
log="/tmp/host-deps-$pkg-apt.log"
if ! apt-get install -y --no-install-recommends "$pkg" >"$log" 2>&1; then
	apt-get update >>"$log" 2>&1 || true
	if ! apt-get install -y --no-install-recommends "$pkg" >>"$log" 2>&1; then
		echo "host-deps: apt-get could not install $pkg; last lines of $log:" >&2
		tail -n 5 "$log" >&2
		exit 1
	fi
fi
command -v "$cmd" >/dev/null 2>&1 || { echo "host-deps: $cmd is not on PATH after installing $pkg" >&2; exit 1; }
