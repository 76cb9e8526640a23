#!/usr/bin/env bash
# Builds a binary of the Prometheus Go module that hack/promtools/go.mod
# requires, once, into a cache outside the clone, and prints its path:
#   hack/prom-binary.sh promtool     # the rule tests (hack/test-rules.sh)
#   hack/prom-binary.sh prometheus   # the server make e2e scrapes with
# ${XDG_CACHE_HOME:-~/.cache}/uptime-operator/<name>-<version>/<name>.
# Minutes on a cold Go build cache; nothing is downloaded but Go modules.
set -euo pipefail
cd "$(dirname "$0")/.."
name="${1:?usage: hack/prom-binary.sh promtool|prometheus}"
case "$name" in promtool | prometheus) ;; *) echo "prom-binary: unknown binary $name" >&2; exit 2 ;; esac
cache_root="${XDG_CACHE_HOME:-$HOME/.cache}/uptime-operator"
version="$(awk '$1 == "github.com/prometheus/prometheus" {print $2}' hack/promtools/go.mod | head -n1)"
[[ -n "$version" ]] || { echo "prom-binary: no github.com/prometheus/prometheus in hack/promtools/go.mod" >&2; exit 1; }
bin="$cache_root/$name-$version/$name"
if [[ ! -x "$bin" ]]; then
  echo "prom-binary: building $name $version from the Go module proxy into $(dirname "$bin") (once; minutes on a cold cache)" >&2
  mkdir -p "$(dirname "$bin")"
  (cd hack/promtools && CGO_ENABLED=0 GOFLAGS=-buildvcs=false go build -trimpath -o "$bin.tmp" "github.com/prometheus/prometheus/cmd/$name")
  mv "$bin.tmp" "$bin"
fi
echo "$bin"
