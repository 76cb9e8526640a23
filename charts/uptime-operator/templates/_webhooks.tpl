{{/*
The admission webhooks of config/webhook/manifests.yaml (generated from the
kubebuilder webhook markers). hack/verify-chart.sh renders the chart and
fails when names, paths, rules, failure policy or side effects differ from
that file, so keep this table in step with `make manifests`.
*/}}
{{- define "uptime-operator.webhookTable" -}}
mutating:
- {name: malertchannel.uptime-operator.io, path: /mutate-monitoring-uptime-operator-io-v1alpha1-alertchannel, resource: alertchannels}
- {name: mmaintenancewindow.uptime-operator.io, path: /mutate-monitoring-uptime-operator-io-v1alpha1-maintenancewindow, resource: maintenancewindows}
- {name: mmonitor.uptime-operator.io, path: /mutate-monitoring-uptime-operator-io-v1alpha1-monitor, resource: monitors}
- {name: mmonitorgroup.uptime-operator.io, path: /mutate-monitoring-uptime-operator-io-v1alpha1-monitorgroup, resource: monitorgroups}
- {name: mproberegion.uptime-operator.io, path: /mutate-monitoring-uptime-operator-io-v1alpha1-proberegion, resource: proberegions}
- {name: mslo.uptime-operator.io, path: /mutate-monitoring-uptime-operator-io-v1alpha1-slo, resource: slos}
- {name: mstatuspage.uptime-operator.io, path: /mutate-monitoring-uptime-operator-io-v1alpha1-statuspage, resource: statuspages}
validating:
- {name: valertchannel.uptime-operator.io, path: /validate-monitoring-uptime-operator-io-v1alpha1-alertchannel, resource: alertchannels}
- {name: vescalationpolicy.uptime-operator.io, path: /validate-monitoring-uptime-operator-io-v1alpha1-escalationpolicy, resource: escalationpolicies}
- {name: vmaintenancewindow.uptime-operator.io, path: /validate-monitoring-uptime-operator-io-v1alpha1-maintenancewindow, resource: maintenancewindows}
- {name: vmonitor.uptime-operator.io, path: /validate-monitoring-uptime-operator-io-v1alpha1-monitor, resource: monitors}
- {name: vmonitorgroup.uptime-operator.io, path: /validate-monitoring-uptime-operator-io-v1alpha1-monitorgroup, resource: monitorgroups}
- {name: voncallschedule.uptime-operator.io, path: /validate-monitoring-uptime-operator-io-v1alpha1-oncallschedule, resource: oncallschedules}
- {name: vplan.uptime-operator.io, path: /validate-monitoring-uptime-operator-io-v1alpha1-plan, resource: plans}
- {name: vproberegion.uptime-operator.io, path: /validate-monitoring-uptime-operator-io-v1alpha1-proberegion, resource: proberegions}
- {name: vslo.uptime-operator.io, path: /validate-monitoring-uptime-operator-io-v1alpha1-slo, resource: slos}
- {name: vstatuspage.uptime-operator.io, path: /validate-monitoring-uptime-operator-io-v1alpha1-statuspage, resource: statuspages}
{{- end -}}

{{/*
The label on the ProbeRegions and Plans the manager applies from the chart's
values (templates/bootstrap.yaml; internal/bootstrap says why Helm does not
create them). Their webhooks skip objects with it: the manager applies them
before its own webhook server is reachable through its Service. Both kinds are
cluster-scoped, so only cluster administrators (who can edit the webhook
configuration anyway) can set the label; the chart fills in the defaults the
mutating webhook would set and checks at render time what the validating
webhook would.
*/}}
{{- define "uptime-operator.bootstrapLabel" -}}uptime-operator.io/helm-bootstrap{{- end -}}

{{/* One webhook configuration. Arguments: ctx, kind (mutating|validating), caBundle. */}}
{{- define "uptime-operator.webhookConfiguration" -}}
{{- $ctx := .ctx -}}
{{- $fullname := include "uptime-operator.fullname" $ctx -}}
{{- $table := include "uptime-operator.webhookTable" $ctx | fromYaml -}}
apiVersion: admissionregistration.k8s.io/v1
kind: {{ ternary "MutatingWebhookConfiguration" "ValidatingWebhookConfiguration" (eq .kind "mutating") }}
metadata:
  name: {{ $fullname }}-{{ .kind }}-webhook-configuration
  labels:
    {{- include "uptime-operator.labels" $ctx | nindent 4 }}
    app.kubernetes.io/component: webhook
  {{- if $ctx.Values.certManager.enabled }}
  annotations:
    cert-manager.io/inject-ca-from: {{ $ctx.Release.Namespace }}/{{ $fullname }}-webhook-cert
  {{- end }}
webhooks:
{{- range (get $table .kind) }}
- name: {{ .name }}
  admissionReviewVersions:
  - v1
  clientConfig:
    service:
      name: {{ include "uptime-operator.webhookServiceName" $ctx }}
      namespace: {{ $ctx.Release.Namespace }}
      path: {{ .path }}
      port: 443
    {{- if $.caBundle }}
    caBundle: {{ $.caBundle }}
    {{- end }}
  failurePolicy: {{ $ctx.Values.webhook.failurePolicy }}
  sideEffects: None
  timeoutSeconds: {{ $ctx.Values.webhook.timeoutSeconds }}
  {{- if has .resource (list "proberegions" "plans") }}
  objectSelector:
    matchExpressions:
    - key: {{ include "uptime-operator.bootstrapLabel" $ctx }}
      operator: DoesNotExist
  {{- end }}
  rules:
  - apiGroups:
    - monitoring.uptime-operator.io
    apiVersions:
    - v1alpha1
    operations:
    - CREATE
    - UPDATE
    resources:
    - {{ .resource }}
{{- end }}
{{- end -}}

{{/* The ProbeRegions and Plans of the values, as the manager applies them (templates/bootstrap.yaml). */}}
{{- define "uptime-operator.bootstrapObjects" -}}
{{- include "uptime-operator.bootstrapRegions" . }}
{{ include "uptime-operator.bootstrapPlans" . }}
{{- end -}}
