#!/usr/bin/env bash
# Prints a cosign binary: $COSIGN, cosign on PATH, or the one built from the
# Go module proxy into the cache (once; minutes: cosign has many modules).
# hack/releasetool's test verifies a release with it when COSIGN names it:
#   COSIGN="$(hack/cosign-binary.sh)" go -C hack/releasetool test ./...
# v2.6.5 is the newest cosign that builds with this repository's Go (1.26);
# its verify-blob, verify-blob-attestation and verify take --key and
# --insecure-ignore-tlog as docs/install.md shows.
set -euo pipefail
COSIGN_VERSION="${COSIGN_VERSION:-v2.6.5}"
if [[ -n "${COSIGN:-}" && -x "${COSIGN}" ]]; then echo "$COSIGN"; exit 0; fi
if command -v cosign >/dev/null; then command -v cosign; exit 0; fi
cache="${XDG_CACHE_HOME:-$HOME/.cache}/uptime-operator/cosign-$COSIGN_VERSION"
if [[ ! -x "$cache/cosign" ]]; then
  echo "building cosign $COSIGN_VERSION from the Go module proxy into $cache (once)" >&2
  mkdir -p "$cache"
  (cd "$cache" && GOBIN="$cache" GOFLAGS=-buildvcs=false go install "github.com/sigstore/cosign/v2/cmd/cosign@$COSIGN_VERSION") >&2
fi
echo "$cache/cosign"
