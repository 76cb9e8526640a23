# shellcheck shell=bash
# Sourced by hack/envtest-binaries.sh and hack/cluster-binaries.sh: builds
# programs of k8s.io/kubernetes from the Go module proxy (no download site for
# prebuilt binaries is reachable here).
#
# k8s.io/kubernetes cannot be required as a plain module: its go.mod points
# every staging module (k8s.io/api, k8s.io/apiserver, ...) at ./staging, and a
# dependency's replace directives are ignored. So the build happens in a
# throwaway module that requires k8s.io/kubernetes and replaces each staging
# module with its published version, the list read from that go.mod so that
# it never drifts.

# k8s_build WORKDIR DEST VERSION STAGING_VERSION CMD... compiles
# k8s.io/kubernetes/cmd/CMD for each CMD into DEST/CMD (written to a .tmp file
# first, so an interrupted build never leaves a half-written binary).
k8s_build() {
  local work="$1" dest="$2" version="$3" staging="$4"
  shift 4
  mkdir -p "$work" "$dest"
  (
    cd "$work"
    go mod init build.local/kube >/dev/null 2>&1
    go mod edit -require="k8s.io/kubernetes@v${version}"
    local modfile m b
    modfile="$(go mod download -json "k8s.io/kubernetes@v${version}" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
    for m in $(sed -n 's#^\s*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\1#p' "$modfile"); do
      go mod edit -replace="${m}=${m}@${staging}"
    done
    {
      printf '//go:build tools\n\npackage tools\n\nimport (\n'
      for b in "$@"; do printf '\t_ "k8s.io/kubernetes/cmd/%s"\n' "$b"; done
      printf ')\n'
    } > tools.go
    echo "k8s-build: resolving modules" >&2
    go mod tidy >/dev/null
    for b in "$@"; do
      echo "k8s-build: compiling $b v${version}" >&2
      CGO_ENABLED=0 GOFLAGS=-buildvcs=false go build -trimpath \
        -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=v${version}" \
        -o "$dest/$b.tmp" "k8s.io/kubernetes/cmd/$b"
      mv "$dest/$b.tmp" "$dest/$b"
    done
  )
}
