{{/* The name of every object: the release name when it already says nodehook, else release-nodehook. */}}
{{- define "nodehook.fullname" -}}
{{- if contains "nodehook" .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-nodehook" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "nodehook.selectorLabels" -}}
app.kubernetes.io/name: nodehook
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* The steward's pods: another name, so neither the DaemonSet nor the agents' NetworkPolicy selects them. */}}
{{- define "nodehook.stewardSelectorLabels" -}}
app.kubernetes.io/name: nodehook-steward
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "nodehook.labels" -}}
{{ include "nodehook.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "nodehook.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag }}
{{- end -}}

{{/* The rules of the documents `nodehook rbac` printed (rbac.generated, else the shipped config's)
of one kind: the agents' (steward: false) or the steward's (steward: true; named <name>-steward...),
optionally by exact name or by the end of the name (suffix). */}}
{{- define "nodehook.rbacDocument" -}}
{{- $text := .root.Values.rbac.generated -}}
{{- if not $text -}}
{{- $text = printf "%s\n---\n%s\n---\n%s" (.root.Files.Get "files/clusterrole.yaml") (.root.Files.Get "files/lease-role.yaml") (.root.Files.Get "files/agent-pods-role.yaml") -}}
{{- end -}}
{{- range $doc := splitList "\n---" $text -}}
{{- $parsed := fromYaml $doc -}}
{{- $name := get (get $parsed "metadata" | default dict) "name" | default "" -}}
{{- $steward := or (hasSuffix "-steward" $name) (contains "-steward-" $name) -}}
{{- if and (eq (get $parsed "kind") $.kind) (eq $steward (default false $.steward)) (or (not $.name) (eq $name $.name)) (or (not $.suffix) (hasSuffix $.suffix $name)) -}}
{{- toYaml $parsed.rules -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The steward runs when the config says so (tuning.cross_node_writes "steward"), or, with
existingConfigMap, when steward.enabled says so. "true" or "". */}}
{{- define "nodehook.stewardEnabled" -}}
{{- $config := eq (dig "tuning" "cross_node_writes" "agents" .Values.config) "steward" -}}
{{- if .Values.existingConfigMap -}}
{{- if .Values.steward.enabled }}true{{ end -}}
{{- else -}}
{{- if and .Values.steward.enabled (not $config) -}}
{{- fail "steward.enabled: set config.tuning.cross_node_writes to \"steward\" as well, or the agents keep doing the cross-node work themselves (and no node-bound rules confine them)" -}}
{{- end -}}
{{- if $config }}true{{ end -}}
{{- end -}}
{{- end -}}

{{/* The singleton Lease: config.tuning.lease_name, else one per release ("nodehook-singleton" for
the release "nodehook", the agent's default), so two releases in one namespace never elect one
leader between them: each would wait for the other's singleton resources. */}}
{{- define "nodehook.leaseName" -}}
{{- dig "tuning" "lease_name" (printf "%s-singleton" (include "nodehook.fullname" .)) .Values.config -}}
{{- end -}}

{{/* The config as rendered: `config`, with the release's Lease name when it is not the default. */}}
{{- define "nodehook.config" -}}
{{- $config := deepCopy .Values.config -}}
{{- $lease := include "nodehook.leaseName" . -}}
{{- if ne $lease "nodehook-singleton" -}}
{{- $tuning := get $config "tuning" | default dict -}}
{{- $_ := set $tuning "lease_name" $lease -}}
{{- $_ := set $config "tuning" $tuning -}}
{{- end -}}
{{- $config | toPrettyJson -}}
{{- end -}}

{{/* The Lease Role's rules for that Lease, as `nodehook rbac` prints them for the rendered config. */}}
{{- define "nodehook.leaseRules" -}}
- apiGroups: ["coordination.k8s.io"]
  resources: ["leases"]
  verbs: ["create"]
- apiGroups: ["coordination.k8s.io"]
  resources: ["leases"]
  resourceNames: [{{ include "nodehook.leaseName" . | quote }}]
  verbs: ["get", "update"]
{{- end -}}

{{- define "nodehook.configMapName" -}}
{{- .Values.existingConfigMap | default (printf "%s-config" (include "nodehook.fullname" .)) -}}
{{- end -}}

{{/* The pod's networking: the node's own network namespace when hostNetwork is set (DaemonSet and Job). */}}
{{- define "nodehook.podNetwork" -}}
{{- if .Values.hostNetwork }}
hostNetwork: true
dnsPolicy: ClusterFirstWithHostNet
{{- end }}
{{- end -}}

{{/* healthPort is what the probes, the NetworkPolicy and the Service name; the agent listens on
config.tuning.health_address. They must agree, or every probe fails. */}}
{{- define "nodehook.checkHealthPort" -}}
{{- if not .Values.existingConfigMap }}
{{- $address := dig "tuning" "health_address" ":8090" .Values.config }}
{{- if not (hasSuffix (printf ":%d" (int .Values.healthPort)) $address) }}
{{- fail (printf "healthPort is %d but config.tuning.health_address is %q: set it to \":%d\" (or HOST:%d)" (int .Values.healthPort) $address (int .Values.healthPort) (int .Values.healthPort)) }}
{{- end }}
{{- end }}
{{- end -}}
