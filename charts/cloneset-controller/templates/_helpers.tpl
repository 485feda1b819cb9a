{{/*
Object names come from the release (Helm's convention: the release name when it contains the chart's name, else
<release>-cloneset-controller; fullnameOverride replaces it), so releases never share an object. The controller
finds its webhook Service, certificate Secret and webhook configurations by the same prefix
(--webhook-name-prefix). At most 45 characters: the longest suffix, "-validating-webhook-configuration", still fits,
and "<name>-webhook-service" stays a 63-character DNS label.
*/}}
{{- define "cloneset-controller.name" -}}
{{- $name := .Values.fullnameOverride | default (ternary .Release.Name (printf "%s-cloneset-controller" .Release.Name) (contains "cloneset-controller" .Release.Name)) -}}
{{- $name | trunc 45 | trimSuffix "-" -}}
{{- end -}}
{{- define "cloneset-controller.webhookService" -}}{{ include "cloneset-controller.name" . }}-webhook-service{{- end -}}
{{- define "cloneset-controller.webhookSecret" -}}{{ include "cloneset-controller.name" . }}-webhook-certs{{- end -}}
{{- define "cloneset-controller.certificate" -}}{{ include "cloneset-controller.name" . }}-webhook-cert{{- end -}}
{{- define "cloneset-controller.leaseName" -}}{{ .Values.leaderElection.id | default (include "cloneset-controller.name" .) }}{{- end -}}
{{/* A name of config/ ("cloneset-controller-…") for this release ("<name>-…"). */}}
{{- define "cloneset-controller.rename" -}}
{{- regexReplaceAll "^cloneset-controller" .name (include "cloneset-controller.name" .root) -}}
{{- end -}}
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

{{/* No image is published for this chart: the repository is the registry you pushed `npm run image` to. */}}
{{- define "cloneset-controller.image" -}}
{{- $repository := required "image.repository is required: build the image (npm run image, or docker build .), push it to a registry your nodes pull from, and pass it, e.g. --set image.repository=registry.example.com/cloneset-controller (docs/install.md)" .Values.image.repository -}}
{{- printf "%s:%s" $repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* --feature-gates value: Name=true|false, sorted by name. */}}
{{- define "cloneset-controller.featureGates" -}}
{{- $gates := list -}}
{{- range $name := keys .Values.featureGates | sortAlpha -}}
{{- $gates = append $gates (printf "%s=%t" $name (get $.Values.featureGates $name)) -}}
{{- end -}}
{{- join "," $gates -}}
{{- end -}}

