{{- define "uptime-operator.bootstrapRegions" -}}
{{- $codes := dict }}
{{- /* Before the first install the API is not served and lookup would fail. */}}
{{- $existing := dict }}
{{- if .Capabilities.APIVersions.Has "monitoring.uptime-operator.io/v1alpha1" }}
{{- $existing = lookup "monitoring.uptime-operator.io/v1alpha1" "ProbeRegion" "" "" | default dict }}
{{- end }}
{{- range .Values.regions }}
{{- $r := . }}
{{- $code := default $r.name $r.code }}
{{- if hasKey $codes $code }}
{{- fail (printf "regions: code %q is used by more than one region" $code) }}
{{- end }}
{{- $_ := set $codes $code true }}
{{- /* What the validating webhook checks, against the regions in the cluster. */}}
{{- range (get $existing "items" | default list) }}
{{- $otherCode := dig "spec" "code" .metadata.name . }}
{{- if and (eq .metadata.name $r.name) (ne $otherCode $code) }}
{{- fail (printf "regions: the code of region %q cannot change from %q to %q; monitors and history refer to it" $r.name $otherCode $code) }}
{{- end }}
{{- if and (ne .metadata.name $r.name) (eq $otherCode $code) }}
{{- fail (printf "regions: code %q of region %q is already used by ProbeRegion %q" $code $r.name .metadata.name) }}
{{- end }}
{{- end }}
{{- $placement := default dict .placement }}
{{- if and (eq (default "managed" $placement.mode) "remote") (not $placement.tokenSecretRef) }}
{{- fail (printf "regions: region %q has placement.mode=remote and needs placement.tokenSecretRef, the Secret holding the token its remote agents present" $r.name) }}
{{- end }}
---
apiVersion: monitoring.uptime-operator.io/v1alpha1
kind: ProbeRegion
metadata:
  name: {{ .name }}
  labels:
    app.kubernetes.io/part-of: uptime-operator
    app.kubernetes.io/instance: {{ $.Release.Name }}
spec:
  # The defaults the mutating webhook would set, filled in here because the
  # webhooks skip chart-made regions (see templates/_webhooks.tpl).
  code: {{ $code }}
  {{- with .displayName }}
  displayName: {{ . | quote }}
  {{- end }}
  {{- with .city }}
  city: {{ . | quote }}
  {{- end }}
  {{- with .country }}
  country: {{ . | quote }}
  {{- end }}
  {{- with .continent }}
  continent: {{ . }}
  {{- end }}
  {{- with .isp }}
  isp: {{ . | quote }}
  {{- end }}
  placement:
    mode: {{ default "managed" $placement.mode }}
    replicas: {{ default 1 $placement.replicas }}
    {{- with $placement.nodeSelector }}
    nodeSelector:
      {{- toYaml . | nindent 6 }}
    {{- end }}
    {{- with $placement.tolerations }}
    tolerations:
      {{- toYaml . | nindent 6 }}
    {{- end }}
    {{- with $placement.resources }}
    resources:
      {{- toYaml . | nindent 6 }}
    {{- end }}
    {{- /* The pod template override of managed regions (docs/helm.md). */}}
    {{- range $field := list "affinity" "topologySpreadConstraints" "imagePullSecrets" }}
    {{- with index $placement $field }}
    {{ $field }}:
      {{- toYaml . | nindent 6 }}
    {{- end }}
    {{- end }}
    {{- with $placement.priorityClassName }}
    priorityClassName: {{ . }}
    {{- end }}
    {{- if $placement.netRaw }}
    netRaw: true
    {{- end }}
    {{- with $placement.tokenSecretRef }}
    tokenSecretRef:
      name: {{ .name }}
      key: {{ default "token" .key }}
    {{- end }}
    {{- with $placement.namespace }}
    namespace: {{ . }}
    {{- end }}
{{- end }}
{{- end -}}
