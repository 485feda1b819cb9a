{{/*
Object names are fixed (see docs/install.md): the controller looks for its Secret, Service and webhook
configurations by these names, so the chart can be installed once per cluster.
*/}}
{{- define "cloneset-controller.name" -}}cloneset-controller{{- end -}}
{{- define "cloneset-controller.webhookService" -}}cloneset-controller-webhook-service{{- end -}}
{{- define "cloneset-controller.webhookSecret" -}}cloneset-controller-webhook-certs{{- end -}}
{{- define "cloneset-controller.certificate" -}}cloneset-controller-webhook-cert{{- end -}}
{{- define "cloneset-controller.webhookCertDir" -}}/etc/cloneset-controller/webhook-certs{{- end -}}

{{- define "cloneset-controller.selectorLabels" -}}
app.kubernetes.io/name: cloneset-controller
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "cloneset-controller.labels" -}}
{{ include "cloneset-controller.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "cloneset-controller.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* --feature-gates value: Name=true|false, sorted by name. */}}
{{- define "cloneset-controller.featureGates" -}}
{{- $gates := list -}}
{{- range $name := keys .Values.featureGates | sortAlpha -}}
{{- $gates = append $gates (printf "%s=%t" $name (get $.Values.featureGates $name)) -}}
{{- end -}}
{{- join "," $gates -}}
{{- end -}}

