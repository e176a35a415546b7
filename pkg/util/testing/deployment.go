package testing

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// DeploymentWrapper builds an apps/v1 Deployment.
type DeploymentWrapper struct{ appsv1.Deployment }

// MakeDeployment starts Deployment namespace/name: one replica, labelled
// app=NAME, whose pods (labelled app=NAME, which the selector matches) run
// one container NAME of image nginx:1.27 without resource requests.
func MakeDeployment(name, namespace string) *DeploymentWrapper {
	labels := func() map[string]string { return map[string]string{"app": name} }
	return &DeploymentWrapper{appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels()},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels()},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels()},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: name, Image: "nginx:1.27"}}},
			},
		},
	}}
}

// Obj returns a copy of the built Deployment.
func (w *DeploymentWrapper) Obj() *appsv1.Deployment { return w.DeepCopy() }

// Label sets a label on the Deployment (not on its pods).
func (w *DeploymentWrapper) Label(k, v string) *DeploymentWrapper {
	if w.Labels == nil {
		w.Labels = map[string]string{}
	}
	w.Labels[k] = v
	return w
}

// Replicas sets spec.replicas.
func (w *DeploymentWrapper) Replicas(n int32) *DeploymentWrapper {
	w.Spec.Replicas = ptr.To(n)
	return w
}

func (w *DeploymentWrapper) last() *corev1.Container {
	cs := w.Spec.Template.Spec.Containers
	return &cs[len(cs)-1]
}

// Container renames the last container and sets its image.
func (w *DeploymentWrapper) Container(name, image string) *DeploymentWrapper {
	c := w.last()
	c.Name, c.Image = name, image
	return w
}

// Image sets the image of the last container.
func (w *DeploymentWrapper) Image(image string) *DeploymentWrapper {
	w.last().Image = image
	return w
}

// AddContainer appends a container; the container methods that follow
// apply to it.
func (w *DeploymentWrapper) AddContainer(name, image string) *DeploymentWrapper {
	w.Spec.Template.Spec.Containers = append(w.Spec.Template.Spec.Containers, corev1.Container{Name: name, Image: image})
	return w
}

// Request sets a resource request of the last container, e.g.
// Request(corev1.ResourceCPU, "200m").
func (w *DeploymentWrapper) Request(name corev1.ResourceName, quantity string) *DeploymentWrapper {
	c := w.last()
	if c.Resources.Requests == nil {
		c.Resources.Requests = corev1.ResourceList{}
	}
	c.Resources.Requests[name] = resource.MustParse(quantity)
	return w
}

// EnvFromConfigMap makes the last container read ConfigMap name through
// envFrom.
func (w *DeploymentWrapper) EnvFromConfigMap(name string) *DeploymentWrapper {
	c := w.last()
	c.EnvFrom = append(c.EnvFrom, corev1.EnvFromSource{
		ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}})
	return w
}

// SecretVolume adds a pod volume, named like the Secret, of Secret name.
func (w *DeploymentWrapper) SecretVolume(name string) *DeploymentWrapper {
	spec := &w.Spec.Template.Spec
	spec.Volumes = append(spec.Volumes, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{
		Secret: &corev1.SecretVolumeSource{SecretName: name}}})
	return w
}

// ServiceAccount sets the pods' serviceAccountName.
func (w *DeploymentWrapper) ServiceAccount(name string) *DeploymentWrapper {
	w.Spec.Template.Spec.ServiceAccountName = name
	return w
}
