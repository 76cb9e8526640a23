#!/usr/bin/env bash
# Builds the krew archives of `kubectl uptime` and a manifest filled in for
# them: kubectl-uptime_<version>_<os>_<arch>.tar.gz (the binary and LICENSE)
# and uptime.yaml (plugins/uptime.yaml with the version, file:// URLs and
# sha256 of these archives; krew-release-bot fills in release URLs instead;
# KREW_URL_BASE=https://…/releases/download/vX.Y.Z writes those, as
# hack/release.sh does).
#   hack/krew-archives.sh VERSION [DIR]   (PLATFORMS="linux/amd64" for fewer)
set -euo pipefail
version="${1:?usage: hack/krew-archives.sh VERSION [DIR]}"
dir="${2:-dist/krew}"
platforms="${PLATFORMS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64}"
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
manifest="$(sed -e "s|{{ .TagName }}|$version|g" plugins/uptime.yaml)"
for p in $platforms; do
  os="${p%/*}" arch="${p#*/}"
  work="$(mktemp -d)"
  CGO_ENABLED=0 GOOS="$os" GOARCH="$arch" go build -trimpath -ldflags "-s -w" -o "$work/kubectl-uptime" ./cmd/kubectl-uptime
  cp LICENSE "$work/"
  archive="kubectl-uptime_${version}_${os}_${arch}.tar.gz"
  tar -C "$work" -czf "$dir/$archive" kubectl-uptime LICENSE
  rm -rf "$work"
  sum="$(sha256sum "$dir/$archive" | cut -d' ' -f1)"
  # The bot's addURIAndSha line becomes uri and sha256.
  manifest="$(printf '%s\n' "$manifest" | awk -v a="$archive" -v uri="${KREW_URL_BASE:-file://$dir}/$archive" -v sum="$sum" '
    index($0, "addURIAndSha") && index($0, a) { match($0, /^ */); ind=substr($0, 1, RLENGTH); print ind "uri: " uri; print ind "sha256: " sum; next }
    { print }')"
  echo "built $dir/$archive" >&2
done
# Platforms not built are dropped from the manifest.
printf '%s\n' "$manifest" | awk '
  /^  - selector:/ { buf=$0; keep=1; getline; buf=buf "\n" $0; while ((getline line) > 0) { buf=buf "\n" line; if (line ~ /addURIAndSha/) keep=0; if (line ~ /bin: /) break } if (keep) print buf; next }
  { print }' >"$dir/uptime.yaml"
echo "manifest $dir/uptime.yaml" >&2
