#!/usr/bin/env bash
# Copies the rules of the generated config/rbac/role.yaml into the chart's
# manager ClusterRole (between its BEGIN/END markers), so `make manifests`
# keeps the chart's RBAC identical to the kubebuilder markers.
set -euo pipefail
role=config/rbac/role.yaml
tpl=charts/uptime-operator/templates/rbac-manager.yaml
rules="$(awk 'found {print} /^rules:$/ {found=1}' "$role")"
awk -v rules="$rules" '
  /^# BEGIN rules of config\/rbac\/role.yaml$/ {print; print rules; skip=1; next}
  /^# END rules of config\/rbac\/role.yaml$/ {skip=0}
  !skip {print}
' "$tpl" > "$tpl.tmp"
mv "$tpl.tmp" "$tpl"
