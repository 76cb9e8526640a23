#!/usr/bin/env bash
# Builds the node binaries that hack/cluster.sh needs and that envtest does not:
# kube-controller-manager, kube-scheduler, kubelet and kube-proxy from
# k8s.io/kubernetes, CoreDNS from github.com/coredns/coredns, and helm (for
# `make e2e`) from helm.sh/helm/v3, all from the
# Go module proxy (no download site for prebuilt binaries is reachable here).
#
# The Kubernetes programs are built as hack/envtest-binaries.sh builds its own,
# by hack/lib/k8s-build.sh.
#
# The binaries are cached outside the clone, so only the first run pays for the
# build (about 6 minutes of CPU for the four Kubernetes programs and 4 for
# CoreDNS on a 2-core machine with a warm module cache).
#
# Idempotent: prints the binary directory and exits at once when all exist.
# Usage: hack/cluster-binaries.sh            (prints the binary dir on the last line)
set -euo pipefail

K8S_VERSION="${K8S_VERSION:-1.37.2}"
STAGING_VERSION="${STAGING_VERSION:-v0.37.2}"
COREDNS_VERSION="${COREDNS_VERSION:-v1.14.7}"
# helm is the one hack/verify-chart.sh builds for `make verify` (same version, same cache).
HELM_VERSION="${HELM_VERSION:-v3.19.0}"
HELM_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/uptime-operator/helm-$HELM_VERSION"
CACHE="${UPTIME_CLUSTER_CACHE:-$HOME/.cache/uptime-operator/cluster}"
BIN="$CACHE/bin/k8s-${K8S_VERSION}"

say() { echo "cluster-binaries: $*" >&2; }
# shellcheck source=hack/lib/k8s-build.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/k8s-build.sh"

k8s_bins=(kube-controller-manager kube-scheduler kubelet kube-proxy)
missing=()
for b in "${k8s_bins[@]}"; do [[ -x "$BIN/$b" ]] || missing+=("$b"); done
if [[ ${#missing[@]} -eq 0 && -x "$BIN/coredns" && -x "$HELM_DIR/helm" ]]; then
  ln -sf "$HELM_DIR/helm" "$BIN/helm"
  echo "$BIN"
  exit 0
fi

mkdir -p "$BIN"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export GOFLAGS="-buildvcs=false"
export CGO_ENABLED=0

if [[ ${#missing[@]} -gt 0 ]]; then
  say "building ${missing[*]} v${K8S_VERSION} from the Go module proxy (several minutes)"
  k8s_build "$work/k8s" "$BIN" "$K8S_VERSION" "$STAGING_VERSION" "${missing[@]}"
fi

if [[ ! -x "$BIN/coredns" ]]; then
  say "building CoreDNS ${COREDNS_VERSION} from the Go module proxy (a few minutes)"
  mkdir -p "$work/coredns"
  (
    cd "$work/coredns"
    go mod init cluster.local/coredns >/dev/null 2>&1
    go mod edit -require="github.com/coredns/coredns@${COREDNS_VERSION}"
    # The module's own go.mod has no replace directives that matter for the
    # plugins compiled in by default, so building its main package works.
    printf '//go:build tools\n\npackage tools\n\nimport _ "github.com/coredns/coredns"\n' > tools.go
    go mod tidy >/dev/null
    go build -trimpath -ldflags "-s -w" -o "$BIN/coredns.tmp" github.com/coredns/coredns
    mv "$BIN/coredns.tmp" "$BIN/coredns"
  )
fi

if [[ ! -x "$HELM_DIR/helm" ]]; then
  # helm drives `make e2e` as a cluster admin would.
  say "building helm ${HELM_VERSION} from the Go module proxy"
  GOBIN="$HELM_DIR" go install "helm.sh/helm/v3/cmd/helm@${HELM_VERSION}"
fi
ln -sf "$HELM_DIR/helm" "$BIN/helm"

echo "$BIN"
