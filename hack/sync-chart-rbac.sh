#!/usr/bin/env bash
# Copies the rules of the generated config/rbac/role.yaml into the chart's
# manager roles, so `make manifests` keeps the chart's RBAC identical to the
# kubebuilder markers: the ClusterRole's rules between the "rules" markers of
# the chart's ClusterRole, the namespaced Role's rules (markers with
# namespace=system: the probe namespace) between its "namespaced rules"
# markers.
set -euo pipefail
role=config/rbac/role.yaml
tpl=charts/uptime-operator/templates/rbac-manager.yaml

# rules_of KIND prints the rules list of the KIND document of role.yaml.
rules_of() {
  awk -v kind="$1" '
    /^---$/ {doc=""; inrules=0; next}
    /^kind: / {doc=$2}
    inrules && /^[a-zA-Z]/ {inrules=0}
    inrules && doc==kind {print}
    /^rules:$/ {inrules=1}
  ' "$role"
}

cluster="$(rules_of ClusterRole)"
namespaced="$(rules_of Role)"
awk -v cluster="$cluster" -v namespaced="$namespaced" '
  /^# BEGIN rules of config\/rbac\/role.yaml$/ {print; print cluster; skip=1; next}
  /^# BEGIN namespaced rules of config\/rbac\/role.yaml$/ {print; print namespaced; skip=1; next}
  /^# END (namespaced )?rules of config\/rbac\/role.yaml$/ {skip=0}
  !skip {print}
' "$tpl" > "$tpl.tmp"
mv "$tpl.tmp" "$tpl"
