{{- define "docgen.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "docgen.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "docgen.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "docgen.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: docgen
{{- end -}}

{{/* Selector labels of one component: api, worker, temporal-dev. */}}
{{- define "docgen.selector" -}}
app.kubernetes.io/name: {{ include "docgen.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "docgen.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "docgen.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "docgen.temporalAddress" -}}
{{- if .Values.temporal.address -}}
{{- .Values.temporal.address -}}
{{- else if .Values.temporalDev.enabled -}}
{{- printf "%s-temporal-dev:7233" (include "docgen.fullname" .) -}}
{{- else -}}
{{- fail "set temporal.address (host:port of the Temporal frontend) or temporalDev.enabled=true" -}}
{{- end -}}
{{- end -}}

{{- define "docgen.image" -}}
{{- printf "%s:%s" .image.repository (default .root.Chart.AppVersion .image.tag) -}}
{{- end -}}

{{/* Environment shared by the API and the workers: settings of config/env.ts, secrets by reference. */}}
{{- define "docgen.env" -}}
- name: TEMPORAL_ADDRESS
  value: {{ include "docgen.temporalAddress" . | quote }}
- name: TEMPORAL_NAMESPACE
  value: {{ .Values.temporal.namespace | quote }}
- name: TEMPORAL_TASK_QUEUE
  value: {{ .Values.temporal.taskQueue | quote }}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ required "database.existingSecret: the Secret holding docgen's DATABASE_URL" .Values.database.existingSecret }}
      key: {{ .Values.database.urlKey }}
- name: STORAGE_URL
  value: {{ required "storage.url (s3://bucket/prefix): the API and the workers share one object store" .Values.storage.url | quote }}
{{- if .Values.storage.s3Endpoint }}
- name: S3_ENDPOINT
  value: {{ .Values.storage.s3Endpoint | quote }}
{{- end }}
- name: S3_REGION
  value: {{ .Values.storage.s3Region | quote }}
- name: S3_FORCE_PATH_STYLE
  value: {{ .Values.storage.forcePathStyle | quote }}
{{- with .Values.storage.existingSecret }}
- name: AWS_ACCESS_KEY_ID
  valueFrom:
    secretKeyRef:
      name: {{ . }}
      key: {{ $.Values.storage.accessKeyIdKey }}
- name: AWS_SECRET_ACCESS_KEY
  valueFrom:
    secretKeyRef:
      name: {{ . }}
      key: {{ $.Values.storage.secretAccessKeyKey }}
{{- end }}
- name: METRICS_HOST
  value: "0.0.0.0"
- name: METRICS_PORT
  value: {{ .Values.metrics.port | quote }}
- name: DOCGEN_DATA_DIR
  value: /var/lib/docgen
{{- range $name, $value := .Values.env }}
- name: {{ $name }}
  value: {{ $value | quote }}
{{- end }}
{{- range .Values.extraSecretEnv }}
{{- $secret := .secretName }}
{{- range .keys }}
- name: {{ . }}
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: {{ . }}
{{- end }}
{{- end }}
{{- end -}}

{{- define "docgen.podAnnotations" -}}
{{- if .Values.metrics.podAnnotations }}
prometheus.io/scrape: "true"
prometheus.io/port: {{ .Values.metrics.port | quote }}
prometheus.io/path: /metrics
{{- end }}
{{- end -}}

{{/* Writable directories under a read-only root filesystem: the data directory (scratch, converter
     profiles) and /tmp. */}}
{{- define "docgen.scratchVolumes" -}}
- name: data
  emptyDir: {}
- name: tmp
  emptyDir: {}
{{- end -}}
{{- define "docgen.scratchMounts" -}}
- name: data
  mountPath: /var/lib/docgen
- name: tmp
  mountPath: /tmp
{{- end -}}
