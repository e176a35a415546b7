package interpreter

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

func toUnstructured(t *testing.T, obj runtime.Object, apiVersion, kind string) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	return u
}

func fullPodSpec() corev1.PodSpec {
	return corev1.PodSpec{
		ServiceAccountName: "robot",
		ImagePullSecrets:   []corev1.LocalObjectReference{{Name: "pull"}},
		Volumes: []corev1.Volume{
			{Name: "a", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cm-vol"}}}},
			{Name: "b", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s-vol"}}},
			{Name: "c", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}},
			{Name: "d", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "cm-proj"}}},
				{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "s-proj"}}},
			}}}},
			{Name: "e", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			{Name: "f", VolumeSource: corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "d",
				NodePublishSecretRef: &corev1.LocalObjectReference{Name: "s-csi"}}}},
			{Name: "g", VolumeSource: corev1.VolumeSource{AzureFile: &corev1.AzureFileVolumeSource{SecretName: "s-azure"}}},
			{Name: "h", VolumeSource: corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "d"}}},
		},
		InitContainers: []corev1.Container{{Name: "init", EnvFrom: []corev1.EnvFromSource{
			{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cm-init"}}},
		}}},
		Containers: []corev1.Container{{Name: "app",
			Env: []corev1.EnvVar{
				{Name: "A", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "cm-env"}, Key: "k"}}},
				{Name: "B", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "s-env"}, Key: "k"}}},
				{Name: "C", Value: "plain"},
				{Name: "D", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "cm-vol"}, Key: "k"}}},
			},
			EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "s-envfrom"}}}},
		}},
	}
}

func TestNativeDependencies(t *testing.T) {
	d := func(kind, name string) Dependency { return Dependency{APIVersion: "v1", Kind: kind, Name: name} }
	all := []Dependency{
		d(KindConfigMap, "cm-env"), d(KindConfigMap, "cm-init"), d(KindConfigMap, "cm-proj"), d(KindConfigMap, "cm-vol"),
		d(KindPersistentVolumeClaim, "data"),
		d(KindSecret, "pull"), d(KindSecret, "s-azure"), d(KindSecret, "s-csi"), d(KindSecret, "s-env"), d(KindSecret, "s-envfrom"), d(KindSecret, "s-proj"), d(KindSecret, "s-vol"),
		d(KindServiceAccount, "robot"),
	}
	defaultSA := fullPodSpec()
	defaultSA.ServiceAccountName = "default"
	cases := map[string]struct {
		obj  *unstructured.Unstructured
		want []Dependency
	}{
		"deployment": {
			obj:  toUnstructured(t, &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: fullPodSpec()}}}, "apps/v1", "Deployment"),
			want: all,
		},
		"cronjob": {
			obj: toUnstructured(t, &batchv1.CronJob{Spec: batchv1.CronJobSpec{JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
				Template: corev1.PodTemplateSpec{Spec: fullPodSpec()}}}}}, "batch/v1", "CronJob"),
			want: all,
		},
		"pod": {
			obj:  toUnstructured(t, &corev1.Pod{Spec: fullPodSpec()}, "v1", "Pod"),
			want: all,
		},
		"default service account is not a dependency": {
			obj:  toUnstructured(t, &corev1.Pod{Spec: defaultSA}, "v1", "Pod"),
			want: all[:len(all)-1],
		},
		"no references": {
			obj:  toUnstructured(t, &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "x"}}}}}}, "apps/v1", "StatefulSet"),
			want: []Dependency{},
		},
		"not a workload": {
			obj: toUnstructured(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, "v1", "ConfigMap"),
		},
		"deployment of another group": {
			obj: toUnstructured(t, &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: fullPodSpec()}}}, "example.com/v1", "Deployment"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := nativeDependencies(tc.obj)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("nativeDependencies() (-want +got):\n%s", diff)
			}
		})
	}
}
