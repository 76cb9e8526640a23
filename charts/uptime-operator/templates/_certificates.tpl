{{/* The DNS names of the webhook serving certificate, comma-separated. */}}
{{- define "uptime-operator.webhookDNSNames" -}}
{{- $svc := include "uptime-operator.webhookServiceName" . -}}
{{- printf "%s.%s.svc,%s.%s.svc.cluster.local" $svc .Release.Namespace $svc .Release.Namespace -}}
{{- end -}}

{{/* The DNS names of the API serving certificate (the aggregated API's
Service when it is on, and the API Service the probe API is reached
through), comma-separated. */}}
{{- define "uptime-operator.apiDNSNames" -}}
{{- $ns := .Release.Namespace -}}
{{- $names := list -}}
{{- if include "uptime-operator.aggregatedAPIEnabled" . -}}
{{- $svc := include "uptime-operator.aggregatedServiceName" . -}}
{{- $names = concat $names (list (printf "%s.%s.svc" $svc $ns) (printf "%s.%s.svc.cluster.local" $svc $ns)) -}}
{{- end -}}
{{- $svc := include "uptime-operator.apiServiceName" . -}}
{{- $names = concat $names (list (printf "%s.%s.svc" $svc $ns) (printf "%s.%s.svc.cluster.local" $svc $ns)) -}}
{{- join "," $names -}}
{{- end -}}

{{/* A cert-manager Certificate. Arguments: ctx, name, dns (list). */}}
{{- define "uptime-operator.certManagerCertificate" -}}
{{- $ctx := .ctx -}}
{{- $cm := $ctx.Values.certManager -}}
apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: {{ .name }}
  namespace: {{ $ctx.Release.Namespace }}
  labels:
    {{- include "uptime-operator.labels" $ctx | nindent 4 }}
    app.kubernetes.io/component: manager
spec:
  secretName: {{ .name }}
  commonName: {{ first .dns }}
  dnsNames:
  {{- range .dns }}
  - {{ . }}
  {{- end }}
  duration: {{ $cm.duration }}
  renewBefore: {{ $cm.renewBefore }}
  privateKey:
    algorithm: ECDSA
    size: 256
    rotationPolicy: Always
  issuerRef:
    {{- if $cm.issuerRef.name }}
    name: {{ $cm.issuerRef.name }}
    kind: {{ $cm.issuerRef.kind }}
    group: {{ $cm.issuerRef.group }}
    {{- else }}
    name: {{ include "uptime-operator.fullname" $ctx }}-selfsigned
    kind: Issuer
    group: cert-manager.io
    {{- end }}
{{- end -}}
