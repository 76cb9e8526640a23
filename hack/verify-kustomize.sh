#!/usr/bin/env bash
# Renders every kustomization under config/ and fails when one does not build,
# when its output does not parse as Kubernetes objects, when config/default or
# the HA overlay still holds a placeholder that its replacements should have
# filled in, when a generated CRD is missing from config/crd/kustomization.yaml,
# or when the APIService breaks the chart's rule (`aggregatedAPI.enabled:
# auto`): config/default has none and runs one Recreate replica; the overlay
# with config/components/aggregated-api has it with two replicas that roll
# one at a time, the aggregated listener and a PodDisruptionBudget.
#
# Uses $KUBECTL, else the kubectl that `make envtest` installs (it matches the
# API version), else kubectl on PATH. Needs no cluster.
# Usage: hack/verify-kustomize.sh
set -euo pipefail

cd "$(dirname "$0")/.."

K8S_VERSION="${K8S_VERSION:-1.37.2}"
ASSETS="${KUBEBUILDER_ASSETS_DIR:-$HOME/.local/share/kubebuilder-envtest/k8s/${K8S_VERSION}-linux-amd64}"
if [[ -z "${KUBECTL:-}" ]]; then
  if [[ -x "$ASSETS/kubectl" ]]; then
    KUBECTL="$ASSETS/kubectl"
  elif command -v kubectl >/dev/null; then
    KUBECTL=kubectl
  else
    echo "verify-kustomize: no kubectl; run 'make envtest' or set KUBECTL" >&2
    exit 1
  fi
fi

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

failed=0
for crd in config/crd/bases/*.yaml; do
  if ! grep -qxF -- "- bases/$(basename "$crd")" config/crd/kustomization.yaml; then
    echo "verify-kustomize: $crd is not listed in config/crd/kustomization.yaml" >&2
    failed=1
  fi
done

while IFS= read -r k; do
  dir="$(dirname "$k")"
  name="${dir//\//_}"
  if ! "$KUBECTL" kustomize "$dir" >"$out/$name.yaml" 2>"$out/$name.err"; then
    echo "verify-kustomize: $dir does not build:" >&2
    cat "$out/$name.err" >&2
    failed=1
    continue
  fi
  # Parse every object offline: kubectl decodes each document and prints
  # kind/name, failing on malformed YAML or objects without kind or name.
  if ! KUBECONFIG=/dev/null "$KUBECTL" annotate --local -f "$out/$name.yaml" \
      uptime-operator.io/verify=true -o name >"$out/$name.objects" 2>"$out/$name.err"; then
    echo "verify-kustomize: $dir renders objects that do not parse:" >&2
    cat "$out/$name.err" >&2
    failed=1
    continue
  fi
  echo "verify-kustomize: $dir ok ($(wc -l <"$out/$name.objects") objects)"
done < <(find config -name kustomization.yaml -not -path 'config/components/*' | sort)

for name in config_default config_overlays_ha; do
  if [[ -f "$out/$name.yaml" ]] &&
      grep -nE 'SERVICE_NAME|SERVICE_NAMESPACE|AGGREGATED_NAME|API_NAME|CERTIFICATE_NAME|CERTIFICATE_NAMESPACE' "$out/$name.yaml" >&2; then
    echo "verify-kustomize: ${name//_//} kept the placeholders above; check its replacements" >&2
    failed=1
  fi
done

# rule FILE WANT PATTERN MESSAGE: fails unless grep -E PATTERN matches FILE
# (WANT=yes) or does not (WANT=no).
rule() {
  local file="$out/$1.yaml" want=$2 pattern=$3 message=$4
  [[ -f "$file" ]] || return 0
  if grep -qE -- "$pattern" "$file"; then found=yes; else found=no; fi
  if [[ "$found" != "$want" ]]; then
    echo "verify-kustomize: ${1//_//}: $message" >&2
    failed=1
  fi
}
rule config_default no '^kind: APIService$' "registers the APIService in front of one replica (it belongs in config/components/aggregated-api)"
rule config_default no '--aggregated-listen' "serves the aggregated API without its APIService"
rule config_default yes '^    type: Recreate$' "no longer runs its one SQLite replica with Recreate"
rule config_overlays_ha yes '^kind: APIService$' "has no APIService"
rule config_overlays_ha yes '^kind: PodDisruptionBudget$' "has no PodDisruptionBudget for the APIService's replicas"
rule config_overlays_ha yes '^  replicas: [2-9]' "runs fewer than two replicas behind the APIService"
rule config_overlays_ha yes '^      maxUnavailable: 0$' "does not roll one replica at a time"
rule config_overlays_ha yes '--aggregated-listen=:9445' "does not serve the aggregated API"
rule config_overlays_ha yes '--store-file=' "runs several replicas without the PostgreSQL store"
rule config_overlays_ha no '^kind: PersistentVolumeClaim$' "keeps the SQLite claim"

exit "$failed"
