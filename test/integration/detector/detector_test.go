package detector

import (
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
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
	"github.com/atoll-dev/atoll/test/framework"
)

const timeout = 30 * time.Second

// Builders.

// newPolicy starts a policy ns/name (a ClusterPropagationPolicy with
// ClusterObj) of priority, placed on member1.
func newPolicy(ns, name string, priority int32) *utiltesting.PropagationPolicyWrapper {
	return utiltesting.MakePropagationPolicy(name, ns).Priority(priority).ClusterNames("member1")
}

func newConfigMap(ns, name string, labels map[string]string) *corev1.ConfigMap {
	return utiltesting.MakeConfigMap(name, ns).Labels(labels).Data("key", "value").Obj()
}

// newDeployment is a Deployment labelled labels whose pods run nginx
// (100m CPU, 128Mi) and a sidecar (50m CPU).
func newDeployment(ns, name string, replicas int32, labels map[string]string) *appsv1.Deployment {
	d := utiltesting.MakeDeployment(name, ns).Replicas(replicas).
		Container("nginx", "nginx:1.27").Request(corev1.ResourceCPU, "100m").Request(corev1.ResourceMemory, "128Mi").
		AddContainer("sidecar", "busybox").Request(corev1.ResourceCPU, "50m").Obj()
	d.Labels = labels
	return d
}

// Helpers.

func deleteObj(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	if err := c.Delete(framework.Context(t, timeout), obj); err != nil && !apierrors.IsNotFound(err) {
		t.Fatalf("deleting %T %s: %v", obj, client.ObjectKeyFromObject(obj), err)
	}
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
	return framework.GetBinding(framework.Context(t, timeout), c, ns, name)
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
	pp := newPolicy(ns, "nginx-pp", 0).Select("apps/v1", "Deployment", "nginx").Obj()
	pp.Spec.Placement = *utiltesting.MakePlacement().ClusterNames("member1", "member2").
		Divided(policyv1alpha1.ReplicaDivisionPreferenceWeighted).Obj()
	pp.Spec.PropagateDeps = true
	pp.Spec.ConflictResolution = policyv1alpha1.ConflictOverwrite
	framework.Create(t, c, pp)
	ppID := waitPolicyID(t, c, pp)

	dep := newDeployment(ns, "nginx", 3, nil)
	framework.Create(t, c, dep)
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
	framework.Update(t, c, dep, func(dep *appsv1.Deployment) { dep.Spec.Replicas = new(int32(5)) })
	rb = waitRB(t, c, ns, "nginx-deployment", func(rb *workv1alpha2.ResourceBinding) (bool, string) {
		return rb.Spec.Replicas == 5, fmt.Sprintf("replicas %d", rb.Spec.Replicas)
	})
	if rb.Spec.Resource.ResourceVersion != dep.ResourceVersion {
		t.Errorf("spec.resource.resourceVersion = %s, want the updated template's %s", rb.Spec.Resource.ResourceVersion, dep.ResourceVersion)
	}
	if got := rb.Labels[workv1alpha2.ResourceBindingPermanentIDLabel]; got != bindingID {
		t.Errorf("binding permanent id changed from %q to %q", bindingID, got)
	}

	// The detector reads a changed template at the version its informer
	// saw, which the API server answers from its watch cache: a rollout
	// of many templates does not become as many quorum reads from etcd.
	etcdGets := func() float64 {
		return framework.ScrapeAPIServerMetrics(t, cp.RESTConfig(t)).Sum("etcd_requests_total",
			`operation="get"`, `group="apps"`, `resource="deployments"`)
	}
	gets := etcdGets()
	const changes = 3
	for i := range changes {
		replicas := int32(6 + i)
		changed := dep.DeepCopy()
		changed.Spec.Replicas = &replicas
		if err := c.Patch(framework.Context(t, timeout), changed, client.MergeFrom(dep)); err != nil {
			t.Fatalf("changing the template: %v", err)
		}
		dep = changed
		rb = waitRB(t, c, ns, "nginx-deployment", func(rb *workv1alpha2.ResourceBinding) (bool, string) {
			return rb.Spec.Replicas == replicas, fmt.Sprintf("replicas %d", rb.Spec.Replicas)
		})
	}
	got := etcdGets() - gets
	if got >= changes {
		t.Errorf("%v reads of Deployments from etcd for %d template changes: the detector's reads of the changed template were not served from the watch cache", got, changes)
	}
	t.Logf("%v reads of Deployments from etcd for %d template changes", got, changes)

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
	pp := newPolicy(ns, "web-pp", 0).SelectLabels("v1", "ConfigMap", map[string]string{"app": "web"}).Obj()
	framework.Create(t, c, pp)
	ppID := waitPolicyID(t, c, pp)

	web := newConfigMap(ns, "web-config", map[string]string{"app": "web"})
	other := newConfigMap(ns, "other-config", map[string]string{"app": "db"})
	framework.Create(t, c, other, web)
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
	framework.Update(t, c, web, func(web *corev1.ConfigMap) { web.Labels["app"] = "api" })
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
	cpp := newPolicy("", "det-e2e-clusterrole", 0).Select("rbac.authorization.k8s.io/v1", "ClusterRole", role.Name).ClusterObj()
	framework.DeleteOnCleanup(t, c, cpp, role)
	framework.Create(t, c, cpp)
	cppID := waitPolicyID(t, c, cpp)
	framework.Create(t, c, role)

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
	cpp := newPolicy("", "det-e2e-aaa", 100).
		Selector(policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: "web"}).ClusterObj()
	pp := newPolicy(ns, "zzz", 0).Select("apps/v1", "Deployment", "").Obj()
	framework.DeleteOnCleanup(t, c, cpp)
	framework.Create(t, c, cpp, pp)
	cppID, ppID := waitPolicyID(t, c, cpp), waitPolicyID(t, c, pp)
	dep := newDeployment(ns, "web", 1, nil)
	framework.Create(t, c, dep)
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
	cpp := newPolicy("", "det-e2e-nopreempt", 0).
		Selector(policyv1alpha1.ResourceSelector{APIVersion: "v1", Kind: "ConfigMap", Namespace: ns, Name: "cfg"}).ClusterObj()
	framework.DeleteOnCleanup(t, c, cpp)
	framework.Create(t, c, cpp)
	cppID := waitPolicyID(t, c, cpp)
	framework.Create(t, c, newConfigMap(ns, "cfg", nil))
	waitClaimedBy(t, c, ns, "cfg-configmap", policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel, cppID)

	// A PropagationPolicy that would win for an unclaimed template does not
	// take a claimed one over.
	before := framework.MetricValue(t, "atoll_detector_reconciles_total", map[string]string{"kind": "template"})
	pp := newPolicy(ns, "late", 10).Select("v1", "ConfigMap", "cfg").Obj()
	framework.Create(t, c, pp)
	waitPolicyID(t, c, pp)
	framework.Eventually(t, timeout, "the template to be re-evaluated", func() (bool, string) {
		n := framework.MetricValue(t, "atoll_detector_reconciles_total", map[string]string{"kind": "template"})
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
	low := newPolicy(ns, "a-low", 1).Select("apps/v1", "Deployment", "api").Obj()
	high := newPolicy(ns, "z-high", 5).SelectLabels("apps/v1", "Deployment", api).Obj()
	framework.Create(t, c, low, high)
	waitPolicyID(t, c, low)
	highID := waitPolicyID(t, c, high)
	framework.Create(t, c, newDeployment(ns, "api", 1, api))
	waitClaimedBy(t, c, ns, "api-deployment", policyv1alpha1.PropagationPolicyPermanentIDLabel, highID)
}

func TestImplicitPriority(t *testing.T) {
	startDetector(t)
	c := cp.Client(t)
	ns := namespace(t, c)
	tier := map[string]string{"tier": "x"}
	kind := newPolicy(ns, "a-kind", 0).Select("v1", "ConfigMap", "").Obj()
	label := newPolicy(ns, "b-label", 0).SelectLabels("v1", "ConfigMap", tier).Obj()
	name := newPolicy(ns, "c-name", 0).Select("v1", "ConfigMap", "one").Obj()
	framework.Create(t, c, kind, label, name)
	ids := map[string]string{}
	for _, p := range []*policyv1alpha1.PropagationPolicy{kind, label, name} {
		ids[p.Name] = waitPolicyID(t, c, p)
	}
	framework.Create(t, c, newConfigMap(ns, "one", tier), newConfigMap(ns, "two", tier), newConfigMap(ns, "three", nil))
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
	pp := newPolicy(ns, "pp", 0).Select("v1", "ConfigMap", "cfg").Obj()
	framework.Create(t, c, pp)
	ppID := waitPolicyID(t, c, pp)
	framework.Create(t, c, newConfigMap(ns, "cfg", nil))
	rb := waitClaimedBy(t, c, ns, "cfg-configmap", policyv1alpha1.PropagationPolicyPermanentIDLabel, ppID)
	waitIdle(t)

	// A policy change that changes nothing in the binding re-evaluates the
	// template and writes nothing.
	before, reconciled := writes(t), framework.MetricValue(t, "atoll_detector_reconciles_total", map[string]string{"kind": "template"})
	framework.Update(t, c, pp, func(pp *policyv1alpha1.PropagationPolicy) { pp.Spec.Priority = new(int32(3)) })
	framework.Eventually(t, timeout, "the template to be re-evaluated", func() (bool, string) {
		n := framework.MetricValue(t, "atoll_detector_reconciles_total", map[string]string{"kind": "template"})
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
	framework.Update(t, c, pp, func(pp *policyv1alpha1.PropagationPolicy) {
		pp.Spec.Placement = *utiltesting.MakePlacement().ClusterNames("member1", "member2").Obj()
	})
	waitRB(t, c, ns, "cfg-configmap", func(rb *workv1alpha2.ResourceBinding) (bool, string) {
		got := rb.Spec.Placement.ClusterAffinity.ClusterNames
		return cmp.Equal(got, []string{"member1", "member2"}), fmt.Sprintf("clusterNames %v", got)
	})
}

func TestLazyActivation(t *testing.T) {
	stop := startDetector(t)
	c := cp.Client(t)
	ns := namespace(t, c)
	pp := newPolicy(ns, "lazy", 0).Select("v1", "ConfigMap", "cfg").Obj()
	pp.Spec.ActivationPreference = policyv1alpha1.LazyActivation
	framework.Create(t, c, pp)
	ppID := waitPolicyID(t, c, pp)
	cm := newConfigMap(ns, "cfg", nil)
	framework.Create(t, c, cm)
	waitClaimedBy(t, c, ns, "cfg-configmap", policyv1alpha1.PropagationPolicyPermanentIDLabel, ppID)

	placementOf := func() []string {
		rb, err := getRB(t, c, ns, "cfg-configmap")
		if err != nil {
			t.Fatal(err)
		}
		return rb.Spec.Placement.ClusterAffinity.ClusterNames
	}
	framework.Update(t, c, pp, func(pp *policyv1alpha1.PropagationPolicy) {
		pp.Spec.Placement = *utiltesting.MakePlacement().ClusterNames("member2").Obj()
	})
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
	framework.Update(t, c, cm, func(cm *corev1.ConfigMap) { cm.Data["key"] = "new" })
	waitRB(t, c, ns, "cfg-configmap", func(rb *workv1alpha2.ResourceBinding) (bool, string) {
		got := rb.Spec.Placement.ClusterAffinity.ClusterNames
		return cmp.Equal(got, []string{"member2"}), fmt.Sprintf("clusterNames %v", got)
	})
}

// TestLazyPolicyCreatedAfterTemplate: Karmada's "policy created after
// resource" with a Lazy policy. The existing template is not claimed when
// the policy appears, only when the template next changes.
func TestLazyPolicyCreatedAfterTemplate(t *testing.T) {
	startDetector(t)
	c := cp.Client(t)
	ns := namespace(t, c)
	cm := newConfigMap(ns, "cfg", nil)
	framework.Create(t, c, cm)
	pp := newPolicy(ns, "lazy-after", 0).Select("v1", "ConfigMap", "cfg").Obj()
	pp.Spec.ActivationPreference = policyv1alpha1.LazyActivation
	framework.Create(t, c, pp)
	ppID := waitPolicyID(t, c, pp)
	time.Sleep(2 * time.Second)
	waitIdle(t)
	if rb, err := getRB(t, c, ns, "cfg-configmap"); err == nil {
		t.Fatalf("Lazy policy claimed a template that did not change: binding labels %v", rb.Labels)
	} else if !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	framework.Update(t, c, cm, func(cm *corev1.ConfigMap) { cm.Data = map[string]string{"key": "new"} })
	waitClaimedBy(t, c, ns, "cfg-configmap", policyv1alpha1.PropagationPolicyPermanentIDLabel, ppID)
}

func TestPolicyDeleted(t *testing.T) {
	startDetector(t)
	c := cp.Client(t)
	ns := namespace(t, c)
	pp := newPolicy(ns, "pp", 0).Select("v1", "ConfigMap", "").Obj()
	framework.Create(t, c, pp)
	ppID := waitPolicyID(t, c, pp)
	cm := newConfigMap(ns, "cfg", nil)
	framework.Create(t, c, cm)
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
	framework.DeleteOnCleanup(t, c, crd)
	scheme := c.Scheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	framework.Create(t, c, crd)
	pp := newPolicy(ns, "widgets", 0).Select("det-e2e.example.com/v1", "Widget", "w1").Obj()
	framework.Create(t, c, pp)
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
	sys := newPolicy("kube-system", "det-e2e-skip", 0).Select("v1", "ConfigMap", "det-e2e-skip").Obj()
	sentinel := newPolicy(ns, "sentinel", 0).Select("v1", "ConfigMap", "det-e2e-skip").Obj()
	skippedCM := newConfigMap("kube-system", "det-e2e-skip", nil)
	framework.DeleteOnCleanup(t, c, sys, skippedCM)
	framework.Create(t, c, sys, sentinel)
	waitPolicyID(t, c, sys)
	sentinelID := waitPolicyID(t, c, sentinel)
	// The same template in a normal namespace, created after the skipped
	// one, is bound: by then the detector has seen the skipped one.
	framework.Create(t, c, skippedCM, newConfigMap(ns, "det-e2e-skip", nil))
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
	pp := newPolicy(ns, "pp", 0).Select("apps/v1", "Deployment", "").Select("v1", "ConfigMap", "").Obj()
	framework.Create(t, c, pp)
	ppID := waitPolicyID(t, c, pp)
	dep := newDeployment(ns, "app", 2, nil)
	framework.Create(t, c, dep, newConfigMap(ns, "cfg", nil))
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
	reconciled := framework.MetricValue(t, "atoll_detector_reconciles_total", map[string]string{"kind": "template"})
	startDetector(t)
	waitIdle(t)
	if n := framework.MetricValue(t, "atoll_detector_reconciles_total", map[string]string{"kind": "template"}); n <= reconciled {
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
