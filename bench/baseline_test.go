package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/atoll-dev/atoll/apis/apps/v1alpha1"
	"github.com/atoll-dev/atoll/test/framework"
)

// Shape of BenchmarkBaselineJoin: 6 levels of 5 components, each
// component of a level depending on two of the level above.
const (
	cblLevels = 6
	cblWidth  = 5
)

// BenchmarkBaselineJoin delivers a 30-component baseline (dependency depth
// 6: a CRD level, then levels of Deployments and ConfigMaps) to two
// members, then joins a third and measures its time to baseline. One
// iteration is the whole scenario.
//
// Reported:
//   - time-to-baseline-s: atoll join → every component ready on the new
//     member (the baseline's status, polled every 100ms);
//   - critical-path-s: the longest dependency chain of the components' own
//     start times on the new member (creation → Established / Available,
//     from the member's own timestamps, whole seconds; 0 for ConfigMaps);
//   - overhead-per-level-s: (time-to-baseline − critical-path) ÷ depth,
//     the federation's cost per dependency level (target ≤ 2 s);
//   - idle-cpu-ms/s: the control-plane process's CPU while the baseline is
//     ready everywhere and nothing changes, over 30 s.
func BenchmarkBaselineJoin(b *testing.B) {
	for b.Loop() {
		runBaselineJoin(b)
	}
}

func runBaselineJoin(b *testing.B) {
	cp := framework.StartControlPlane(b, framework.Options{Members: 3, Args: []string{"--join-members=false"}})
	join := func(m string) {
		cp.Atoll(b, "join", m, "--cluster-kubeconfig", filepath.Join(cp.DataDir, "members", m, "proxy-kubeconfig"),
			"--labels", "tier=production", "--kubeconfig", cp.Kubeconfig)
	}
	join("member1")
	join("member2")
	manifest, deps := cblManifest()
	framework.Eventually(b, time.Minute, "baseline applied", func() (bool, string) {
		out, err := cp.Kubectl(b, manifest, "apply", "-f", "-")
		return err == nil, out
	})
	c := cp.Client(b)
	ctx := context.Background()
	get := func() *appsv1alpha1.ClusterBaseline {
		var cb appsv1alpha1.ClusterBaseline
		if err := c.Get(ctx, client.ObjectKey{Name: "bench"}, &cb); err != nil {
			b.Fatal(err)
		}
		return &cb
	}
	readyOn := func(cb *appsv1alpha1.ClusterBaseline, m string) bool {
		for _, cs := range cb.Status.Clusters {
			if cs.Name == m {
				return cs.BaselineReadyTime != nil
			}
		}
		return false
	}
	framework.Eventually(b, 5*time.Minute, "baseline ready on member1 and member2", func() (bool, string) {
		cb := get()
		return readyOn(cb, "member1") && readyOn(cb, "member2"), cb.Status.ReadyClusters
	})

	start := time.Now()
	join("member3")
	for !readyOn(get(), "member3") {
		if time.Since(start) > 10*time.Minute {
			b.Fatal("member3's baseline not ready after 10m")
		}
		time.Sleep(100 * time.Millisecond)
	}
	ttb := time.Since(start)
	critical := cblCriticalPath(b, cp, deps)
	b.ReportMetric(ttb.Seconds(), "time-to-baseline-s")
	b.ReportMetric(critical.Seconds(), "critical-path-s")
	b.ReportMetric((ttb-critical).Seconds()/cblLevels, "overhead-per-level-s")

	time.Sleep(10 * time.Second) // let the last status writes settle
	cpu := func() float64 {
		s, err := processSeconds(cp.ControlPlanePID())
		if err != nil {
			b.Fatal(err)
		}
		return s
	}
	before := cpu()
	time.Sleep(30 * time.Second)
	b.ReportMetric((cpu()-before)*1000/30, "idle-cpu-ms/s")
}

// cblManifest is the baseline and its templates, and each component's
// dependsOn.
func cblManifest() (string, map[string][]string) {
	var docs, comps []string
	deps := map[string][]string{}
	name := func(level, i int) string { return fmt.Sprintf("l%d-c%d", level, i) }
	for level := range cblLevels {
		for i := range cblWidth {
			n := name(level, i)
			var sel string
			switch {
			case level == 0:
				docs = append(docs, fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: %ss.bench.example.com}
spec:
  group: bench.example.com
  names: {kind: K%s, plural: %ss}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]`,
					strings.ReplaceAll(n, "-", ""), strings.ReplaceAll(n, "-", ""), strings.ReplaceAll(n, "-", "")))
				sel = fmt.Sprintf("{apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, name: %ss.bench.example.com}", strings.ReplaceAll(n, "-", ""))
			case i%2 == 0:
				docs = append(docs, fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %s, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: %s}}
  template:
    metadata: {labels: {app: %s}}
    spec: {containers: [{name: c, image: example.com/%s:v1, resources: {requests: {cpu: 10m}}}]}`, n, n, n, n))
				sel = fmt.Sprintf("{apiVersion: apps/v1, kind: Deployment, namespace: default, name: %s}", n)
			default:
				docs = append(docs, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: default}\ndata: {level: %q}", n, strconv.Itoa(level)))
				sel = fmt.Sprintf("{apiVersion: v1, kind: ConfigMap, namespace: default, name: %s}", n)
			}
			comp := fmt.Sprintf("  - name: %s\n    resourceSelectors: [%s]", n, sel)
			if level > 0 {
				deps[n] = []string{name(level-1, i), name(level-1, (i+1)%cblWidth)}
				comp += fmt.Sprintf("\n    dependsOn: [%s]", strings.Join(deps[n], ", "))
			}
			comps = append(comps, comp)
		}
	}
	docs = append(docs, "apiVersion: apps.atoll.dev/v1alpha1\nkind: ClusterBaseline\nmetadata: {name: bench}\nspec:\n  components:\n"+strings.Join(comps, "\n"))
	return strings.Join(docs, "\n---\n"), deps
}

// cblCriticalPath is the longest dependency chain of the components' own
// start times on member3 (creation → ready, from member timestamps).
func cblCriticalPath(b *testing.B, cp *framework.ControlPlane, deps map[string][]string) time.Duration {
	dc := cp.MemberDynamic(b, "member3")
	var err error
	ctx := context.Background()
	own := map[string]time.Duration{}
	for level := range cblLevels {
		for i := range cblWidth {
			n := fmt.Sprintf("l%d-c%d", level, i)
			var u *unstructured.Unstructured
			var cond string
			switch {
			case level == 0:
				u, err = dc.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}).
					Get(ctx, strings.ReplaceAll(n, "-", "")+"s.bench.example.com", metav1.GetOptions{})
				cond = "Established"
			case i%2 == 0:
				u, err = dc.Resource(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}).Namespace("default").Get(ctx, n, metav1.GetOptions{})
				cond = "Available"
			default:
				continue // a ConfigMap is ready when it exists
			}
			if err != nil {
				b.Fatalf("member3: %s: %v", n, err)
			}
			conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
			for _, c := range conds {
				m := c.(map[string]any)
				if m["type"] == cond && m["status"] == "True" {
					at, _ := time.Parse(time.RFC3339, m["lastTransitionTime"].(string))
					own[n] = at.Sub(u.GetCreationTimestamp().Time)
				}
			}
		}
	}
	path := map[string]time.Duration{}
	var longest time.Duration
	for level := range cblLevels {
		for i := range cblWidth {
			n := fmt.Sprintf("l%d-c%d", level, i)
			var before time.Duration
			for _, d := range deps[n] {
				before = max(before, path[d])
			}
			path[n] = before + own[n]
			longest = max(longest, path[n])
		}
	}
	return longest
}
