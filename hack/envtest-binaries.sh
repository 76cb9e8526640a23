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
#   - kube-apiserver and kubectl: a throwaway module requiring k8s.io/kubernetes
#     with a replace for every staging module that its go.mod points at
#     ./staging (read from that go.mod, so the list never drifts).
#
# Idempotent: prints the asset directory and exits at once when all three exist.
# Usage: hack/envtest-binaries.sh            (prints the asset dir on the last line)
set -euo pipefail

K8S_VERSION="${K8S_VERSION:-1.37.2}"
STAGING_VERSION="${STAGING_VERSION:-v0.37.2}"
ETCD_VERSION="${ETCD_VERSION:-v3.6.16}"
ASSETS="${KUBEBUILDER_ASSETS_DIR:-$HOME/.local/share/kubebuilder-envtest/k8s/${K8S_VERSION}-linux-amd64}"

say() { echo "envtest-binaries: $*" >&2; }

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
  mkdir -p "$work/k8s"
  (
    cd "$work/k8s"
    go mod init envtest.local/kube >/dev/null 2>&1
    go mod edit -require="k8s.io/kubernetes@v${K8S_VERSION}"
    modfile="$(go mod download -json "k8s.io/kubernetes@v${K8S_VERSION}" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
    for m in $(sed -n 's#^\s*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\1#p' "$modfile"); do
      go mod edit -replace="${m}=${m}@${STAGING_VERSION}"
    done
    cat > tools.go <<'EOF'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
EOF
    say "resolving modules"
    go mod tidy >/dev/null
    if [[ ! -x "$ASSETS/kube-apiserver" ]]; then
      say "compiling kube-apiserver"
      go build -trimpath -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=v${K8S_VERSION}" -o "$ASSETS/kube-apiserver.tmp" k8s.io/kubernetes/cmd/kube-apiserver
      mv "$ASSETS/kube-apiserver.tmp" "$ASSETS/kube-apiserver"
    fi
    if [[ ! -x "$ASSETS/kubectl" ]]; then
      say "compiling kubectl"
      go build -trimpath -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=v${K8S_VERSION}" -o "$ASSETS/kubectl.tmp" k8s.io/kubernetes/cmd/kubectl
      mv "$ASSETS/kubectl.tmp" "$ASSETS/kubectl"
    fi
  )
  say "kube-apiserver and kubectl installed in $ASSETS"
fi

echo "$ASSETS"
