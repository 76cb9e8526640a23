{{/*
Names, labels and the small computed values every template shares.
*/}}

{{- define "uptime-operator.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The prefix of every resource name: uptime-operator for a release of that name. */}}
{{- define "uptime-operator.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "uptime-operator.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels of every resource. */}}
{{- define "uptime-operator.labels" -}}
helm.sh/chart: {{ include "uptime-operator.chart" . }}
app.kubernetes.io/name: {{ include "uptime-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: uptime-operator
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* Selector labels of the manager Pods (immutable: never add to them). */}}
{{- define "uptime-operator.managerSelector" -}}
app.kubernetes.io/name: {{ include "uptime-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: manager
{{- end -}}

{{/* Selector labels of the remote probe agent Pods. */}}
{{- define "uptime-operator.probeSelector" -}}
app.kubernetes.io/name: {{ include "uptime-operator.name" . }}-probe
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: probe
{{- end -}}

{{- define "uptime-operator.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (printf "%s-%s" (include "uptime-operator.fullname" .) (ternary "probe" "manager" (eq .Values.mode "remote"))) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The uptime-operator image reference (digest wins over tag). */}}
{{- define "uptime-operator.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{- define "uptime-operator.apiServiceName" -}}
{{- default (printf "%s-api" (include "uptime-operator.fullname" .)) .Values.api.service.name -}}
{{- end -}}

{{- define "uptime-operator.aggregatedServiceName" -}}
{{- default (printf "%s-aggregated" (include "uptime-operator.fullname" .)) .Values.aggregatedAPI.serviceName -}}
{{- end -}}

{{- define "uptime-operator.webhookServiceName" -}}
{{- default (printf "%s-webhook-service" (include "uptime-operator.fullname" .)) .Values.webhook.serviceName -}}
{{- end -}}

{{- define "uptime-operator.webhookCertSecret" -}}
{{- printf "%s-webhook-cert" (include "uptime-operator.fullname" .) -}}
{{- end -}}

{{- define "uptime-operator.apiCertSecret" -}}
{{- printf "%s-api-cert" (include "uptime-operator.fullname" .) -}}
{{- end -}}

{{/* The probe API URL as probe Pods in this cluster reach it: the TLS
listener for the probe API, on the API Service's probe port (its serving
certificate names the API Service). */}}
{{- define "uptime-operator.probeServerURL" -}}
{{- if .Values.probe.serverURL -}}
{{- .Values.probe.serverURL -}}
{{- else -}}
{{- printf "https://%s.%s.svc:%d" (include "uptime-operator.apiServiceName" .) .Release.Namespace (int .Values.probe.port) -}}
{{- end -}}
{{- end -}}

{{/* Effective replicas after the HA guard: more than one replica needs
PostgreSQL, because the SQLite file lives on a ReadWriteOnce volume. */}}
{{- define "uptime-operator.replicas" -}}
{{- $r := int .Values.manager.replicas -}}
{{- if and (gt $r 1) (ne .Values.store.type "postgres") -}}
{{- fail (printf "manager.replicas=%d needs store.type=postgres: the SQLite store is a single file on a ReadWriteOnce volume that only one manager may open. Set store.type=postgres with store.postgres.existingSecret, or manager.replicas=1." $r) -}}
{{- end -}}
{{- $r -}}
{{- end -}}

{{/* Fails rendering when required values of the selected mode are missing. */}}
{{- define "uptime-operator.validate" -}}
{{- if eq .Values.mode "remote" -}}
{{- if not .Values.remote.serverURL -}}
{{- fail "mode=remote needs remote.serverURL: the manager's probe API URL as this cluster reaches it" -}}
{{- end -}}
{{- if not .Values.remote.region -}}
{{- fail "mode=remote needs remote.region: the code of the ProbeRegion (placement.mode: remote) on the manager's side" -}}
{{- end -}}
{{- if not .Values.remote.tokenSecret.name -}}
{{- fail "mode=remote needs remote.tokenSecret.name: an existing Secret holding the region token" -}}
{{- end -}}
{{- else -}}
{{- if and (eq .Values.store.type "postgres") (not .Values.store.postgres.existingSecret) -}}
{{- fail "store.type=postgres needs store.postgres.existingSecret: a Secret with the PostgreSQL DSN under store.postgres.key" -}}
{{- end -}}
{{- if and (not .Values.manager.leaderElect) (gt (int .Values.manager.replicas) 1) -}}
{{- fail "manager.leaderElect=false with manager.replicas > 1 would let several replicas reconcile and alert at once" -}}
{{- end -}}
{{- if and .Values.smtp.addr (not .Values.smtp.from) -}}
{{- fail "smtp.addr needs smtp.from: the sender address of alert emails" -}}
{{- end -}}
{{- if and .Values.smtp.addr .Values.smtp.username (not .Values.smtp.passwordSecret.name) -}}
{{- fail "smtp.username needs smtp.passwordSecret.name: an existing Secret holding the SMTP password" -}}
{{- end -}}
{{- if and .Values.twilio.accountSID (not .Values.twilio.tokenSecret.name) -}}
{{- fail "twilio.accountSID needs twilio.tokenSecret.name: an existing Secret holding the Twilio auth token" -}}
{{- end -}}
{{- if and .Values.twilio.accountSID (not .Values.twilio.from) -}}
{{- fail "twilio.accountSID needs twilio.from: the E.164 sender number of SMS and calls" -}}
{{- end -}}
{{- if and .Values.defaultPlan .Values.plans -}}
{{- $found := false -}}
{{- range .Values.plans -}}{{- if eq .name $.Values.defaultPlan -}}{{- $found = true -}}{{- end -}}{{- end -}}
{{- if not $found -}}
{{- fail (printf "defaultPlan %q is not one of plans[].name; add it to plans or leave plans empty to reference a Plan created separately" .Values.defaultPlan) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Topology spread constraints with the manager selector filled in. */}}
{{- define "uptime-operator.topologySpread" -}}
{{- $sel := include "uptime-operator.managerSelector" . | fromYaml -}}
{{- range .Values.manager.topologySpreadConstraints }}
{{- $c := deepCopy . }}
{{- if not (hasKey $c "labelSelector") }}
{{- $_ := set $c "labelSelector" (dict "matchLabels" $sel) }}
{{- end }}
- {{ toYaml $c | nindent 2 | trim }}
{{- end }}
{{- end -}}

{{/*
The volume of the trusted CA bundle (trustedCA.configMap or .secret), its key
mounted as ca.crt; nothing when neither is set.
*/}}
{{- define "uptime-operator.trustedCAVolume" -}}
{{- with .Values.trustedCA }}
{{- if or .configMap .secret }}
- name: trusted-ca
  {{- if .configMap }}
  configMap:
    name: {{ .configMap }}
  {{- else }}
  secret:
    secretName: {{ .secret }}
  {{- end }}
    items:
    - key: {{ .key }}
      path: ca.crt
{{- end }}
{{- end }}
{{- end }}

{{/*
"true" when the chart registers the APIService v1.api.uptime-operator.io,
empty otherwise. While an APIService is unavailable, kube-apiserver's
discovery fails for every client and namespace deletion stalls
(NamespaceDeletionDiscoveryFailure), so `auto` registers it only where a
manager restart never takes it down: two or more replicas on PostgreSQL,
which the Deployment rolls one Pod at a time (maxUnavailable 0) under a
PodDisruptionBudget. true forces it on (a single replica or SQLite's Recreate
upgrade leaves it unavailable for a moment), false keeps it off.
*/}}
{{- define "uptime-operator.aggregatedAPIEnabled" -}}
{{- $e := .Values.aggregatedAPI.enabled -}}
{{- if eq (toString $e) "auto" -}}
{{- if and (eq .Values.store.type "postgres") (ge (int .Values.manager.replicas) 2) }}true{{ end -}}
{{- else if $e }}true{{ end -}}
{{- end -}}
