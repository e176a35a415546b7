package interpreter

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	configv1alpha1 "github.com/atoll-dev/atoll/apis/config/v1alpha1"
)

// Dependency is one object a workload needs in the clusters it runs in.
// Karmada's DependentObjectReference; Namespace empty means the workload's.
type Dependency = configv1alpha1.DependentObjectReference

// Kinds a pod template refers to, all core/v1 and namespaced.
const (
	KindConfigMap             = "ConfigMap"
	KindSecret                = "Secret"
	KindServiceAccount        = "ServiceAccount"
	KindPersistentVolumeClaim = "PersistentVolumeClaim"
)

// nativeDependencies returns the dependencies of a workload of a native
// kind, sorted by kind and name, without duplicates: the ConfigMaps,
// Secrets, PersistentVolumeClaims and ServiceAccount its pod template refers
// to through volumes (including projected sources and the credentials of
// storage volumes), env and envFrom of every container, init container and
// ephemeral container, imagePullSecrets and serviceAccountName. The
// ServiceAccount "default" is not a dependency: every namespace of every
// member has its own (Karmada skips it too).
func nativeDependencies(template *unstructured.Unstructured) ([]Dependency, error) {
	gk := template.GroupVersionKind().GroupKind()
	path, ok := PodSpecPath(gk)
	if !ok {
		return nil, nil
	}
	raw, found, err := unstructured.NestedMap(template.Object, path...)
	if err != nil {
		return nil, fmt.Errorf("reading pod spec of %s %s/%s: %w", gk.Kind, template.GetNamespace(), template.GetName(), err)
	}
	if !found {
		return nil, nil
	}
	var spec corev1.PodSpec
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &spec); err != nil {
		return nil, fmt.Errorf("decoding pod spec of %s %s/%s: %w", gk.Kind, template.GetNamespace(), template.GetName(), err)
	}
	return podDependencies(&spec), nil
}

func podDependencies(spec *corev1.PodSpec) []Dependency {
	type key struct{ kind, name string }
	set := map[key]bool{}
	add := func(kind, name string) {
		if name != "" {
			set[key{kind, name}] = true
		}
	}
	for _, v := range spec.Volumes {
		switch {
		case v.ConfigMap != nil:
			add(KindConfigMap, v.ConfigMap.Name)
		case v.Secret != nil:
			add(KindSecret, v.Secret.SecretName)
		case v.PersistentVolumeClaim != nil:
			add(KindPersistentVolumeClaim, v.PersistentVolumeClaim.ClaimName)
		case v.Projected != nil:
			for _, s := range v.Projected.Sources {
				if s.ConfigMap != nil {
					add(KindConfigMap, s.ConfigMap.Name)
				}
				if s.Secret != nil {
					add(KindSecret, s.Secret.Name)
				}
			}
		default:
			add(KindSecret, volumeSecret(&v.VolumeSource))
		}
	}
	containers := func(env []corev1.EnvVar, envFrom []corev1.EnvFromSource) {
		for _, e := range env {
			if e.ValueFrom == nil {
				continue
			}
			if r := e.ValueFrom.ConfigMapKeyRef; r != nil {
				add(KindConfigMap, r.Name)
			}
			if r := e.ValueFrom.SecretKeyRef; r != nil {
				add(KindSecret, r.Name)
			}
		}
		for _, e := range envFrom {
			if e.ConfigMapRef != nil {
				add(KindConfigMap, e.ConfigMapRef.Name)
			}
			if e.SecretRef != nil {
				add(KindSecret, e.SecretRef.Name)
			}
		}
	}
	for _, c := range spec.InitContainers {
		containers(c.Env, c.EnvFrom)
	}
	for _, c := range spec.Containers {
		containers(c.Env, c.EnvFrom)
	}
	for _, c := range spec.EphemeralContainers {
		containers(c.Env, c.EnvFrom)
	}
	for _, s := range spec.ImagePullSecrets {
		add(KindSecret, s.Name)
	}
	if sa := spec.ServiceAccountName; sa != "default" {
		add(KindServiceAccount, sa)
	}
	out := make([]Dependency, 0, len(set))
	for d := range set {
		out = append(out, Dependency{APIVersion: "v1", Kind: d.kind, Name: d.name})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// volumeSecret is the Secret a storage volume source refers to for its
// credentials, "" when none (the sources Kubernetes' VisitPodSecretNames
// visits, as Karmada's interpreter does).
func volumeSecret(v *corev1.VolumeSource) string {
	ref := func(r *corev1.LocalObjectReference) string {
		if r == nil {
			return ""
		}
		return r.Name
	}
	switch {
	case v.AzureFile != nil:
		return v.AzureFile.SecretName
	case v.CephFS != nil:
		return ref(v.CephFS.SecretRef)
	case v.Cinder != nil:
		return ref(v.Cinder.SecretRef)
	case v.FlexVolume != nil:
		return ref(v.FlexVolume.SecretRef)
	case v.RBD != nil:
		return ref(v.RBD.SecretRef)
	case v.ScaleIO != nil:
		return ref(v.ScaleIO.SecretRef)
	case v.ISCSI != nil:
		return ref(v.ISCSI.SecretRef)
	case v.StorageOS != nil:
		return ref(v.StorageOS.SecretRef)
	case v.CSI != nil:
		return ref(v.CSI.NodePublishSecretRef)
	}
	return ""
}
