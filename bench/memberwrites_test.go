package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	corev1 "k8s.io/api/core/v1"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/sim/simdir"
	"github.com/atoll-dev/atoll/test/framework"
)

// BenchmarkMemberWrites measures what one new Deployment costs a member's
// API server (etcd and kube-apiserver, an api-only member), by the way it
// is written: created from a typed client (protobuf, as W1's direct
// baseline does), created from JSON, and server-side applied (JSON body
// sent as application/apply-patch+yaml, force) with the server's default
// field validation, Warn, as atoll's executor did before decision 49 of
// design 0013, and with fieldValidation=Ignore, as it does now. Each way writes 1,000 Deployments into a
// namespace of its own from 16 clients, in four rounds (every second one
// in reverse order); the member process's CPU-milliseconds per object are
// reported, the mean of the rounds. The applied body is what the executor sends: a
// Deployment as the control plane's API server defaulted it, without
// server-set fields, with atoll's labels and annotations.
//
// Run: make build && ATOLL_BIN=$PWD/bin/atoll go test -run '^$' -bench MemberWrites -benchtime 1x -timeout 20m ./bench/ -v
func BenchmarkMemberWrites(b *testing.B) {
	for range b.N {
		runMemberWrites(b)
	}
}

const (
	memberWritesObjects = 1000
	memberWritesRounds  = 4
)

func runMemberWrites(b *testing.B) {
	cp := framework.StartControlPlane(b, framework.Options{Members: 1, Args: []string{"--member-args=--api-only"}})
	ctx := framework.Context(b, 15*time.Minute)
	member := propMembers[0]
	cfg := rest.CopyConfig(cp.MemberConfig(b, member))
	cfg.QPS, cfg.Burst = benchQPS, benchBurst
	typed := kubernetes.NewForConfigOrDie(cfg)
	dyn := dynamic.NewForConfigOrDie(cfg)
	var st simdir.MemberStatus
	if _, err := simdir.ReadJSON(simdir.StatusFile(cp.DataDir, member), &st); err != nil || st.PID == 0 {
		b.Fatalf("member %s's process: %v (pid %d)", member, err, st.PID)
	}
	body := appliedBody(ctx, b, typed, dyn)
	deployments := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

	ways := []struct {
		name  string
		write func(cs kubernetes.Interface, ns, name string) error
	}{
		{"create-protobuf", func(cs kubernetes.Interface, ns, name string) error {
			_, err := cs.AppsV1().Deployments(ns).Create(ctx, benchDeployment(ns, name, 1), metav1.CreateOptions{})
			return err
		}},
		{"create-json", func(_ kubernetes.Interface, ns, name string) error {
			_, err := dyn.Resource(deployments).Namespace(ns).Create(ctx, named(body, ns, name), metav1.CreateOptions{})
			return err
		}},
		{"apply-validation-warn", func(_ kubernetes.Interface, ns, name string) error {
			_, err := dyn.Resource(deployments).Namespace(ns).Apply(ctx, name, named(body, ns, name),
				metav1.ApplyOptions{FieldManager: "atoll", Force: true})
			return err
		}},
		{"apply-validation-ignore", func(_ kubernetes.Interface, ns, name string) error {
			data, err := json.Marshal(named(body, ns, name).Object)
			if err != nil {
				return err
			}
			_, err = dyn.Resource(deployments).Namespace(ns).Patch(ctx, name, types.ApplyPatchType, data,
				metav1.PatchOptions{FieldManager: "atoll", Force: ptr.To(true), FieldValidation: metav1.FieldValidationIgnore})
			return err
		}},
	}
	// Rounds alternate the order, so that no way is always first or last
	// on a member that grows as the run goes.
	perObject := map[string][]float64{}
	for round := 1; round <= memberWritesRounds; round++ {
		for i := range ways {
			way := ways[i]
			if round%2 == 0 {
				way = ways[len(ways)-1-i]
			}
			ns := fmt.Sprintf("writes-%s-%d", way.name, round)
			perObject[way.name] = append(perObject[way.name], measureWrites(ctx, b, cfg, typed, st.PID, ns, way.name, way.write))
		}
	}
	for name, ms := range perObject {
		sum := 0.0
		for _, v := range ms {
			sum += v
		}
		b.ReportMetric(sum/float64(len(ms)), name+"-member-cpu-ms/object")
	}
}

// measureWrites writes memberWritesObjects Deployments into namespace ns
// with write, from propClients clients, and returns the member process's
// CPU-milliseconds per object.
func measureWrites(ctx context.Context, b *testing.B, cfg *rest.Config, typed kubernetes.Interface, pid int, ns, name string,
	write func(cs kubernetes.Interface, ns, name string) error) float64 {
	if _, err := typed.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	before, err := processSeconds(pid)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	createInParallel(ctx, b, cfg, memberWritesObjects, func(cs kubernetes.Interface, i int) error {
		return write(cs, ns, templateName(i))
	})
	elapsed := time.Since(start)
	after, err := processSeconds(pid)
	if err != nil {
		b.Fatal(err)
	}
	ms := 1000 * (after - before) / memberWritesObjects
	b.Logf("%-24s %d Deployments in %v (%.0f/s); member CPU %.2f ms per object", name, memberWritesObjects,
		elapsed.Round(time.Millisecond), memberWritesObjects/elapsed.Seconds(), ms)
	// Let the member's own after-work (compaction, watch fan-out) end
	// before the next way starts counting.
	time.Sleep(5 * time.Second)
	return ms
}

// appliedBody is the manifest the executor would apply: the benchmark's
// Deployment as an API server defaults it, without the fields the server
// sets, with atoll's ownership labels and annotations.
func appliedBody(ctx context.Context, b *testing.B, typed kubernetes.Interface, dyn dynamic.Interface) *unstructured.Unstructured {
	const ns, name = "writes-template", "template"
	if _, err := typed.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	if _, err := typed.AppsV1().Deployments(ns).Create(ctx, benchDeployment(ns, name, 1), metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	obj, err := dyn.Resource(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		b.Fatal(err)
	}
	for _, f := range []string{"uid", "resourceVersion", "generation", "creationTimestamp", "managedFields", "annotations"} {
		unstructured.RemoveNestedField(obj.Object, "metadata", f)
	}
	unstructured.RemoveNestedField(obj.Object, "status")
	// What ownerMetadata and the detector's claim put on a namespaced
	// binding's copy, and the manifest hash.
	labels := obj.GetLabels()
	labels[workv1alpha2.ManagedLabel] = "true"
	labels[workv1alpha2.ResourceBindingPermanentIDLabel] = "0b8f2b6e-5c1a-4d2e-9f3a-1c2d3e4f5a6b"
	labels[policyv1alpha1.PropagationPolicyPermanentIDLabel] = "9a8b7c6d-5e4f-3a2b-1c0d-e9f8a7b6c5d4"
	obj.SetLabels(labels)
	obj.SetAnnotations(map[string]string{
		workv1alpha2.ResourceBindingNamespaceAnnotation:     "bench",
		workv1alpha2.ResourceBindingNameAnnotation:          "template-deployment",
		policyv1alpha1.PropagationPolicyNamespaceAnnotation: "bench",
		policyv1alpha1.PropagationPolicyNameAnnotation:      "bench",
		workv1alpha2.ManifestHashAnnotation:                 "0123456789abcdef01234567",
	})
	return obj
}

// named is a copy of body with ns and name.
func named(body *unstructured.Unstructured, ns, name string) *unstructured.Unstructured {
	obj := body.DeepCopy()
	obj.SetNamespace(ns)
	obj.SetName(name)
	return obj
}
