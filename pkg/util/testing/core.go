package testing

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NamespaceWrapper builds a Namespace.
type NamespaceWrapper struct{ corev1.Namespace }

// MakeNamespace starts Namespace name.
func MakeNamespace(name string) *NamespaceWrapper {
	return &NamespaceWrapper{corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}}
}

// Obj returns a copy of the built Namespace.
func (w *NamespaceWrapper) Obj() *corev1.Namespace { return w.DeepCopy() }

// ConfigMapWrapper builds a ConfigMap.
type ConfigMapWrapper struct{ corev1.ConfigMap }

// MakeConfigMap starts ConfigMap namespace/name with no data.
func MakeConfigMap(name, namespace string) *ConfigMapWrapper {
	return &ConfigMapWrapper{corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}}
}

// Obj returns a copy of the built ConfigMap.
func (w *ConfigMapWrapper) Obj() *corev1.ConfigMap { return w.DeepCopy() }

// Data sets data[key].
func (w *ConfigMapWrapper) Data(key, value string) *ConfigMapWrapper {
	if w.ConfigMap.Data == nil {
		w.ConfigMap.Data = map[string]string{}
	}
	w.ConfigMap.Data[key] = value
	return w
}

// Labels sets the labels (nil: none).
func (w *ConfigMapWrapper) Labels(labels map[string]string) *ConfigMapWrapper {
	w.ObjectMeta.Labels = labels
	return w
}

// Annotations sets the annotations (nil: none).
func (w *ConfigMapWrapper) Annotations(annotations map[string]string) *ConfigMapWrapper {
	w.ObjectMeta.Annotations = annotations
	return w
}
