{{/*
A kubernetes.io/tls Secret with a serving certificate signed by the chart's
CA. It keeps the certificate the Secret already holds when the CA was kept
and the DNS names are unchanged, so upgrades don't rotate it.
Arguments: ctx, name, dns (list), ca (genCA/buildCustomCert result), keep (bool).
*/}}
{{- define "uptime-operator.servingSecret" -}}
{{- $ctx := .ctx -}}
{{- $names := join "," .dns -}}
{{- $old := lookup "v1" "Secret" $ctx.Release.Namespace .name | default dict -}}
{{- $crt := "" -}}
{{- $key := "" -}}
{{- if and .keep (eq (dig "metadata" "annotations" "uptime-operator.io/dns-names" "" $old) $names) (dig "data" "tls.crt" "" $old) (dig "data" "tls.key" "" $old) -}}
{{- $crt = dig "data" "tls.crt" "" $old -}}
{{- $key = dig "data" "tls.key" "" $old -}}
{{- else -}}
{{- $cert := genSignedCert (first .dns) nil .dns (int $ctx.Values.certificates.validityDays) .ca -}}
{{- $crt = $cert.Cert | b64enc -}}
{{- $key = $cert.Key | b64enc -}}
{{- end -}}
apiVersion: v1
kind: Secret
type: kubernetes.io/tls
metadata:
  name: {{ .name }}
  namespace: {{ $ctx.Release.Namespace }}
  labels:
    {{- include "uptime-operator.labels" $ctx | nindent 4 }}
    app.kubernetes.io/component: manager
  annotations:
    uptime-operator.io/dns-names: {{ $names | quote }}
data:
  tls.crt: {{ $crt }}
  tls.key: {{ $key }}
  ca.crt: {{ .ca.Cert | b64enc }}
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
