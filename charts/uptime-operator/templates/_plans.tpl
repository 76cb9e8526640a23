{{- define "uptime-operator.bootstrapPlans" -}}
{{- range .Values.plans }}
{{- $p := . }}
{{- /* What the validating webhook checks (templates/_webhooks.tpl explains why it skips chart-made plans). */}}
{{- range $i, $code := ($p.defaultRegions | default list) }}
{{- if and $p.regions (not (has $code $p.regions)) }}
{{- fail (printf "plans[%s].defaultRegions[%d]: %q must be one of the plan's regions" $p.name $i $code) }}
{{- end }}
{{- end }}
---
apiVersion: monitoring.uptime-operator.io/v1alpha1
kind: Plan
metadata:
  name: {{ $p.name }}
  labels:
    app.kubernetes.io/part-of: uptime-operator
    app.kubernetes.io/instance: {{ $.Release.Name }}
spec:
  {{- with $p.displayName }}
  displayName: {{ . | quote }}
  {{- end }}
  {{- with $p.limits }}
  limits:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $p.regions }}
  regions:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $p.defaultRegions }}
  defaultRegions:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $p.features }}
  features:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}
{{- end -}}
