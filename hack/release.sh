#!/usr/bin/env bash
# Builds a release of uptime-operator into RELEASE_DIR (default dist/). One
# version names everything: the tag vX.Y.Z; the chart's version and
# appVersion, the image tag and the file names X.Y.Z; the binaries'
# `version` and the krew manifest vX.Y.Z. VERSION may be given with or
# without the leading v.
#
#   uptime-operator-X.Y.Z.tgz                   the chart package (helm package)
#   uptime-operator-image-X.Y.Z.tar             the image archive: an OCI image index
#                                               for linux/amd64 and linux/arm64 (OCI
#                                               layout; docker load takes amd64)
#   uptime-operator-image-X.Y.Z.digest          the image index's digest
#   uptime-operator_X.Y.Z_linux_{amd64,arm64}   the binaries (manager, agent, CLI)
#   kubectl-uptime_vX.Y.Z_{linux,darwin}_{amd64,arm64}.tar.gz
#   kubectl-uptime_vX.Y.Z.krew.yaml             the kubectl plugin and its krew manifest
#   *.cdx.json                                  CycloneDX SBOMs of each binary and of the image
#   uptime-operator-X.Y.Z.intoto.json           in-toto statement, SLSA provenance v1
#   SHA256SUMS                                  checksums of all the above
# and, with SIGNING_KEY (a cosign key; its password in COSIGN_PASSWORD):
#   SHA256SUMS.sig, uptime-operator-X.Y.Z.tgz.sig          cosign verify-blob signatures
#   uptime-operator-image-X.Y.Z.{payload.json,sig}         the image signature (cosign attach)
#   uptime-operator-X.Y.Z.intoto.jsonl          the provenance, signed (DSSE)
#   cosign.pub                                  the public key
# hack/releasetool writes the SBOMs, provenance and signatures (docs/install.md,
# "Verifying a release"). The image is tagged IMAGE_REPO:X.Y.Z, the tag the
# packaged chart uses by default. CHANGELOG.md must have a "## [X.Y.Z]" section.
#
# Usage: hack/release.sh VERSION      (make release VERSION=vX.Y.Z [SIGNING_KEY=cosign.key])
set -euo pipefail
cd "$(dirname "$0")/.."
version="${1:-}"
version="${version#v}"
if [[ ! "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
  echo "release: VERSION must be a semantic version vX.Y.Z or X.Y.Z (got '${1:-}')" >&2
  exit 1
fi
if ! grep -q "^## \[$version\]" CHANGELOG.md; then
  echo "release: CHANGELOG.md has no '## [$version]' section" >&2
  exit 1
fi
dir="${RELEASE_DIR:-$PWD/dist}"
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
key=""
if [[ -n "${SIGNING_KEY:-}" ]]; then
  [[ -r "$SIGNING_KEY" ]] || { echo "release: SIGNING_KEY $SIGNING_KEY cannot be read" >&2; exit 1; }
  key="$(cd "$(dirname "$SIGNING_KEY")" && pwd)/$(basename "$SIGNING_KEY")"
fi
platforms="${RELEASE_PLATFORMS:-linux/amd64 linux/arm64}"
# shellcheck source=hack/lib/helm.sh
source hack/lib/helm.sh
helm_bin="$(find_helm)"
commit="$(git rev-parse HEAD 2>/dev/null || echo unknown)"
dirty=()
if [[ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]]; then
  dirty=(-dirty)
  echo "release: the work tree has uncommitted changes; the provenance says so" >&2
fi

tar="$dir/uptime-operator-image-$version.tar"
export IMAGE_REPO="${IMAGE_REPO:-ghcr.io/uptime-operator/uptime-operator}"
make --no-print-directory image IMAGE_TAG="$version" IMAGE_TAR="$tar" IMAGE_PLATFORMS="$platforms" \
  IMAGE_DIGEST_FILE="$dir/uptime-operator-image-$version.digest" >&2
binaries=()
for p in $platforms; do
  bin="uptime-operator_${version}_${p%/*}_${p#*/}"
  cp "bin/image/${p%/*}-${p#*/}/uptime-operator" "$dir/$bin"
  binaries+=(-binary "$bin")
done
"$helm_bin" package charts/uptime-operator --version "$version" --app-version "$version" -d "$dir" >&2
KREW_URL_BASE="https://github.com/uptime-operator/uptime-operator/releases/download/v$version" \
  hack/krew-archives.sh "v$version" "$dir" >&2
mv "$dir/uptime.yaml" "$dir/kubectl-uptime_v$version.krew.yaml"
# Asked here, at the top of the clone: inside hack/releasetool make finds
# no Makefile, and the provenance recorded no -ldflags.
ldflags="$(make --no-print-directory -s image-ldflags IMAGE_TAG="$version")"
(cd hack/releasetool && go run . attest -dir "$dir" -version "$version" -commit "$commit" "${dirty[@]}" \
  -image-repo "$IMAGE_REPO" -go-flags "-trimpath -ldflags=$ldflags" \
  "${binaries[@]}" ${key:+-key "$key"})
echo "release $version in $dir:"
echo "  chart  $dir/uptime-operator-$version.tgz"
echo "  image  $tar ($(cat "$dir/uptime-operator-image-$version.digest"); $platforms)"
if [[ -n "$key" ]]; then
  echo "  signed with $SIGNING_KEY; verify with the commands of docs/install.md (cosign.pub is in $dir)"
else
  echo "  unsigned (no SIGNING_KEY): SBOMs, provenance and SHA256SUMS only"
fi
