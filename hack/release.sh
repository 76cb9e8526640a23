#!/usr/bin/env bash
# Builds a release of uptime-operator into RELEASE_DIR (default dist/):
#
#   uptime-operator-VERSION.tgz               the chart package (helm package;
#                                             version and appVersion VERSION)
#   uptime-operator-image-VERSION.tar         the image archive (OCI layout and
#                                             docker-load format; `make image`)
#   uptime-operator-image-VERSION.digest      the image's manifest digest
#   SHA256SUMS                                checksums of the three files
#
# The image is tagged IMAGE_REPO:VERSION, the tag the packaged chart uses by
# default. CHANGELOG.md must have a "## [VERSION]" section.
#
# Usage: hack/release.sh VERSION      (make release VERSION=x.y.z)
set -euo pipefail
cd "$(dirname "$0")/.."
version="${1:-}"
if [[ ! "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
  echo "release: VERSION must be a semantic version x.y.z (got '${version}')" >&2
  exit 1
fi
if ! grep -q "^## \[$version\]" CHANGELOG.md; then
  echo "release: CHANGELOG.md has no '## [$version]' section" >&2
  exit 1
fi
dir="${RELEASE_DIR:-$PWD/dist}"
mkdir -p "$dir"
# shellcheck source=hack/lib/helm.sh
source hack/lib/helm.sh
helm_bin="$(find_helm)"

tar="$dir/uptime-operator-image-$version.tar"
make --no-print-directory image IMAGE_TAG="$version" IMAGE_TAR="$tar" IMAGE_DIGEST_FILE="$dir/uptime-operator-image-$version.digest" >&2
"$helm_bin" package charts/uptime-operator --version "$version" --app-version "$version" -d "$dir" >&2
(cd "$dir" && sha256sum "uptime-operator-$version.tgz" "uptime-operator-image-$version.tar" "uptime-operator-image-$version.digest" >SHA256SUMS)
echo "release $version in $dir:"
echo "  chart  $dir/uptime-operator-$version.tgz"
echo "  image  $tar ($(cat "$dir/uptime-operator-image-$version.digest"))"
