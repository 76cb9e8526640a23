#!/usr/bin/env bash
# Tests the chart's PrometheusRule with `promtool test rules`: renders
# templates/prometheusrule.yaml with helm (release uptime-operator in
# uptime-operator-system, every rule on), turns its spec into a rule file
# (hack/promtools rule-file), checks it with `promtool check rules` and runs
# the unit tests of hack/promtools/testdata/rules_test.yaml against it:
# each alert fires when it should, and not otherwise (an idle probe region
# scaled to 0 does not count as offline).
#
# promtool is built from the Prometheus Go module that hack/promtools/go.mod
# requires into a cache outside the clone, once (hack/prom-binary.sh).
# helm is $HELM, on PATH, or the one hack/verify-chart.sh builds into the
# same cache. Unlike hack/verify-chart.sh this script never skips: without
# promtool or helm it fails, so `make test` cannot pass untested rules.
set -euo pipefail

cd "$(dirname "$0")/.."
HELM_VERSION="${HELM_VERSION:-v3.19.0}"
cache_root="${XDG_CACHE_HOME:-$HOME/.cache}/uptime-operator"
promtool="$(hack/prom-binary.sh promtool)"

helm="${HELM:-}"
if [[ -z "$helm" ]]; then
  if command -v helm >/dev/null; then
    helm="$(command -v helm)"
  else
    helm="$cache_root/helm-$HELM_VERSION/helm"
    if [[ ! -x "$helm" ]]; then
      echo "test-rules: building helm $HELM_VERSION from the Go module proxy into $(dirname "$helm") (once)" >&2
      (cd "$(mktemp -d)" && GOBIN="$(dirname "$helm")" GOFLAGS=-buildvcs=false go install "helm.sh/helm/v3/cmd/helm@$HELM_VERSION")
    fi
  fi
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$helm" template uptime-operator charts/uptime-operator --namespace uptime-operator-system --kube-version "${K8S_VERSION:-1.37.2}" \
  --set prometheusRule.enabled=true --show-only templates/prometheusrule.yaml >"$work/rendered.yaml"
(cd hack/promtools && go run . rule-file) <"$work/rendered.yaml" >"$work/rules.yaml"
cp hack/promtools/testdata/rules_test.yaml "$work/"
"$promtool" check rules "$work/rules.yaml"
"$promtool" test rules "$work/rules_test.yaml"
echo "test-rules: ok"
