#!/usr/bin/env bash
# Renders every kustomization under config/ and fails when one does not build,
# when its output does not parse as Kubernetes objects, when config/default
# still holds a placeholder that its replacements should have filled in, or when
# a generated CRD is missing from config/crd/kustomization.yaml.
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
done < <(find config -name kustomization.yaml | sort)

if [[ -f "$out/config_default.yaml" ]] &&
    grep -nE 'SERVICE_NAME|SERVICE_NAMESPACE|AGGREGATED_NAME|API_NAME|CERTIFICATE_NAME|CERTIFICATE_NAMESPACE' "$out/config_default.yaml" >&2; then
  echo "verify-kustomize: config/default kept the placeholders above; check its replacements" >&2
  failed=1
fi

exit "$failed"
