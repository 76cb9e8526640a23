#!/usr/bin/env bash
# Writes the chart's CRD templates, charts/uptime-operator/templates/crds/,
# from the generated config/crd/bases (run by `make manifests`; checked by
# hack/verify-chart.sh, which runs it into a temporary directory and diffs).
#
# The CRDs are templates, not files under the chart's crds/ directory,
# because Helm installs crds/ once and never upgrades them (the pattern of
# cert-manager and CloudNativePG): each template renders only with
# crds.enabled, carries helm.sh/resource-policy: keep with crds.keep (so
# `helm uninstall` or crds.enabled=false never deletes the CRDs and with them
# every custom resource), and escapes the "{{" of descriptions.
#
# Usage: hack/sync-chart-crds.sh [OUT_DIR]   (default: the chart's templates/crds)
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-charts/uptime-operator/templates/crds}"
mkdir -p "$out"
rm -f "$out"/*.yaml
for f in config/crd/bases/*.yaml; do
  awk '
    BEGIN { print "{{- if and .Values.crds.enabled (ne .Values.mode \"remote\") }}" }
    /^---$/ && NR == 1 { next }
    { gsub(/\{\{/, "{{ \"{{\" }}") }
    /^metadata:$/ && !meta {
      meta = 1
      print
      print "  labels:"
      print "    {{- include \"uptime-operator.labels\" . | nindent 4 }}"
      next
    }
    /^  annotations:$/ && meta == 1 {
      meta = 2
      print
      print "    {{- if .Values.crds.keep }}"
      print "    helm.sh/resource-policy: keep"
      print "    {{- end }}"
      next
    }
    { print }
    END { print "{{- end }}" }
  ' "$f" >"$out/$(basename "$f")"
done
