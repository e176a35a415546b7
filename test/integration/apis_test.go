package integration

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"

	"github.com/atoll-dev/atoll/test/framework"
)

// TestExamplesApply applies every manifest in examples/ to a real API server.
// Namespaces go first so namespaced examples find theirs.
func TestExamplesApply(t *testing.T) {
	ctx := framework.Context(t, 2*time.Minute)
	c := shared.Client(t)
	files, err := filepath.Glob("../../examples/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples found: %v", err)
	}
	var namespaces, rest []*unstructured.Unstructured
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := framework.DecodeYAML(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, o := range objs {
			if o.GetKind() == "Namespace" {
				namespaces = append(namespaces, o)
			} else {
				rest = append(rest, o)
			}
		}
	}
	if err := framework.Apply(ctx, c, namespaces...); err != nil {
		t.Fatal(err)
	}
	for _, o := range rest {
		if err := framework.Apply(ctx, c, o); err != nil {
			t.Errorf("%v", err)
		}
	}
}

// TestInvalidManifestsRejected checks that the API server refuses each
// manifest in test/testdata/invalid (schema and CRD CEL rules, also checked
// offline by config/crd) and test/testdata/invalid-admission (admission
// policies, which only an API server evaluates) with a message naming the
// field. The first line of each file is "# expect: <substring of the
// message>".
func TestInvalidManifestsRejected(t *testing.T) {
	ctx := framework.Context(t, 2*time.Minute)
	c := shared.Client(t)
	files, err := filepath.Glob("../testdata/invalid/*.yaml")
	admission, err2 := filepath.Glob("../testdata/invalid-admission/*.yaml")
	if err != nil || err2 != nil || len(files) == 0 || len(admission) == 0 {
		t.Fatalf("no invalid manifests found: %v %v", err, err2)
	}
	files = append(files, admission...)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			first, _, _ := bufio.NewReader(bytes.NewReader(data)).ReadLine()
			want, ok := strings.CutPrefix(string(first), "# expect: ")
			if !ok || strings.TrimSpace(want) == "" {
				t.Fatalf("first line must be '# expect: <message substring>', got %q", first)
			}
			objs, err := framework.DecodeYAML(data)
			if err != nil || len(objs) != 1 {
				t.Fatalf("want exactly one object, got %d (%v)", len(objs), err)
			}
			err = framework.Apply(ctx, c, objs[0])
			if err == nil {
				t.Fatalf("accepted; want rejection containing %q", want)
			}
			if !strings.Contains(err.Error(), strings.TrimSpace(want)) {
				t.Errorf("rejection %q does not contain %q", err, want)
			}
		})
	}
}

// TestKarmadaAPIsServed checks group/version/kind, scope and short names as
// discovery reports them, which is what kubectl relies on.
func TestKarmadaAPIsServed(t *testing.T) {
	dc, err := discovery.NewDiscoveryClientForConfig(shared.RESTConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		groupVersion, kind string
		namespaced         bool
		shortNames         []string
		status             bool
	}
	cases := map[string]want{
		"clusters":                   {"cluster.karmada.io/v1alpha1", "Cluster", false, nil, true},
		"propagationpolicies":        {"policy.karmada.io/v1alpha1", "PropagationPolicy", true, []string{"pp"}, false},
		"clusterpropagationpolicies": {"policy.karmada.io/v1alpha1", "ClusterPropagationPolicy", false, []string{"cpp"}, false},
		"overridepolicies":           {"policy.karmada.io/v1alpha1", "OverridePolicy", true, []string{"op"}, false},
		"clusteroverridepolicies":    {"policy.karmada.io/v1alpha1", "ClusterOverridePolicy", false, []string{"cop"}, false},
		"resourcebindings":           {"work.karmada.io/v1alpha2", "ResourceBinding", true, []string{"rb"}, true},
		"clusterresourcebindings":    {"work.karmada.io/v1alpha2", "ClusterResourceBinding", false, []string{"crb"}, true},
		"tenants":                    {"policy.atoll.dev/v1alpha1", "Tenant", false, []string{"tnt"}, true},
	}
	for resource, w := range cases {
		t.Run(resource, func(t *testing.T) {
			list, err := dc.ServerResourcesForGroupVersion(w.groupVersion)
			if err != nil {
				t.Fatalf("discovery of %s: %v", w.groupVersion, err)
			}
			i := slices.IndexFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == resource })
			if i < 0 {
				t.Fatalf("%s not served in %s", resource, w.groupVersion)
			}
			got := list.APIResources[i]
			if got.Kind != w.kind || got.Namespaced != w.namespaced {
				t.Errorf("got kind %s namespaced %v, want %s %v", got.Kind, got.Namespaced, w.kind, w.namespaced)
			}
			sn := slices.Clone(got.ShortNames)
			sort.Strings(sn)
			if !slices.Equal(sn, w.shortNames) {
				t.Errorf("short names %v, want %v", sn, w.shortNames)
			}
			hasStatus := slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == resource+"/status" })
			if hasStatus != w.status {
				t.Errorf("status subresource served: %v, want %v", hasStatus, w.status)
			}
		})
	}
}

// TestKubectlShortNames runs the kubectl a user has against the generated
// kubeconfig: short names resolve and printer columns render.
func TestKubectlShortNames(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl not installed")
	}
	out, err := exec.Command(kubectl, "--kubeconfig", shared.Kubeconfig, "get", "pp,cpp,op,cop,rb,crb,tnt", "-A").CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl get pp,cpp,op,cop,rb,crb,tnt: %v\n%s", err, out)
	}
	out, err = exec.Command(kubectl, "--kubeconfig", shared.Kubeconfig, "get", "clusters").CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl get clusters: %v\n%s", err, out)
	}
}
