package detector

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/test/framework"
)

const timeout = 30 * time.Second

// Builders.

func newNamespace(name string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

func selector(apiVersion, kind string) policyv1alpha1.ResourceSelector {
	return policyv1alpha1.ResourceSelector{APIVersion: apiVersion, Kind: kind}
}

func named(s policyv1alpha1.ResourceSelector, name string) policyv1alpha1.ResourceSelector {
	s.Name = name
	return s
}

func labelled(s policyv1alpha1.ResourceSelector, labels map[string]string) policyv1alpha1.ResourceSelector {
	s.LabelSelector = &metav1.LabelSelector{MatchLabels: labels}
	return s
}

func inNamespace(s policyv1alpha1.ResourceSelector, ns string) policyv1alpha1.ResourceSelector {
	s.Namespace = ns
	return s
}

func clusters(names ...string) policyv1alpha1.Placement {
	return policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: names}}
}

func newPP(ns, name string, priority int32, selectors ...policyv1alpha1.ResourceSelector) *policyv1alpha1.PropagationPolicy {
	return &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: policyv1alpha1.PropagationSpec{ResourceSelectors: selectors, Priority: &priority,
			Placement: clusters("member1")},
	}
}

func newCPP(name string, priority int32, selectors ...policyv1alpha1.ResourceSelector) *policyv1alpha1.ClusterPropagationPolicy {
	return &policyv1alpha1.ClusterPropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: policyv1alpha1.PropagationSpec{ResourceSelectors: selectors, Priority: &priority,
			Placement: clusters("member1")},
	}
}

func newConfigMap(ns, name string, labels map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Data:       map[string]string{"key": "value"},
	}
}

func newDeployment(ns, name string, replicas int32, labels map[string]string) *appsv1.Deployment {
	sel := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: sel},
				Spec: corev1.PodSpec{Containers: []corev1.Container{
					{Name: "nginx", Image: "nginx:1.27", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi"),
					}}},
					{Name: "sidecar", Image: "busybox", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceCPU: resource.MustParse("50m"),
					}}},
				}},
			},
		},
	}
}

// Helpers.

func create(t *testing.T, c client.Client, objs ...client.Object) {
	t.Helper()
	for _, obj := range objs {
		if err := c.Create(framework.Context(t, timeout), obj); err != nil {
			t.Fatalf("creating %T %s: %v", obj, client.ObjectKeyFromObject(obj), err)
		}
	}
}

func deleteObj(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	if err := c.Delete(framework.Context(t, timeout), obj); err != nil && !apierrors.IsNotFound(err) {
		t.Fatalf("deleting %T %s: %v", obj, client.ObjectKeyFromObject(obj), err)
	}
}

// cleanup deletes cluster-wide objects when the test ends, so they do not
// affect other tests.
func cleanup(t *testing.T, c client.Client, objs ...client.Object) {
	t.Cleanup(func() {
		for _, obj := range objs {
			if err := c.Delete(context.Background(), obj); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("deleting %T %s: %v", obj, client.ObjectKeyFromObject(obj), err)
			}
		}
	})
}

func update(t *testing.T, c client.Client, obj client.Object, change func()) {
	t.Helper()
	ctx := framework.Context(t, timeout)
	framework.Eventually(t, timeout, "updating "+client.ObjectKeyFromObject(obj).String(), func() (bool, string) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, err.Error()
		}
		change()
		if err := c.Update(ctx, obj); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
}

// waitPolicyID waits for the detector to label a policy with its permanent
// id and returns the id.
func waitPolicyID(t *testing.T, c client.Client, obj client.Object) string {
	t.Helper()
	label := policyv1alpha1.PropagationPolicyPermanentIDLabel
	if _, ok := obj.(*policyv1alpha1.ClusterPropagationPolicy); ok {
		label = policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel
	}
	var id string
	framework.Eventually(t, timeout, "permanent id on "+client.ObjectKeyFromObject(obj).String(), func() (bool, string) {
		if err := c.Get(framework.Context(t, timeout), client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, err.Error()
		}
		id = obj.GetLabels()[label]
		return id != "", fmt.Sprintf("labels %v", obj.GetLabels())
	})
	if _, err := uuid.Parse(id); err != nil {
		t.Errorf("permanent id %q of %s is not a UUID: %v", id, obj.GetName(), err)
	}
	return id
}

func getRB(t *testing.T, c client.Client, ns, name string) (*workv1alpha2.ResourceBinding, error) {
	rb := &workv1alpha2.ResourceBinding{}
	err := c.Get(framework.Context(t, timeout), types.NamespacedName{Namespace: ns, Name: name}, rb)
	return rb, err
}

// waitRB waits until the ResourceBinding exists and ok accepts it.
func waitRB(t *testing.T, c client.Client, ns, name string, ok func(*workv1alpha2.ResourceBinding) (bool, string)) *workv1alpha2.ResourceBinding {
	t.Helper()
	var rb *workv1alpha2.ResourceBinding
	framework.Eventually(t, timeout, "ResourceBinding "+ns+"/"+name, func() (bool, string) {
		var err error
		rb, err = getRB(t, c, ns, name)
		if err != nil {
			return false, err.Error()
		}
		if ok == nil {
			return true, ""
		}
		return ok(rb)
	})
	return rb
}

// waitClaimedBy waits until the ResourceBinding exists and is claimed by the
// policy with the given claim label and id.
func waitClaimedBy(t *testing.T, c client.Client, ns, name, label, id string) *workv1alpha2.ResourceBinding {
	t.Helper()
	return waitRB(t, c, ns, name, func(rb *workv1alpha2.ResourceBinding) (bool, string) {
		return rb.Labels[label] == id, fmt.Sprintf("labels %v", rb.Labels)
	})
}

// waitReleased waits until the binding is marked released and carries no
// policy claim any more (it is kept: release is not withdrawal).
func waitReleased(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	framework.Eventually(t, timeout, "binding "+obj.GetName()+" released", func() (bool, string) {
		if err := c.Get(framework.Context(t, timeout), client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, err.Error()
		}
		_, released := obj.GetAnnotations()[workv1alpha2.ReleasedAnnotation]
		claimed := obj.GetLabels()[policyv1alpha1.PropagationPolicyPermanentIDLabel] != "" ||
			obj.GetLabels()[policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel] != ""
		return released && !claimed, fmt.Sprintf("labels %v annotations %v", obj.GetLabels(), obj.GetAnnotations())
	})
}

func waitRBGone(t *testing.T, c client.Client, ns, name string) {
	t.Helper()
	framework.Eventually(t, timeout, "ResourceBinding "+ns+"/"+name+" to be deleted", func() (bool, string) {
		_, err := getRB(t, c, ns, name)
		return apierrors.IsNotFound(err), fmt.Sprintf("get: %v", err)
	})
}

// waitTemplateLabel waits until the template's label key has value want
// ("" means absent).
func waitTemplateLabel(t *testing.T, c client.Client, obj client.Object, key, want string) {
	t.Helper()
	framework.Eventually(t, timeout, fmt.Sprintf("label %s=%q on %s", key, want, obj.GetName()), func() (bool, string) {
		if err := c.Get(framework.Context(t, timeout), client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, err.Error()
		}
		return obj.GetLabels()[key] == want, fmt.Sprintf("labels %v", obj.GetLabels())
	})
}

// Tests.

func TestDeploymentSelectedByName(t *testing.T) {
	startDetector(t)
	c := cp.Client(t)
	ns := namespace(t, c)
	pp := newPP(ns, "nginx-pp", 0, named(selector("apps/v1", "Deployment"), "nginx"))
	pp.Spec.Placement = policyv1alpha1.Placement{
		ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member2"}},
		ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
			ReplicaSchedulingType:     policyv1alpha1.ReplicaSchedulingTypeDivided,
			ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
		},
	}
	pp.Spec.PropagateDeps = true
	pp.Spec.ConflictResolution = policyv1alpha1.ConflictOverwrite
	create(t, c, pp)
	ppID := waitPolicyID(t, c, pp)

	dep := newDeployment(ns, "nginx", 3, nil)
	create(t, c, dep)
	rb := waitClaimedBy(t, c, ns, "nginx-deployment", policyv1alpha1.PropagationPolicyPermanentIDLabel, ppID)

	if err := c.Get(framework.Context(t, timeout), client.ObjectKeyFromObject(dep), dep); err != nil {
		t.Fatal(err)
	}
	wantResource := workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: "nginx",
		UID: dep.UID, ResourceVersion: dep.ResourceVersion}
	if diff := cmp.Diff(wantResource, rb.Spec.Resource); diff != "" {
		t.Errorf("spec.resource (-want +got):\n%s", diff)
	}
	if rb.Spec.Replicas != 3 {
		t.Errorf("spec.replicas = %d, want 3", rb.Spec.Replicas)
	}
	wantRequest := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("150m"), corev1.ResourceMemory: resource.MustParse("128Mi")}
	if rb.Spec.ReplicaRequirements == nil {
		t.Errorf("spec.replicaRequirements is unset, want requests %v", wantRequest)
	} else if diff := cmp.Diff(wantRequest, rb.Spec.ReplicaRequirements.ResourceRequest, quantities); diff != "" {
		t.Errorf("spec.replicaRequirements.resourceRequest (-want +got):\n%s", diff)
	}
	if err := c.Get(framework.Context(t, timeout), client.ObjectKeyFromObject(pp), pp); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&pp.Spec.Placement, rb.Spec.Placement); diff != "" {
		t.Errorf("spec.placement (-policy +binding):\n%s", diff)
	}
	if !rb.Spec.PropagateDeps || rb.Spec.ConflictResolution != policyv1alpha1.ConflictOverwrite || rb.Spec.SchedulerName != "default-scheduler" {
		t.Errorf("propagateDeps %v, conflictResolution %q, schedulerName %q; want true, Overwrite, default-scheduler",
			rb.Spec.PropagateDeps, rb.Spec.ConflictResolution, rb.Spec.SchedulerName)
	}
	bindingID := rb.Labels[workv1alpha2.ResourceBindingPermanentIDLabel]
	if _, err := uuid.Parse(bindingID); err != nil {
		t.Errorf("binding permanent id %q: %v", bindingID, err)
	}
	wantOwner := []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "nginx", UID: dep.UID,
		Controller: new(true), BlockOwnerDeletion: new(false)}}
	if diff := cmp.Diff(wantOwner, rb.OwnerReferences); diff != "" {
		t.Errorf("ownerReferences (-want +got):\n%s", diff)
	}
	// The claim on the template.
	if dep.Labels[policyv1alpha1.PropagationPolicyPermanentIDLabel] != ppID ||
		dep.Annotations[policyv1alpha1.PropagationPolicyNamespaceAnnotation] != ns ||
		dep.Annotations[policyv1alpha1.PropagationPolicyNameAnnotation] != "nginx-pp" {
		t.Errorf("claim on the Deployment: labels %v, annotations %v", dep.Labels, dep.Annotations)
	}

	// A replica change reaches the binding, with the new resourceVersion.
	update(t, c, dep, func() { dep.Spec.Replicas = new(int32(5)) })
	rb = waitRB(t, c, ns, "nginx-deployment", func(rb *workv1alpha2.ResourceBinding) (bool, string) {
		return rb.Spec.Replicas == 5, fmt.Sprintf("replicas %d", rb.Spec.Replicas)
	})
	if rb.Spec.Resource.ResourceVersion != dep.ResourceVersion {
		t.Errorf("spec.resource.resourceVersion = %s, want the updated template's %s", rb.Spec.Resource.ResourceVersion, dep.ResourceVersion)
	}
	if got := rb.Labels[workv1alpha2.ResourceBindingPermanentIDLabel]; got != bindingID {
		t.Errorf("binding permanent id changed from %q to %q", bindingID, got)
	}

	// A status write to the template (what the executor does) is not a
	// template change: no binding write.
	waitIdle(t)
	before, rv := writes(t), rb.ResourceVersion
	status := dep.DeepCopy()
	status.Status.Replicas, status.Status.ReadyReplicas, status.Status.ObservedGeneration = 5, 5, dep.Generation
	if err := c.Status().Patch(framework.Context(t, timeout), status, client.MergeFrom(dep)); err != nil {
		t.Fatalf("writing Deployment status: %v", err)
	}
	time.Sleep(2 * time.Second)
	waitIdle(t)
	if after := writes(t); after != before {
		t.Errorf("a template status write caused %v detector writes", after-before)
	}
	if rb, _ := getRB(t, c, ns, "nginx-deployment"); rb.ResourceVersion != rv {
		t.Errorf("binding rewritten after a template status write: resourceVersion %s -> %s", rv, rb.ResourceVersion)
	}

	// Deleting the template deletes the binding.
	deleteObj(t, c, dep)
	waitRBGone(t, c, ns, "nginx-deployment")
}

var quantities = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })

func TestConfigMapSelectedByLabel(t *testing.T) {
	startDetector(t)
	c := cp.Client(t)
	ns := namespace(t, c)
	pp := newPP(ns, "web-pp", 0, labelled(selector("v1", "ConfigMap"), map[string]string{"app": "web"}))
	create(t, c, pp)
	ppID := waitPolicyID(t, c, pp)

	web := newConfigMap(ns, "web-config", map[string]string{"app": "web"})
	other := newConfigMap(ns, "other-config", map[string]string{"app": "db"})
	create(t, c, other, web)
	rb := waitClaimedBy(t, c, ns, "web-config-configmap", policyv1alpha1.PropagationPolicyPermanentIDLabel, ppID)
	if rb.Spec.Replicas != 0 || rb.Spec.ReplicaRequirements != nil {
		t.Errorf("ConfigMap binding has replicas %d, requirements %v; want none", rb.Spec.Replicas, rb.Spec.ReplicaRequirements)
	}
	if rb.Spec.Resource.Kind != "ConfigMap" || rb.Spec.Resource.APIVersion != "v1" || rb.Spec.Resource.UID == "" {
		t.Errorf("spec.resource = %+v", rb.Spec.Resource)
	}
	waitIdle(t)
	if _, err := getRB(t, c, ns, "other-config-configmap"); !apierrors.IsNotFound(err) {
		t.Errorf("ConfigMap without the label got a binding (err %v)", err)
	}
	if err := c.Get(framework.Context(t, timeout), client.ObjectKeyFromObject(other), other); err != nil {
		t.Fatal(err)
	}
	if id := other.Labels[policyv1alpha1.PropagationPolicyPermanentIDLabel]; id != "" {
		t.Errorf("ConfigMap without the label was claimed: %q", id)
	}

	// A binding deleted by hand comes back while the template is claimed.
	deleteObj(t, c, rb)
	waitRB(t, c, ns, "web-config-configmap", func(b *workv1alpha2.ResourceBinding) (bool, string) {
		return b.UID != rb.UID, "still the old binding"
	})

	// The template stops matching: the claim goes, the binding is released.
	update(t, c, web, func() { web.Labels["app"] = "api" })
	waitReleased(t, c, &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-config-configmap"}})
	waitTemplateLabel(t, c, web, policyv1alpha1.PropagationPolicyPermanentIDLabel, "")
	if _, ok := web.Annotations[policyv1alpha1.PropagationPolicyNameAnnotation]; ok {
		t.Errorf("claim annotations left on the template: %v", web.Annotations)
	}
}

func TestClusterRoleByClusterPolicy(t *testing.T) {
	startDetector(t)
	c := cp.Client(t)
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "det-e2e-reader"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}}},
	}
	cpp := newCPP("det-e2e-clusterrole", 0, named(selector("rbac.authorization.k8s.io/v1", "ClusterRole"), role.Name))
	cleanup(t, c, cpp, role)
	create(t, c, cpp)
	cppID := waitPolicyID(t, c, cpp)
	create(t, c, role)

	crb := &workv1alpha2.ClusterResourceBinding{}
	framework.Eventually(t, timeout, "ClusterResourceBinding", func() (bool, string) {
		err := c.Get(framework.Context(t, timeout), types.NamespacedName{Name: "det-e2e-reader-clusterrole"}, crb)
		if err != nil {
			return false, err.Error()
		}
		return crb.Labels[policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel] == cppID, fmt.Sprintf("labels %v", crb.Labels)
	})
	if crb.Spec.Resource.Kind != "ClusterRole" || crb.Spec.Resource.Namespace != "" || crb.Spec.Resource.Name != role.Name {
		t.Errorf("spec.resource = %+v", crb.Spec.Resource)
	}
	if _, err := uuid.Parse(crb.Labels[workv1alpha2.ClusterResourceBindingPermanentIDLabel]); err != nil {
		t.Errorf("clusterresourcebinding permanent id: %v (labels %v)", err, crb.Labels)
	}
	if crb.Annotations[policyv1alpha1.ClusterPropagationPolicyAnnotation] != cpp.Name {
		t.Errorf("binding annotations %v", crb.Annotations)
	}
	waitTemplateLabel(t, c, role, policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel, cppID)
	if role.Annotations[policyv1alpha1.ClusterPropagationPolicyAnnotation] != cpp.Name {
		t.Errorf("claim annotations on the ClusterRole: %v", role.Annotations)
	}

	// Deleting the policy releases the template and keeps the binding,
	// marked released; deleting the template then deletes the binding.
	deleteObj(t, c, cpp)
	waitReleased(t, c, crb)
	waitTemplateLabel(t, c, role, policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel, "")
	deleteObj(t, c, role)
	framework.Eventually(t, timeout, "ClusterResourceBinding deleted with its template", func() (bool, string) {
		err := c.Get(framework.Context(t, timeout), types.NamespacedName{Name: "det-e2e-reader-clusterrole"}, crb)
		return apierrors.IsNotFound(err), fmt.Sprintf("get: %v", err)
	})
}

func TestPropagationPolicyBeatsClusterPolicy(t *testing.T) {
	startDetector(t)
	c := cp.Client(t)
	ns := namespace(t, c)
	// The ClusterPropagationPolicy has the higher priority and the more
	// specific selector, and sorts first by name: the PropagationPolicy
	// still wins.
	cpp := newCPP("det-e2e-aaa", 100, inNamespace(named(selector("apps/v1", "Deployment"), "web"), ns))
	pp := newPP(ns, "zzz", 0, selector("apps/v1", "Deployment"))
	cleanup(t, c, cpp)
	create(t, c, cpp, pp)
	cppID, ppID := waitPolicyID(t, c, cpp), waitPolicyID(t, c, pp)
	dep := newDeployment(ns, "web", 1, nil)
	create(t, c, dep)
	rb := waitClaimedBy(t, c, ns, "web-deployment", policyv1alpha1.PropagationPolicyPermanentIDLabel, ppID)
	if id, ok := rb.Labels[policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel]; ok {
		t.Errorf("binding also carries the ClusterPropagationPolicy claim %q", id)
	}
	waitTemplateLabel(t, c, dep, policyv1alpha1.PropagationPolicyPermanentIDLabel, ppID)
	if _, ok := dep.Labels[policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel]; ok {
		t.Errorf("template carries a ClusterPropagationPolicy claim: %v", dep.Labels)
	}

	// The PropagationPolicy goes: the ClusterPropagationPolicy takes over.
	deleteObj(t, c, pp)
	waitClaimedBy(t, c, ns, "web-deployment", policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel, cppID)
	waitTemplateLabel(t, c, dep, policyv1alpha1.PropagationPolicyPermanentIDLabel, "")
	waitTemplateLabel(t, c, dep, policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel, cppID)
}

func TestNoPreemption(t *testing.T) {
	startDetector(t)
	c := cp.Client(t)
	ns := namespace(t, c)
	cpp := newCPP("det-e2e-nopreempt", 0, inNamespace(named(selector("v1", "ConfigMap"), "cfg"), ns))
	cleanup(t, c, cpp)
	create(t, c, cpp)
	cppID := waitPolicyID(t, c, cpp)
	create(t, c, newConfigMap(ns, "cfg", nil))
	waitClaimedBy(t, c, ns, "cfg-configmap", policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel, cppID)

	// A PropagationPolicy that would win for an unclaimed template does not
	// take a claimed one over.
	before := metricValue(t, "atoll_detector_reconciles_total", map[string]string{"kind": "template"})
	pp := newPP(ns, "late", 10, named(selector("v1", "ConfigMap"), "cfg"))
	create(t, c, pp)
	waitPolicyID(t, c, pp)
	framework.Eventually(t, timeout, "the template to be re-evaluated", func() (bool, string) {
		n := metricValue(t, "atoll_detector_reconciles_total", map[string]string{"kind": "template"})
		return n > before, fmt.Sprintf("template reconciles %v", n)
	})
	waitIdle(t)
	rb, err := getRB(t, c, ns, "cfg-configmap")
	if err != nil {
		t.Fatal(err)
	}
	if rb.Labels[policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel] != cppID || rb.Labels[policyv1alpha1.PropagationPolicyPermanentIDLabel] != "" {
		t.Errorf("claimed template was taken over: binding labels %v", rb.Labels)
	}
}

func TestExplicitPriority(t *testing.T) {
	startDetector(t)
	c := cp.Client(t)
	ns := namespace(t, c)
	api := map[string]string{"app": "api"}
	low := newPP(ns, "a-low", 1, named(selector("apps/v1", "Deployment"), "api"))
	high := newPP(ns, "z-high", 5, labelled(selector("apps/v1", "Deployment"), api))
	create(t, c, low, high)
	waitPolicyID(t, c, low)
	highID := waitPolicyID(t, c, high)
	create(t, c, newDeployment(ns, "api", 1, api))
	waitClaimedBy(t, c, ns, "api-deployment", policyv1alpha1.PropagationPolicyPermanentIDLabel, highID)
}

func TestImplicitPriority(t *testing.T) {
	startDetector(t)
	c := cp.Client(t)
	ns := namespace(t, c)
	tier := map[string]string{"tier": "x"}
	kind := newPP(ns, "a-kind", 0, selector("v1", "ConfigMap"))
	label := newPP(ns, "b-label", 0, labelled(selector("v1", "ConfigMap"), tier))
	name := newPP(ns, "c-name", 0, named(selector("v1", "ConfigMap"), "one"))
	create(t, c, kind, label, name)
	ids := map[string]string{}
	for _, p := range []*policyv1alpha1.PropagationPolicy{kind, label, name} {
		ids[p.Name] = waitPolicyID(t, c, p)
	}
	create(t, c, newConfigMap(ns, "one", tier), newConfigMap(ns, "two", tier), newConfigMap(ns, "three", nil))
	for cm, want := range map[string]string{"one": "c-name", "two": "b-label", "three": "a-kind"} {
		rb := waitClaimedBy(t, c, ns, cm+"-configmap", policyv1alpha1.PropagationPolicyPermanentIDLabel, ids[want])
		if got := rb.Annotations[policyv1alpha1.PropagationPolicyNameAnnotation]; got != want {
			t.Errorf("ConfigMap %s: binding names policy %q, want %q", cm, got, want)
		}
	}
}

func TestPolicyUpdate(t *testing.T) {
	startDetector(t)
	c := cp.Client(t)
	ns := namespace(t, c)
	pp := newPP(ns, "pp", 0, named(selector("v1", "ConfigMap"), "cfg"))
	create(t, c, pp)
	ppID := waitPolicyID(t, c, pp)
	create(t, c, newConfigMap(ns, "cfg", nil))
	rb := waitClaimedBy(t, c, ns, "cfg-configmap", policyv1alpha1.PropagationPolicyPermanentIDLabel, ppID)
	waitIdle(t)

	// A policy change that changes nothing in the binding re-evaluates the
	// template and writes nothing.
	before, reconciled := writes(t), metricValue(t, "atoll_detector_reconciles_total", map[string]string{"kind": "template"})
	update(t, c, pp, func() { pp.Spec.Priority = new(int32(3)) })
	framework.Eventually(t, timeout, "the template to be re-evaluated", func() (bool, string) {
		n := metricValue(t, "atoll_detector_reconciles_total", map[string]string{"kind": "template"})
		return n > reconciled, fmt.Sprintf("template reconciles %v", n)
	})
	waitIdle(t)
	if after := writes(t); after != before {
		t.Errorf("an irrelevant policy change caused %v writes", after-before)
	}
	if got, _ := getRB(t, c, ns, "cfg-configmap"); got.ResourceVersion != rb.ResourceVersion {
		t.Errorf("binding rewritten: resourceVersion %s -> %s", rb.ResourceVersion, got.ResourceVersion)
	}

	// A placement change reaches the binding.
	update(t, c, pp, func() { pp.Spec.Placement = clusters("member1", "member2") })
	waitRB(t, c, ns, "cfg-configmap", func(rb *workv1alpha2.ResourceBinding) (bool, string) {
		got := rb.Spec.Placement.ClusterAffinity.ClusterNames
		return cmp.Equal(got, []string{"member1", "member2"}), fmt.Sprintf("clusterNames %v", got)
	})
}

func TestLazyActivation(t *testing.T) {
	stop := startDetector(t)
	c := cp.Client(t)
	ns := namespace(t, c)
	pp := newPP(ns, "lazy", 0, named(selector("v1", "ConfigMap"), "cfg"))
	pp.Spec.ActivationPreference = policyv1alpha1.LazyActivation
	create(t, c, pp)
	ppID := waitPolicyID(t, c, pp)
	cm := newConfigMap(ns, "cfg", nil)
	create(t, c, cm)
	waitClaimedBy(t, c, ns, "cfg-configmap", policyv1alpha1.PropagationPolicyPermanentIDLabel, ppID)

	placementOf := func() []string {
		rb, err := getRB(t, c, ns, "cfg-configmap")
		if err != nil {
			t.Fatal(err)
		}
		return rb.Spec.Placement.ClusterAffinity.ClusterNames
	}
	update(t, c, pp, func() { pp.Spec.Placement = clusters("member2") })
	time.Sleep(2 * time.Second)
	waitIdle(t)
	if got := placementOf(); !cmp.Equal(got, []string{"member1"}) {
		t.Errorf("Lazy policy change reached the binding before the template changed: clusterNames %v", got)
	}
	// Nor does a restart apply it.
	stop()
	startDetector(t)
	waitIdle(t)
	if got := placementOf(); !cmp.Equal(got, []string{"member1"}) {
		t.Errorf("Lazy policy change applied by a restart: clusterNames %v", got)
	}

	// The template changes: now the policy change applies.
	update(t, c, cm, func() { cm.Data["key"] = "new" })
	waitRB(t, c, ns, "cfg-configmap", func(rb *workv1alpha2.ResourceBinding) (bool, string) {
		got := rb.Spec.Placement.ClusterAffinity.ClusterNames
		return cmp.Equal(got, []string{"member2"}), fmt.Sprintf("clusterNames %v", got)
	})
}

func TestPolicyDeleted(t *testing.T) {
	startDetector(t)
	c := cp.Client(t)
	ns := namespace(t, c)
	pp := newPP(ns, "pp", 0, selector("v1", "ConfigMap"))
	create(t, c, pp)
	ppID := waitPolicyID(t, c, pp)
	cm := newConfigMap(ns, "cfg", nil)
	create(t, c, cm)
	waitClaimedBy(t, c, ns, "cfg-configmap", policyv1alpha1.PropagationPolicyPermanentIDLabel, ppID)
	waitTemplateLabel(t, c, cm, policyv1alpha1.PropagationPolicyPermanentIDLabel, ppID)

	deleteObj(t, c, pp)
	waitReleased(t, c, &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cfg-configmap"}})
	waitTemplateLabel(t, c, cm, policyv1alpha1.PropagationPolicyPermanentIDLabel, "")
	for _, k := range []string{policyv1alpha1.PropagationPolicyNamespaceAnnotation, policyv1alpha1.PropagationPolicyNameAnnotation} {
		if _, ok := cm.Annotations[k]; ok {
			t.Errorf("annotation %s left on the template", k)
		}
	}
}

func TestCRDCreatedAfterStart(t *testing.T) {
	startDetector(t)
	c := cp.Client(t)
	ns := namespace(t, c)
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.det-e2e.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "det-e2e.example.com",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: new(true),
				}},
			}},
		},
	}
	cleanup(t, c, crd)
	scheme := c.Scheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	create(t, c, crd)
	pp := newPP(ns, "widgets", 0, named(selector("det-e2e.example.com/v1", "Widget"), "w1"))
	create(t, c, pp)
	ppID := waitPolicyID(t, c, pp)
	w := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "det-e2e.example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w1", "namespace": ns},
		"spec":     map[string]any{"size": int64(3)},
	}}
	framework.Eventually(t, timeout, "creating a Widget", func() (bool, string) {
		err := c.Create(framework.Context(t, timeout), w)
		return err == nil || apierrors.IsAlreadyExists(err), fmt.Sprintf("create: %v", err)
	})
	rb := waitClaimedBy(t, c, ns, "w1-widget", policyv1alpha1.PropagationPolicyPermanentIDLabel, ppID)
	if rb.Spec.Resource.APIVersion != "det-e2e.example.com/v1" || rb.Spec.Resource.Kind != "Widget" {
		t.Errorf("spec.resource = %+v", rb.Spec.Resource)
	}
}

func TestSkippedNamespace(t *testing.T) {
	startDetector(t)
	c := cp.Client(t)
	ns := namespace(t, c)
	sys := newPP("kube-system", "det-e2e-skip", 0, named(selector("v1", "ConfigMap"), "det-e2e-skip"))
	sentinel := newPP(ns, "sentinel", 0, named(selector("v1", "ConfigMap"), "det-e2e-skip"))
	skippedCM := newConfigMap("kube-system", "det-e2e-skip", nil)
	cleanup(t, c, sys, skippedCM)
	create(t, c, sys, sentinel)
	waitPolicyID(t, c, sys)
	sentinelID := waitPolicyID(t, c, sentinel)
	// The same template in a normal namespace, created after the skipped
	// one, is bound: by then the detector has seen the skipped one.
	create(t, c, skippedCM, newConfigMap(ns, "det-e2e-skip", nil))
	waitClaimedBy(t, c, ns, "det-e2e-skip-configmap", policyv1alpha1.PropagationPolicyPermanentIDLabel, sentinelID)
	waitIdle(t)
	if _, err := getRB(t, c, "kube-system", "det-e2e-skip-configmap"); !apierrors.IsNotFound(err) {
		t.Errorf("template in kube-system got a binding (err %v)", err)
	}
	if err := c.Get(framework.Context(t, timeout), client.ObjectKeyFromObject(skippedCM), skippedCM); err != nil {
		t.Fatal(err)
	}
	if len(skippedCM.Labels) != 0 || len(skippedCM.Annotations) != 0 {
		t.Errorf("template in kube-system was claimed: labels %v, annotations %v", skippedCM.Labels, skippedCM.Annotations)
	}
}

func TestRestartWritesNothing(t *testing.T) {
	stop := startDetector(t)
	c := cp.Client(t)
	ns := namespace(t, c)
	pp := newPP(ns, "pp", 0, selector("apps/v1", "Deployment"), selector("v1", "ConfigMap"))
	create(t, c, pp)
	ppID := waitPolicyID(t, c, pp)
	dep := newDeployment(ns, "app", 2, nil)
	create(t, c, dep, newConfigMap(ns, "cfg", nil))
	rbs := map[string]*workv1alpha2.ResourceBinding{
		"app-deployment": waitClaimedBy(t, c, ns, "app-deployment", policyv1alpha1.PropagationPolicyPermanentIDLabel, ppID),
		"cfg-configmap":  waitClaimedBy(t, c, ns, "cfg-configmap", policyv1alpha1.PropagationPolicyPermanentIDLabel, ppID),
	}
	stop()

	// While the detector is down the template's status changes (as the
	// executor writes it); that is no reason to write on start-up either.
	if err := c.Get(framework.Context(t, timeout), client.ObjectKeyFromObject(dep), dep); err != nil {
		t.Fatal(err)
	}
	status := dep.DeepCopy()
	status.Status.Replicas, status.Status.ObservedGeneration = 2, dep.Generation
	if err := c.Status().Patch(framework.Context(t, timeout), status, client.MergeFrom(dep)); err != nil {
		t.Fatalf("writing Deployment status: %v", err)
	}

	before := writes(t)
	reconciled := metricValue(t, "atoll_detector_reconciles_total", map[string]string{"kind": "template"})
	startDetector(t)
	waitIdle(t)
	if n := metricValue(t, "atoll_detector_reconciles_total", map[string]string{"kind": "template"}); n <= reconciled {
		t.Fatalf("the restarted detector reconciled no templates (%v)", n)
	}
	if after := writes(t); after != before {
		t.Errorf("restart with nothing changed caused %v writes", after-before)
	}
	for name, rb := range rbs {
		got, err := getRB(t, c, ns, name)
		if err != nil {
			t.Fatal(err)
		}
		if got.ResourceVersion != rb.ResourceVersion {
			t.Errorf("binding %s rewritten across restart: resourceVersion %s -> %s", name, rb.ResourceVersion, got.ResourceVersion)
		}
	}
}
