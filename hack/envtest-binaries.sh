#!/usr/bin/env bash
# Builds the control-plane binaries that envtest and `uptime-operator dev` need
# (kube-apiserver, etcd and a matching kubectl) from the Go module proxy, and
# installs them where setup-envtest would put them, so every later run reuses them.
#
# No download site for prebuilt binaries is reachable from CI, but the Go module
# proxy is: both programs build from their published modules.
#   - etcd: a throwaway module requiring go.etcd.io/etcd/server/v3 (a
#     dependency's replace directives are ignored, so the server module is built
#     directly).
#   - kube-apiserver and kubectl: built by hack/lib/k8s-build.sh (a throwaway
#     module requiring k8s.io/kubernetes with its staging modules replaced).
#
# Idempotent: prints the asset directory and exits at once when all three exist.
# Usage: hack/envtest-binaries.sh            (prints the asset dir on the last line)
set -euo pipefail

K8S_VERSION="${K8S_VERSION:-1.37.2}"
STAGING_VERSION="${STAGING_VERSION:-v0.37.2}"
ETCD_VERSION="${ETCD_VERSION:-v3.6.16}"
ASSETS="${KUBEBUILDER_ASSETS_DIR:-$HOME/.local/share/kubebuilder-envtest/k8s/${K8S_VERSION}-linux-amd64}"

say() { echo "envtest-binaries: $*" >&2; }
# shellcheck source=hack/lib/k8s-build.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/k8s-build.sh"

if [[ -x "$ASSETS/kube-apiserver" && -x "$ASSETS/etcd" && -x "$ASSETS/kubectl" ]]; then
  echo "$ASSETS"
  exit 0
fi

mkdir -p "$ASSETS"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export GOFLAGS="-buildvcs=false"
export CGO_ENABLED=0

if [[ ! -x "$ASSETS/etcd" ]]; then
  say "building etcd ${ETCD_VERSION} from the Go module proxy (a few minutes on a cold cache)"
  mkdir -p "$work/etcd"
  (
    cd "$work/etcd"
    go mod init envtest.local/etcd >/dev/null 2>&1
    go mod edit -require="go.etcd.io/etcd/server/v3@${ETCD_VERSION}"
    go mod tidy >/dev/null 2>&1 || true
    go get "go.etcd.io/etcd/server/v3@${ETCD_VERSION}" >/dev/null 2>&1
    go build -trimpath -o "$ASSETS/etcd.tmp" go.etcd.io/etcd/server/v3
  )
  mv "$ASSETS/etcd.tmp" "$ASSETS/etcd"
  say "etcd installed in $ASSETS"
fi

if [[ ! -x "$ASSETS/kube-apiserver" || ! -x "$ASSETS/kubectl" ]]; then
  say "building kube-apiserver and kubectl v${K8S_VERSION} from the Go module proxy (about 10 minutes on a cold cache)"
  cmds=()
  [[ -x "$ASSETS/kube-apiserver" ]] || cmds+=(kube-apiserver)
  [[ -x "$ASSETS/kubectl" ]] || cmds+=(kubectl)
  k8s_build "$work/k8s" "$ASSETS" "$K8S_VERSION" "$STAGING_VERSION" "${cmds[@]}"
  say "kube-apiserver and kubectl installed in $ASSETS"
fi

echo "$ASSETS"
