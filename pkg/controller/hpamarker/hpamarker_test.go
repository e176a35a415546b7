package hpamarker

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestTargetOf(t *testing.T) {
	hpa := func(apiVersion, kind, name string) *autoscalingv2.HorizontalPodAutoscaler {
		return &autoscalingv2.HorizontalPodAutoscaler{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "h"},
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{
				APIVersion: apiVersion, Kind: kind, Name: name}},
		}
	}
	cases := map[string]struct {
		hpa    *autoscalingv2.HorizontalPodAutoscaler
		want   Key
		wantOK bool
	}{
		"deployment":          {hpa: hpa("apps/v1", "Deployment", "web"), want: Key{"apps", "Deployment", "ns", "web"}, wantOK: true},
		"statefulset":         {hpa: hpa("apps/v1", "StatefulSet", "db"), want: Key{"apps", "StatefulSet", "ns", "db"}, wantOK: true},
		"replicaset":          {hpa: hpa("apps/v1", "ReplicaSet", "rs")},
		"deployment of a CRD": {hpa: hpa("example.com/v1", "Deployment", "web")},
		"no name":             {hpa: hpa("apps/v1", "Deployment", "")},
		"bad apiVersion":      {hpa: hpa("a/b/c", "Deployment", "web")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := targetOf(tc.hpa)
			if ok != tc.wantOK {
				t.Fatalf("targetOf ok = %v, want %v", ok, tc.wantOK)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("targetOf (-want +got):\n%s", diff)
			}
		})
	}
}
