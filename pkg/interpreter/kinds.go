package interpreter

import (
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
)

// Kinds atoll knows natively.
var (
	deploymentGK  = schema.GroupKind{Group: "apps", Kind: "Deployment"}
	statefulSetGK = schema.GroupKind{Group: "apps", Kind: "StatefulSet"}
	replicaSetGK  = schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}
	daemonSetGK   = schema.GroupKind{Group: "apps", Kind: "DaemonSet"}
	jobGK         = schema.GroupKind{Group: "batch", Kind: "Job"}
	cronJobGK     = schema.GroupKind{Group: "batch", Kind: "CronJob"}
	podGK         = schema.GroupKind{Kind: "Pod"}
	serviceGK     = schema.GroupKind{Kind: "Service"}
	pvcGK         = schema.GroupKind{Kind: "PersistentVolumeClaim"}
	saGK          = schema.GroupKind{Kind: "ServiceAccount"}
	snapshotGK    = schema.GroupKind{Group: "snapshot.storage.k8s.io", Kind: "VolumeSnapshot"}
	crdGK         = schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}
	ingressGK     = schema.GroupKind{Group: "networking.k8s.io", Kind: "Ingress"}
	pdbGK         = schema.GroupKind{Group: "policy", Kind: "PodDisruptionBudget"}
)

// kind is what atoll knows natively about one kind. This table is the one
// place that says which kinds are workloads; every controller asks the
// Interpreter rather than switching on kinds itself.
type kind struct {
	// replicas is the path of the replica count atoll divides (nil: the
	// kind has no replicas). A Pod counts as one replica without a path.
	replicas []string
	// podTemplate is the path of the kind's pod template (a
	// PodTemplateSpec; for a Pod, the object itself, path nil with
	// isPod).
	podTemplate []string
	isPod       bool
	// counters are the integer status fields that add up across clusters.
	counters []string
	// health interprets a member object's health (nil: always healthy).
	health func(obj *unstructured.Unstructured, status map[string]any) workv1alpha2.ResourceHealth
	// prune drops the fields a member allocates or owns for itself.
	prune func(obj *unstructured.Unstructured)
	// holdsData: objects of the kind hold data that outlives the workloads
	// using them; atoll never deletes a member copy as a side effect.
	holdsData bool
	// scalable: a member HorizontalPodAutoscaler may own the kind's
	// replicas (ReplicaSets are their Deployments' to scale).
	scalable bool
}

var templateSpec = []string{"spec", "template"}

var kinds = map[schema.GroupKind]kind{
	deploymentGK: {
		replicas: []string{"spec", "replicas"}, podTemplate: templateSpec, scalable: true,
		counters: []string{"replicas", "readyReplicas", "availableReplicas", "updatedReplicas", "unavailableReplicas"},
		health:   replicasHealth("availableReplicas"),
	},
	statefulSetGK: {
		replicas: []string{"spec", "replicas"}, podTemplate: templateSpec, scalable: true,
		counters: []string{"replicas", "readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas"},
		health:   replicasHealth("readyReplicas"),
	},
	replicaSetGK: {
		replicas: []string{"spec", "replicas"}, podTemplate: templateSpec,
		counters: []string{"replicas", "readyReplicas", "availableReplicas", "fullyLabeledReplicas"},
		health:   replicasHealth("availableReplicas"),
	},
	daemonSetGK: {
		podTemplate: templateSpec,
		counters: []string{"currentNumberScheduled", "numberMisscheduled", "desiredNumberScheduled", "numberReady",
			"updatedNumberScheduled", "numberAvailable", "numberUnavailable"},
		health: daemonSetHealth,
	},
	jobGK: {
		replicas: []string{"spec", "parallelism"}, podTemplate: templateSpec,
		counters: []string{"active", "succeeded", "failed", "ready"},
		prune:    pruneJob,
	},
	cronJobGK: {podTemplate: []string{"spec", "jobTemplate", "spec", "template"}},
	podGK:     {isPod: true, health: podHealth, prune: func(o *unstructured.Unstructured) { unstructured.RemoveNestedField(o.Object, "spec", "nodeName") }},
	serviceGK: {prune: pruneService},
	// The budgets of every member add up, as in Karmada.
	pdbGK:      {counters: []string{"currentHealthy", "desiredHealthy", "disruptionsAllowed", "expectedPods"}},
	pvcGK:      {holdsData: true, prune: func(o *unstructured.Unstructured) { unstructured.RemoveNestedField(o.Object, "spec", "volumeName") }},
	saGK:       {prune: func(o *unstructured.Unstructured) { delete(o.Object, "secrets") }},
	snapshotGK: {holdsData: true},
	// A CustomResourceDefinition is healthy once the member serves it; its
	// custom resources are data (see IsCustomResourceDefinition).
	crdGK: {health: crdHealth},
	// What Karmada reflects of a member autoscaler: its replica counts.
	// currentMetrics and lastScaleTime change on every sync of the member's
	// HPA controller and would make every binding status hot.
	hpaGK: {counters: []string{"currentReplicas", "desiredReplicas"}},
}

// IsCustomResourceDefinition reports whether gk is the
// CustomResourceDefinition kind: a member copy of one is deleted only when
// it serves no objects there (deleting it would delete them all).
func IsCustomResourceDefinition(gk schema.GroupKind) bool { return gk == crdGK }

// CustomResourceOf is the resource a CustomResourceDefinition object
// defines (a version it serves, preferring the storage version), and
// whether it is namespaced; ok is false when the object does not say.
func CustomResourceOf(crd *unstructured.Unstructured) (gvr schema.GroupVersionResource, namespaced, ok bool) {
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	plural, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "plural")
	scope, _, _ := unstructured.NestedString(crd.Object, "spec", "scope")
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	version := ""
	for _, v := range versions {
		m, _ := v.(map[string]any)
		name, _ := m["name"].(string)
		served, _ := m["served"].(bool)
		storage, _ := m["storage"].(bool)
		if served && (version == "" || storage) {
			version = name
		}
	}
	if group == "" || plural == "" || version == "" {
		return schema.GroupVersionResource{}, false, false
	}
	return schema.GroupVersionResource{Group: group, Version: version, Resource: plural}, scope == "Namespaced", true
}

func crdHealth(obj *unstructured.Unstructured, _ map[string]any) workv1alpha2.ResourceHealth {
	conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conditions {
		m, _ := c.(map[string]any)
		if m["type"] == "Established" {
			return healthIf(m["status"] == "True")
		}
	}
	return workv1alpha2.ResourceUnhealthy
}

// HoldsData reports whether objects of kind gk hold data that outlives the
// workloads using them (PersistentVolumeClaim, VolumeSnapshot). atoll never
// deletes a member copy of one as a side effect (a workload moving, failing
// over or being re-created); only deleting its own template does.
func HoldsData(gk schema.GroupKind) bool { return kinds[gk].holdsData }

// ScalableKinds are the native kinds whose replicas a member
// HorizontalPodAutoscaler may own, sorted.
func ScalableKinds() []schema.GroupKind {
	var out []schema.GroupKind
	for gk, k := range kinds {
		if k.scalable {
			out = append(out, gk)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// PodTemplatePath is where kind gk keeps its pod template (a
// PodTemplateSpec), and for a Pod the empty path; ok is false for kinds
// without pods.
func PodTemplatePath(gk schema.GroupKind) (path []string, ok bool) {
	k := kinds[gk]
	if k.isPod {
		return nil, true
	}
	return k.podTemplate, k.podTemplate != nil
}

// PodSpecPath is where kind gk keeps its pod spec.
func PodSpecPath(gk schema.GroupKind) ([]string, bool) {
	path, ok := PodTemplatePath(gk)
	if !ok {
		return nil, false
	}
	return append(append([]string{}, path...), "spec"), true
}

func replicasHealth(readyField string) func(*unstructured.Unstructured, map[string]any) workv1alpha2.ResourceHealth {
	return func(obj *unstructured.Unstructured, status map[string]any) workv1alpha2.ResourceHealth {
		want, hasReplicas, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas")
		if !hasReplicas {
			want = 1
		}
		return healthIf(observedCurrent(obj) && num(status, readyField) >= want && num(status, "updatedReplicas") >= want)
	}
}

func daemonSetHealth(obj *unstructured.Unstructured, status map[string]any) workv1alpha2.ResourceHealth {
	desired := num(status, "desiredNumberScheduled")
	return healthIf(observedCurrent(obj) && num(status, "numberAvailable") >= desired && num(status, "updatedNumberScheduled") >= desired)
}

func observedCurrent(obj *unstructured.Unstructured) bool {
	observed, _, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
	return observed >= obj.GetGeneration()
}

func pruneService(obj *unstructured.Unstructured) {
	for _, f := range []string{"clusterIP", "clusterIPs", "healthCheckNodePort", "ipFamilies", "ipFamilyPolicy"} {
		unstructured.RemoveNestedField(obj.Object, "spec", f)
	}
	if ports, ok, _ := unstructured.NestedSlice(obj.Object, "spec", "ports"); ok {
		for _, p := range ports {
			if m, ok := p.(map[string]any); ok {
				delete(m, "nodePort")
			}
		}
		_ = unstructured.SetNestedSlice(obj.Object, ports, "spec", "ports")
	}
}

// pruneJob drops what the member's job controller generates from its own
// UID: the selector and the labels it keys on.
func pruneJob(obj *unstructured.Unstructured) {
	unstructured.RemoveNestedField(obj.Object, "spec", "selector")
	for _, k := range []string{"controller-uid", "batch.kubernetes.io/controller-uid", "job-name", "batch.kubernetes.io/job-name"} {
		unstructured.RemoveNestedField(obj.Object, "spec", "template", "metadata", "labels", k)
	}
}

// PodSpecPathOfKind is PodSpecPath for a kind name in any group: Karmada's
// image, command and args overriders find containers by kind alone, and
// atoll's do the same so that overrides written for Karmada match the same
// objects.
func PodSpecPathOfKind(kind string) ([]string, bool) {
	for gk := range kinds {
		if gk.Kind == kind {
			return PodSpecPath(gk)
		}
	}
	return nil, false
}
