package overridemanager

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
)

func mustObj(t *testing.T, s string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	data, err := yaml.YAMLToJSON([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	if err := u.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	return u
}

const deployment = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: nginx
  namespace: demo
  labels: {app: nginx}
spec:
  replicas: 2
  template:
    spec:
      containers:
      - name: nginx
        image: registry.k8s.io/nginx:1.27
        command: [nginx, -g]
        args: [a, b]
      - name: side
        image: busybox
`

const configMap = `
apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg
  namespace: demo
data:
  config.json: '{"db":{"host":"a","port":5432}}'
  config.yaml: |
    db:
      host: a
`

func raw(s string) apiextensionsv1.JSON { return apiextensionsv1.JSON{Raw: []byte(s)} }

func op(name string, ov policyv1alpha1.Overriders, selectors ...policyv1alpha1.ResourceSelector) policyv1alpha1.OverridePolicy {
	return policyv1alpha1.OverridePolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "demo"},
		Spec:       policyv1alpha1.OverrideSpec{ResourceSelectors: selectors, OverrideRules: []policyv1alpha1.RuleWithCluster{{Overriders: ov}}},
	}
}

func TestOverriders(t *testing.T) {
	cases := map[string]struct {
		obj     string
		ov      policyv1alpha1.Overriders
		want    string
		wantErr string
	}{
		"image registry replace, auto-detected paths": {
			obj:  deployment,
			ov:   policyv1alpha1.Overriders{ImageOverrider: []policyv1alpha1.ImageOverrider{{Component: policyv1alpha1.Registry, Operator: policyv1alpha1.OverriderOpReplace, Value: "mirror.io"}}},
			want: "mirror.io/nginx:1.27|mirror.io/busybox",
		},
		"image registry add appends to the registry": {
			obj:  deployment,
			ov:   policyv1alpha1.Overriders{ImageOverrider: []policyv1alpha1.ImageOverrider{{Component: policyv1alpha1.Registry, Operator: policyv1alpha1.OverriderOpAdd, Value: "-test"}}},
			want: "registry.k8s.io-test/nginx:1.27|-test/busybox",
		},
		"image registry remove": {
			obj:  deployment,
			ov:   policyv1alpha1.Overriders{ImageOverrider: []policyv1alpha1.ImageOverrider{{Component: policyv1alpha1.Registry, Operator: policyv1alpha1.OverriderOpRemove}}},
			want: "nginx:1.27|busybox",
		},
		"image repository replace": {
			obj:  deployment,
			ov:   policyv1alpha1.Overriders{ImageOverrider: []policyv1alpha1.ImageOverrider{{Component: policyv1alpha1.Repository, Operator: policyv1alpha1.OverriderOpReplace, Value: "library/nginx"}}},
			want: "registry.k8s.io/library/nginx:1.27|library/nginx",
		},
		"image tag with predicate touches only that path": {
			obj: deployment,
			ov: policyv1alpha1.Overriders{ImageOverrider: []policyv1alpha1.ImageOverrider{{Predicate: &policyv1alpha1.ImagePredicate{Path: "/spec/template/spec/containers/1/image"},
				Component: policyv1alpha1.Tag, Operator: policyv1alpha1.OverriderOpReplace, Value: "1.36"}}},
			want: "registry.k8s.io/nginx:1.27|busybox:1.36",
		},
		"image tag add and remove": {
			obj: deployment,
			ov: policyv1alpha1.Overriders{ImageOverrider: []policyv1alpha1.ImageOverrider{
				{Component: policyv1alpha1.Tag, Operator: policyv1alpha1.OverriderOpRemove},
				{Component: policyv1alpha1.Tag, Operator: policyv1alpha1.OverriderOpAdd, Value: "v2"}}},
			want: "registry.k8s.io/nginx:v2|busybox:v2",
		},
		"image predicate path missing": {
			obj: deployment,
			ov: policyv1alpha1.Overriders{ImageOverrider: []policyv1alpha1.ImageOverrider{{Predicate: &policyv1alpha1.ImagePredicate{Path: "/spec/template/spec/containers/5/image"},
				Component: policyv1alpha1.Tag, Operator: policyv1alpha1.OverriderOpReplace, Value: "x"}}},
			wantErr: "imageOverrider replace Tag at /spec/template/spec/containers/5/image: path not found",
		},
		"command add and args remove on the named container": {
			obj: deployment,
			ov: policyv1alpha1.Overriders{
				CommandOverrider: []policyv1alpha1.CommandArgsOverrider{{ContainerName: "nginx", Operator: policyv1alpha1.OverriderOpAdd, Value: []string{"daemon off;"}}},
				ArgsOverrider:    []policyv1alpha1.CommandArgsOverrider{{ContainerName: "nginx", Operator: policyv1alpha1.OverriderOpRemove, Value: []string{"a"}}},
			},
			want: "nginx -g daemon off;|b",
		},
		"labels add replace remove": {
			obj: deployment,
			ov: policyv1alpha1.Overriders{LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{
				{Operator: policyv1alpha1.OverriderOpAdd, Value: map[string]string{"env": "prod"}},
				{Operator: policyv1alpha1.OverriderOpReplace, Value: map[string]string{"app": "web", "absent": "x"}},
				{Operator: policyv1alpha1.OverriderOpRemove, Value: map[string]string{"env": ""}},
			}},
			want: "map[app:web]",
		},
		"annotations add creates the map": {
			obj:  deployment,
			ov:   policyv1alpha1.Overriders{AnnotationsOverrider: []policyv1alpha1.LabelAnnotationOverrider{{Operator: policyv1alpha1.OverriderOpAdd, Value: map[string]string{"a": "1"}}}},
			want: "map[a:1]",
		},
		"plaintext replace": {
			obj:  deployment,
			ov:   policyv1alpha1.Overriders{Plaintext: []policyv1alpha1.PlaintextOverrider{{Path: "/spec/replicas", Operator: policyv1alpha1.OverriderOpReplace, Value: raw("5")}}},
			want: "5",
		},
		"plaintext add to list end and remove": {
			obj: deployment,
			ov: policyv1alpha1.Overriders{Plaintext: []policyv1alpha1.PlaintextOverrider{
				{Path: "/spec/template/spec/containers/0/args/-", Operator: policyv1alpha1.OverriderOpAdd, Value: raw(`"c"`)},
				{Path: "/spec/template/spec/containers/0/args/0", Operator: policyv1alpha1.OverriderOpRemove},
			}},
			want: "nginx -g|b c",
		},
		"plaintext replace of a missing path": {
			obj:     deployment,
			ov:      policyv1alpha1.Overriders{Plaintext: []policyv1alpha1.PlaintextOverrider{{Path: "/spec/replicas2", Operator: policyv1alpha1.OverriderOpReplace, Value: raw("5")}}},
			wantErr: "plaintext replace /spec/replicas2: path not found",
		},
		"field JSON": {
			obj: configMap,
			ov: policyv1alpha1.Overriders{FieldOverrider: []policyv1alpha1.FieldOverrider{{FieldPath: "/data/config.json", JSON: []policyv1alpha1.JSONPatchOperation{
				{SubPath: "/db/host", Operator: policyv1alpha1.OverriderOpReplace, Value: raw(`"b"`)},
				{SubPath: "/db/port", Operator: policyv1alpha1.OverriderOpRemove},
				{SubPath: "/db/tls", Operator: policyv1alpha1.OverriderOpAdd, Value: raw(`true`)},
			}}}},
			want: `{"db":{"host":"b","tls":true}}`,
		},
		"field YAML": {
			obj: configMap,
			ov: policyv1alpha1.Overriders{FieldOverrider: []policyv1alpha1.FieldOverrider{{FieldPath: "/data/config.yaml", YAML: []policyv1alpha1.YAMLPatchOperation{
				{SubPath: "/db/host", Operator: policyv1alpha1.OverriderOpReplace, Value: raw(`"b"`)},
			}}}},
			want: "db:\n  host: b\n",
		},
		"field with a missing sub path": {
			obj: configMap,
			ov: policyv1alpha1.Overriders{FieldOverrider: []policyv1alpha1.FieldOverrider{{FieldPath: "/data/config.json", JSON: []policyv1alpha1.JSONPatchOperation{
				{SubPath: "/nope/x", Operator: policyv1alpha1.OverriderOpReplace, Value: raw(`1`)}}}}},
			wantErr: "fieldOverrider /data/config.json: replace /nope/x: path not found",
		},
		"image runs before plaintext": {
			obj: deployment,
			ov: policyv1alpha1.Overriders{
				Plaintext:      []policyv1alpha1.PlaintextOverrider{{Path: "/spec/template/spec/containers/1/image", Operator: policyv1alpha1.OverriderOpReplace, Value: raw(`"final"`)}},
				ImageOverrider: []policyv1alpha1.ImageOverrider{{Component: policyv1alpha1.Registry, Operator: policyv1alpha1.OverriderOpReplace, Value: "mirror.io"}},
			},
			want: "mirror.io/nginx:1.27|final",
		},
	}
	cluster := utiltesting.MakeCluster("member1").Obj()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obj := mustObj(t, tc.obj)
			out, applied, err := Apply(obj, cluster, nil, []policyv1alpha1.OverridePolicy{op("p", tc.ov)})
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			wantErr := ""
			if tc.wantErr != "" {
				wantErr = "OverridePolicy demo/p: " + tc.wantErr
			}
			if diff := cmp.Diff(wantErr, gotErr); diff != "" {
				t.Fatalf("error (-want +got):\n%s", diff)
			}
			if err != nil {
				return
			}
			if diff := cmp.Diff([]Applied{{PolicyKind: "OverridePolicy", PolicyName: "p", Namespace: "demo"}}, applied); diff != "" {
				t.Errorf("applied (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, summary(out, tc.ov)); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(mustObj(t, tc.obj), obj); diff != "" {
				t.Errorf("input changed (-want +got):\n%s", diff)
			}
		})
	}
}

// summary shows the part of obj the overriders touch.
func summary(obj *unstructured.Unstructured, ov policyv1alpha1.Overriders) string {
	cs, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
	switch {
	case len(ov.ImageOverrider) > 0:
		var imgs []string
		for _, c := range cs {
			imgs = append(imgs, c.(map[string]any)["image"].(string))
		}
		return strings.Join(imgs, "|")
	case len(ov.CommandOverrider) > 0 || len(ov.Plaintext) > 0 && strings.Contains(ov.Plaintext[0].Path, "args"):
		c := cs[0].(map[string]any)
		cmd, _, _ := unstructured.NestedStringSlice(c, "command")
		args, _, _ := unstructured.NestedStringSlice(c, "args")
		return strings.Join(cmd, " ") + "|" + strings.Join(args, " ")
	case len(ov.LabelsOverrider) > 0:
		return fmt.Sprint(obj.GetLabels())
	case len(ov.AnnotationsOverrider) > 0:
		return fmt.Sprint(obj.GetAnnotations())
	case len(ov.FieldOverrider) > 0:
		return obj.Object["data"].(map[string]any)[strings.TrimPrefix(ov.FieldOverrider[0].FieldPath, "/data/")].(string)
	default:
		n, _, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas")
		return fmt.Sprint(n)
	}
}

// TestIdentityIsImmutable: no overrider may change what identifies the
// object, whatever path it takes there (admission refuses the static
// plaintext paths; this is the check that holds for every overrider and for
// policies stored before that rule).
func TestIdentityIsImmutable(t *testing.T) {
	cluster := utiltesting.MakeCluster("member1").Obj()
	plaintext := func(path, value string) policyv1alpha1.Overriders {
		return policyv1alpha1.Overriders{Plaintext: []policyv1alpha1.PlaintextOverrider{{Path: path, Operator: policyv1alpha1.OverriderOpReplace, Value: raw(value)}}}
	}
	cases := map[string]struct {
		ov        policyv1alpha1.Overriders
		wantField string
	}{
		"namespace":       {ov: plaintext("/metadata/namespace", `"kube-system"`), wantField: "metadata.namespace"},
		"name":            {ov: plaintext("/metadata/name", `"other"`), wantField: "metadata.name"},
		"kind":            {ov: plaintext("/kind", `"Secret"`), wantField: "kind"},
		"apiVersion":      {ov: plaintext("/apiVersion", `"v2"`), wantField: "apiVersion"},
		"whole metadata":  {ov: plaintext("/metadata", `{"name":"cfg","namespace":"kube-system"}`), wantField: "metadata.namespace"},
		"metadata scalar": {ov: plaintext("/metadata", `"x"`), wantField: "metadata"},
		"owner references added": {ov: policyv1alpha1.Overriders{Plaintext: []policyv1alpha1.PlaintextOverrider{{Path: "/metadata/ownerReferences",
			Operator: policyv1alpha1.OverriderOpAdd, Value: raw(`[{"apiVersion":"v1","kind":"Node","name":"n","uid":"u"}]`)}}}, wantField: "metadata.ownerReferences"},
		"labels are fine":    {ov: policyv1alpha1.Overriders{Plaintext: []policyv1alpha1.PlaintextOverrider{{Path: "/metadata/labels", Operator: policyv1alpha1.OverriderOpAdd, Value: raw(`{"a":"b"}`)}}}},
		"same value is fine": {ov: plaintext("/metadata/namespace", `"demo"`)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out, _, err := Apply(mustObj(t, configMap), cluster, nil, []policyv1alpha1.OverridePolicy{op("move", tc.ov)})
			if tc.wantField == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("override changing %s was applied: %v", tc.wantField, out.Object["metadata"])
			}
			want := "OverridePolicy demo/move: overrideRules[0]: changes " + tc.wantField + "; an override may not change the object's identity"
			if !strings.HasPrefix(err.Error(), want) {
				t.Errorf("error %q, want prefix %q", err, want)
			}
		})
	}
}
