package jsonpack

import "strings"

// The dictionaries are text that member copies and templates share, as
// unstructured.MarshalJSON writes it (keys sorted, no spaces) and, for the
// most common kinds, as a kube-apiserver writes it (Go struct order),
// which is how member informers keep them (clustercache/wire.go). DEFLATE
// looks back at most 32 KB and codes near matches in fewer bits, so the
// most common text comes last. Changing one changes nothing stored
// (packed documents live only in this process's memory), only how well
// new ones pack.
//
// The two most common kinds get dictionaries of their own, one per key
// order, a quarter to a half the size of the general one: a compressor
// reads its whole dictionary before each document, which was two thirds
// of the time spent packing a member Deployment with the general one.
var (
	general           = join(rareKinds, podTemplateExtras, deploymentStatus, metadata, configMapSorted, deploymentSorted, configMapServer, deploymentServer)
	configMapsSorted  = join(metadata, configMapSorted)
	configMapsServer  = join(metadata, configMapServer)
	deploymentsSorted = join(podTemplateExtras, deploymentStatus, metadata, deploymentSorted)
	deploymentsServer = join(metadata, deploymentServer)
)

func join(parts ...string) []byte { return []byte(strings.Join(parts, "\n")) }

// Kinds seen less often.
var rareKinds = strings.Join([]string{
	`{"apiVersion":"batch/v1","kind":"CronJob","metadata":{},"spec":{"concurrencyPolicy":"Allow","failedJobsHistoryLimit":1,"jobTemplate":{"metadata":{"creationTimestamp":null},"spec":{"backoffLimit":6,"completionMode":"NonIndexed","completions":1,"manualSelector":false,"parallelism":1,"podReplacementPolicy":"TerminatingOrFailed","suspend":false,"template":{}}},"schedule":"*/5 * * * *","successfulJobsHistoryLimit":3,"suspend":false},"status":{}}`,
	`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":""},"subjects":[{"kind":"ServiceAccount","name":"","namespace":""}]}`,
	`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","rules":[{"apiGroups":[""],"resources":["pods","configmaps","secrets"],"verbs":["get","list","watch","create","update","patch","delete"]}]}`,
	`{"apiVersion":"networking.k8s.io/v1","kind":"Ingress","spec":{"ingressClassName":"nginx","rules":[{"host":"","http":{"paths":[{"backend":{"service":{"name":"","port":{"number":80}}},"path":"/","pathType":"Prefix"}]}}]},"status":{"loadBalancer":{}}}`,
	`{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","spec":{"maxUnavailable":1,"selector":{"matchLabels":{}}},"status":{"currentHealthy":0,"desiredHealthy":0,"disruptionsAllowed":0,"expectedPods":0,"observedGeneration":1}}`,
	`{"apiVersion":"v1","kind":"PersistentVolumeClaim","spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}},"storageClassName":"standard","volumeMode":"Filesystem"},"status":{"phase":"Pending"}}`,
	`{"apiVersion":"apps/v1","kind":"DaemonSet","spec":{"revisionHistoryLimit":10,"updateStrategy":{"rollingUpdate":{"maxSurge":0,"maxUnavailable":1},"type":"RollingUpdate"}},"status":{"currentNumberScheduled":0,"desiredNumberScheduled":0,"numberMisscheduled":0,"numberReady":0}}`,
	`{"apiVersion":"apps/v1","kind":"StatefulSet","spec":{"persistentVolumeClaimRetentionPolicy":{"whenDeleted":"Retain","whenScaled":"Retain"},"podManagementPolicy":"OrderedReady","replicas":1,"revisionHistoryLimit":10,"serviceName":"","updateStrategy":{"rollingUpdate":{"partition":0},"type":"RollingUpdate"},"volumeClaimTemplates":[{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"creationTimestamp":null,"name":"data"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}},"volumeMode":"Filesystem"},"status":{"phase":"Pending"}}]},"status":{"availableReplicas":0,"replicas":0}}`,
	`{"apiVersion":"batch/v1","kind":"Job","spec":{"backoffLimit":6,"completionMode":"NonIndexed","completions":1,"manualSelector":false,"parallelism":1,"podReplacementPolicy":"TerminatingOrFailed","suspend":false,"template":{"spec":{"restartPolicy":"Never"}}},"status":{}}`,
	`{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","spec":{"maxReplicas":10,"metrics":[{"resource":{"name":"cpu","target":{"averageUtilization":50,"type":"Utilization"}},"type":"Resource"}],"minReplicas":1,"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":""}},"status":{"currentMetrics":null,"currentReplicas":1,"desiredReplicas":1}}`,
	`{"apiVersion":"v1","kind":"ServiceAccount","metadata":{}}`,
	`{"apiVersion":"v1","data":{},"kind":"Secret","metadata":{},"type":"Opaque"}`,
	`{"apiVersion":"v1","kind":"Service","spec":{"clusterIP":"","clusterIPs":[""],"internalTrafficPolicy":"Cluster","ipFamilies":["IPv4"],"ipFamilyPolicy":"SingleStack","ports":[{"name":"http","port":80,"protocol":"TCP","targetPort":8080}],"selector":{},"sessionAffinity":"None","type":"ClusterIP"},"status":{"loadBalancer":{}}}`,
	`{"apiVersion":"v1","kind":"Namespace","spec":{"finalizers":["kubernetes"]},"status":{"phase":"Active"}}`,
}, "\n")

// Pod template fields beyond the defaults.
var podTemplateExtras = strings.Join([]string{
	`"env":[{"name":"","value":""}],"ports":[{"containerPort":8080,"name":"http","protocol":"TCP"}],"readinessProbe":{"failureThreshold":3,"httpGet":{"path":"/healthz","port":8080,"scheme":"HTTP"},"initialDelaySeconds":5,"periodSeconds":10,"successThreshold":1,"timeoutSeconds":1},"livenessProbe":{"failureThreshold":3,"httpGet":{"path":"/healthz","port":8080,"scheme":"HTTP"},"periodSeconds":10,"successThreshold":1,"timeoutSeconds":1},"resources":{"limits":{"cpu":"500m","memory":"512Mi"},"requests":{"cpu":"100m","memory":"128Mi"}},"volumeMounts":[{"mountPath":"/etc/config","name":"config"}]`,
	`"volumes":[{"configMap":{"defaultMode":420,"name":""},"name":"config"},{"name":"data","persistentVolumeClaim":{"claimName":""}}],"serviceAccountName":"","serviceAccount":"","nodeSelector":{},"tolerations":[{"effect":"NoExecute","key":"node.kubernetes.io/not-ready","operator":"Exists","tolerationSeconds":300}],"affinity":{}`,
}, "\n")

// Deployment status as a member's controllers write it.
const deploymentStatus = `"status":{"availableReplicas":1,"conditions":[{"lastTransitionTime":"2026-01-01T00:00:00Z","lastUpdateTime":"2026-01-01T00:00:00Z","message":"Deployment has minimum availability.","reason":"MinimumReplicasAvailable","status":"True","type":"Available"},{"lastTransitionTime":"2026-01-01T00:00:00Z","lastUpdateTime":"2026-01-01T00:00:00Z","message":"ReplicaSet \"\" has successfully progressed.","reason":"NewReplicaSetAvailable","status":"True","type":"Progressing"}],"observedGeneration":1,"readyReplicas":1,"replicas":1,"updatedReplicas":1}`

// Karmada's and atoll's metadata on templates and member copies.
const metadata = `"propagationpolicy.karmada.io/name":"","propagationpolicy.karmada.io/namespace":"","propagationpolicy.karmada.io/permanent-id":"","clusterpropagationpolicy.karmada.io/name":"","clusterpropagationpolicy.karmada.io/permanent-id":"","policy.karmada.io/applied-overrides":"","policy.karmada.io/applied-cluster-overrides":"","atoll.dev/preserve-on-delete":"true","atoll.dev/took-over":"true","atoll.dev/retain-replicas-by-hpa":"true","clusterresourcebinding.karmada.io/name":"","clusterresourcebinding.karmada.io/permanent-id":"","kubectl.kubernetes.io/last-applied-configuration":"","app.kubernetes.io/name":"","app.kubernetes.io/instance":"","app.kubernetes.io/managed-by":"","app.kubernetes.io/component":"","app.kubernetes.io/part-of":"","app.kubernetes.io/version":""`

// A ConfigMap and a defaulted Deployment as members keep them, keys
// sorted and as a kube-apiserver writes them.
const (
	configMapSorted  = `{"apiVersion":"v1","data":{},"kind":"ConfigMap","metadata":{"annotations":{"atoll.dev/manifest-hash":"","resourcebinding.karmada.io/name":"-configmap","resourcebinding.karmada.io/namespace":""},"creationTimestamp":"2026-01-01T00:00:00Z","labels":{"karmada.io/managed":"true","resourcebinding.karmada.io/permanent-id":""},"name":"","namespace":"default","resourceVersion":"","uid":""}}`
	deploymentSorted = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{"atoll.dev/manifest-hash":"","deployment.kubernetes.io/revision":"1","resourcebinding.karmada.io/name":"-deployment","resourcebinding.karmada.io/namespace":""},"creationTimestamp":"2026-01-01T00:00:00Z","generation":1,"labels":{"app":"","karmada.io/managed":"true","resourcebinding.karmada.io/permanent-id":""},"name":"","namespace":"default","resourceVersion":"","uid":""},"spec":{"progressDeadlineSeconds":600,"replicas":1,"revisionHistoryLimit":10,"selector":{"matchLabels":{"app":""}},"strategy":{"rollingUpdate":{"maxSurge":"25%","maxUnavailable":"25%"},"type":"RollingUpdate"},"template":{"metadata":{"creationTimestamp":null,"labels":{"app":""}},"spec":{"containers":[{"image":"registry.k8s.io/pause:3.9","imagePullPolicy":"IfNotPresent","name":"","resources":{},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"}],"dnsPolicy":"ClusterFirst","restartPolicy":"Always","schedulerName":"default-scheduler","securityContext":{},"terminationGracePeriodSeconds":30}}},"status":{}}`
	configMapServer  = `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"","namespace":"default","uid":"","resourceVersion":"","creationTimestamp":"2026-01-01T00:00:00Z","labels":{"karmada.io/managed":"true","resourcebinding.karmada.io/permanent-id":""},"annotations":{"atoll.dev/manifest-hash":"","resourcebinding.karmada.io/name":"-configmap","resourcebinding.karmada.io/namespace":""}},"data":{}}`
	deploymentServer = `{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"","namespace":"default","uid":"","resourceVersion":"","generation":1,"creationTimestamp":"2026-01-01T00:00:00Z","labels":{"app":"","karmada.io/managed":"true","resourcebinding.karmada.io/permanent-id":""},"annotations":{"atoll.dev/manifest-hash":"","deployment.kubernetes.io/revision":"1","resourcebinding.karmada.io/name":"-deployment","resourcebinding.karmada.io/namespace":""}},"spec":{"replicas":1,"selector":{"matchLabels":{"app":""}},"template":{"metadata":{"labels":{"app":""}},"spec":{"containers":[{"name":"","image":"registry.k8s.io/pause:3.9","resources":{},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","imagePullPolicy":"IfNotPresent"}],"restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst","securityContext":{},"schedulerName":"default-scheduler"}},"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":"25%","maxSurge":"25%"}},"revisionHistoryLimit":10,"progressDeadlineSeconds":600},"status":{"observedGeneration":1,"replicas":1,"updatedReplicas":1,"readyReplicas":1,"availableReplicas":1,"conditions":[{"type":"Available","status":"True","lastUpdateTime":"2026-01-01T00:00:00Z","lastTransitionTime":"2026-01-01T00:00:00Z","reason":"MinimumReplicasAvailable","message":"Deployment has minimum availability."},{"type":"Progressing","status":"True","lastUpdateTime":"2026-01-01T00:00:00Z","lastTransitionTime":"2026-01-01T00:00:00Z","reason":"NewReplicaSetAvailable","message":"ReplicaSet \"\" has successfully progressed."}]}}`
)
