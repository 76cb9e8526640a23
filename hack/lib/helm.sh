# shellcheck shell=bash
# find_helm prints a helm binary: $HELM, helm on PATH, or the one built from
# the Go module proxy into the cache (once; hack/cluster-binaries.sh builds
# the same one). Prints nothing and fails when none can be had.
# Sourced by hack/verify-chart.sh and hack/release.sh.
HELM_VERSION="${HELM_VERSION:-v3.19.0}"
find_helm() {
  if [[ -n "${HELM:-}" && -x "${HELM}" ]]; then echo "$HELM"; return; fi
  if command -v helm >/dev/null; then command -v helm; return; fi
  local cache="${XDG_CACHE_HOME:-$HOME/.cache}/uptime-operator/helm-$HELM_VERSION"
  if [[ -x "$cache/helm" ]]; then echo "$cache/helm"; return; fi
  echo "building helm $HELM_VERSION from the Go module proxy into $cache (once)" >&2
  mkdir -p "$cache"
  local log
  log="$(mktemp)"
  if (cd "$cache" && GOBIN="$cache" GOFLAGS=-buildvcs=false go install "helm.sh/helm/v3/cmd/helm@$HELM_VERSION") >"$log" 2>&1; then
    rm -f "$log"
    echo "$cache/helm"
  else
    tail -5 "$log" >&2
    rm -f "$log"
    return 1
  fi
}
