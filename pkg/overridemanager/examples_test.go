package overridemanager

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
)

const exampleDeployment = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: nginx
  namespace: demo
  labels: {registry-mirror: enabled}
spec:
  replicas: 2
  template:
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
        env:
        - name: APP_SETTINGS_JSON
          value: '{"logLevel":"info","cache":{"enabled":true}}'
`

// TestExamples applies the policies of examples/ to a Deployment on
// clusters they do and do not target.
func TestExamples(t *testing.T) {
	read := func(path string, into any) {
		t.Helper()
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.UnmarshalStrict(data, into); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	var op policyv1alpha1.OverridePolicy
	var cop policyv1alpha1.ClusterOverridePolicy
	read("../../examples/overridepolicy.yaml", &op)
	read("../../examples/clusteroverridepolicy.yaml", &cop)

	type result struct {
		Image, Env, Tier, Mirror string
		Replicas                 int64
		Applied                  []string
	}
	cases := map[string]struct {
		cluster string
		region  string
		want    result
	}{
		"member1 in eu-central-1: mirror, replicas, label and JSON env": {cluster: "member1", region: "eu-central-1", want: result{
			Image: "mirror.eu.example.com/nginx:1.27", Env: `{"cache":{"enabled":false},"logLevel":"debug"}`, Tier: "primary", Replicas: 4,
			Applied: []string{"OverridePolicy demo/nginx-overrides"}}},
		"member2 in us-east-1: the cluster policy only": {cluster: "member2", region: "us-east-1", want: result{
			Image: "mirror.us-east-1.example.com/nginx:1.27", Env: `{"logLevel":"info","cache":{"enabled":true}}`, Mirror: "mirror.us-east-1.example.com", Replicas: 2,
			Applied: []string{"ClusterOverridePolicy us-east-registry-mirror"}}},
		"member3 elsewhere: nothing": {cluster: "member3", region: "ap-south-1", want: result{
			Image: "nginx:1.27", Env: `{"logLevel":"info","cache":{"enabled":true}}`, Replicas: 2}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out, applied, err := Apply(mustObj(t, exampleDeployment), utiltesting.MakeCluster(tc.cluster).Region(tc.region).Obj(),
				[]policyv1alpha1.ClusterOverridePolicy{cop}, []policyv1alpha1.OverridePolicy{op})
			if err != nil {
				t.Fatal(err)
			}
			got := result{Tier: out.GetLabels()["traffic-tier"], Mirror: out.GetAnnotations()["example.com/registry-mirror"]}
			c := out.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
			got.Image = c["image"].(string)
			got.Env = c["env"].([]any)[0].(map[string]any)["value"].(string)
			got.Replicas = out.Object["spec"].(map[string]any)["replicas"].(int64)
			for _, a := range applied {
				got.Applied = append(got.Applied, a.String())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
