#!/usr/bin/env bash
# Builds the previous release of uptime-operator, the one the e2e upgrade
# spec (test/e2e/upgrade_test.go) installs before it upgrades to the current
# tree: the chart package and the image archive, built from the pinned
# commit below with that commit's own Makefile, once, and cached outside the
# clone by commit (CACHE/<commit>). It prints the directory.
#
#   hack/previous-release.sh          build (or reuse) and print the directory
#
# There is no release tag yet: 0.1.0 (CHANGELOG.md, 2026-11-28) is pinned as
# the last commit that landed on that day. Pin the next one here when a
# release is cut; the commit must be in the clone (a shallow clone lacks
# it: `git fetch --unshallow`), and the script fails saying so otherwise,
# cache or not.
#
# The image is tagged PREVIOUS_VERSION-previous, not PREVIOUS_VERSION: the
# current tree's chart still says 0.1.0 too, and both images must be on the
# node at once under different references (an upgrade and a rollback each
# change the image the Pods run). The chart package's appVersion says the
# same tag, so it installs that image with no image value set: the values an
# upgrade with --reset-then-reuse-values carries over hold no image.
set -euo pipefail
cd "$(dirname "$0")/.."

PREVIOUS_COMMIT=6d85b7e73f13c6f0c7aa5652e559495856534d1f
PREVIOUS_VERSION=0.1.0
CACHE="${UPTIME_PREVIOUS_CACHE:-$HOME/.cache/uptime-operator/previous-release}"

tag="$PREVIOUS_VERSION-previous"
out="$CACHE/$PREVIOUS_COMMIT"
chart="$out/uptime-operator-$PREVIOUS_VERSION.tgz"
image="$out/uptime-operator-image-$tag.tar"
if ! git cat-file -e "$PREVIOUS_COMMIT^{commit}" 2>/dev/null; then
  echo "previous-release: this clone lacks commit $PREVIOUS_COMMIT (release $PREVIOUS_VERSION)$( [[ "$(git rev-parse --is-shallow-repository 2>/dev/null)" == true ]] && echo '; it is a shallow clone: git fetch --unshallow')" >&2
  exit 1
fi
if [[ -s "$chart" && -s "$image" && -s "$out/digest" ]]; then
  echo "$out"
  exit 0
fi
source hack/lib/helm.sh
helm_bin="$(find_helm)"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "previous-release: building $PREVIOUS_VERSION from $PREVIOUS_COMMIT in $work (cached in $out)" >&2
git archive "$PREVIOUS_COMMIT" | tar -x -C "$work"
mkdir -p "$out.tmp"
# What that commit's hack/release.sh ran, with the image tag above.
(cd "$work" && make --no-print-directory image IMAGE_TAG="$tag" IMAGE_TAR="$out.tmp/$(basename "$image")" \
  IMAGE_DIGEST_FILE="$out.tmp/digest" >&2 &&
  "$helm_bin" package charts/uptime-operator --version "$PREVIOUS_VERSION" --app-version "$tag" -d "$out.tmp" >&2)
echo "$PREVIOUS_COMMIT" >"$out.tmp/commit"
rm -rf "$out"
mv "$out.tmp" "$out"
echo "$out"
