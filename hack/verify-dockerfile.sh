#!/usr/bin/env bash
# Checks what can be checked of the Dockerfile without a container engine:
# its Go version is at least go.mod's, its build command (run here with the
# same environment and flags) gives a static binary whose version comes from
# the -X flag, the entrypoint command exists, and the final stage runs as
# the non-root user the chart expects (65532) on the distroless static base.
# Usage: hack/verify-dockerfile.sh
set -euo pipefail

cd "$(dirname "$0")/.."
fail() { echo "verify-dockerfile: $*" >&2; exit 1; }

image_go="$(sed -n 's/^ARG GO_VERSION=\([0-9.]*\)$/\1/p' Dockerfile)"
mod_go="$(sed -n 's/^go \([0-9]*\.[0-9]*\).*/\1/p' go.mod)"
[[ -n "$image_go" && -n "$mod_go" ]] || fail "cannot read ARG GO_VERSION from Dockerfile or the go directive of go.mod"
if [[ "$(printf '%s\n%s\n' "$mod_go" "$image_go" | sort -V | head -1)" != "$mod_go" ]]; then
  fail "the builder image's Go ($image_go) is older than go.mod's ($mod_go)"
fi

# The build line of the Dockerfile, with its continuation lines joined.
build="$(awk '/go build/{p=1} p{print} p&&!/\\$/{exit}' Dockerfile | tr -d '\\\n')"
[[ "$build" == *"-trimpath"* ]] || fail "the Dockerfile's go build lost -trimpath"
xflag="$(grep -o -- '-X [^ ]*\.Version=' Dockerfile | head -1 | sed 's/^-X //; s/=$//')"
[[ -n "$xflag" ]] || fail "the Dockerfile sets no Version with -X"
grep -q '^ENV CGO_ENABLED=0' Dockerfile || fail "the Dockerfile no longer builds with CGO_ENABLED=0"
grep -q '^FROM gcr.io/distroless/static:nonroot' Dockerfile || fail "the final stage is not distroless static nonroot"
grep -q '^USER 65532:65532' Dockerfile || fail "the final stage does not run as 65532 (the chart's runAsUser)"
grep -q 'runAsUser: 65532' charts/uptime-operator/values.yaml charts/uptime-operator/templates/*.yaml ||
  fail "the chart no longer runs the image as 65532"
cmd="$(sed -n 's/^CMD \["\([a-z-]*\)"\]$/\1/p' Dockerfile)"
[[ -n "$cmd" ]] || fail "no CMD subcommand in the Dockerfile"

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
CGO_ENABLED=0 GOFLAGS=-buildvcs=false GOOS=linux GOARCH=amd64 \
  go build -trimpath -ldflags "-s -w -X ${xflag}=v0.0.0-verify" -o "$out/uptime-operator" .
if readelf -l "$out/uptime-operator" | grep -q INTERP; then
  fail "the binary is dynamically linked; the distroless static image has no libc"
fi
[[ "$("$out/uptime-operator" version)" == *"v0.0.0-verify"* ]] || fail "-X $xflag does not set the version"
"$out/uptime-operator" "$cmd" --help >/dev/null 2>&1 || fail "the entrypoint's CMD '$cmd' is not a command of the binary"
echo "verify-dockerfile: ok: Go $image_go >= $mod_go, static binary ($(du -h "$out/uptime-operator" | cut -f1)), version from -X, CMD '$cmd' runs"
