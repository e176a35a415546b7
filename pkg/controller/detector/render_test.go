package detector

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
)

func TestRenderBinding(t *testing.T) {
	placement := policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m1", "m2"}}}
	preserve := true
	dispatching := true
	scheduling := true
	policy := &Policy{Namespace: "ns", Name: "pp", PermanentID: "pp-id", Spec: &policyv1alpha1.PropagationSpec{
		PropagateDeps:               true,
		Placement:                   placement,
		SchedulerName:               "default-scheduler",
		ConflictResolution:          policyv1alpha1.ConflictOverwrite,
		Failover:                    &policyv1alpha1.FailoverBehavior{Cluster: &policyv1alpha1.ClusterFailoverBehavior{PurgeMode: "Directly"}},
		Suspension:                  &policyv1alpha1.Suspension{Dispatching: &dispatching},
		PreserveResourcesOnDeletion: &preserve,
	}}
	clusterPolicy := &Policy{Cluster: true, Name: "cpp", PermanentID: "cpp-id", Spec: &policyv1alpha1.PropagationSpec{SchedulerName: "default-scheduler"}}
	ref := workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "ns", Name: "nginx", UID: "uid-1", ResourceVersion: "42"}
	req := &workv1alpha2.ReplicaRequirements{ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("300m")}}
	owner := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "nginx", UID: "uid-1", Controller: &preserve, BlockOwnerDeletion: new(false)}
	newID := func() string { return "new-id" }

	cases := map[string]struct {
		meta     metav1.ObjectMeta
		spec     workv1alpha2.ResourceBindingSpec
		in       bindingInput
		wantMeta metav1.ObjectMeta
		wantSpec workv1alpha2.ResourceBindingSpec
	}{
		"new binding": {
			in: bindingInput{Resource: ref, Fingerprint: "fp", Workload: workload{Replicas: 3, Requirements: req}, Policy: policy},
			wantMeta: metav1.ObjectMeta{
				Labels: map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: "new-id", policyv1alpha1.PropagationPolicyPermanentIDLabel: "pp-id"},
				Annotations: map[string]string{policyv1alpha1.PropagationPolicyNamespaceAnnotation: "ns", policyv1alpha1.PropagationPolicyNameAnnotation: "pp",
					TemplateFingerprintAnnotation: "fp"},
				OwnerReferences: []metav1.OwnerReference{owner},
			},
			wantSpec: workv1alpha2.ResourceBindingSpec{
				Resource: ref, Replicas: 3, ReplicaRequirements: req, PropagateDeps: true, Placement: &placement,
				SchedulerName: "default-scheduler", ConflictResolution: policyv1alpha1.ConflictOverwrite,
				Failover:                    &policyv1alpha1.FailoverBehavior{Cluster: &policyv1alpha1.ClusterFailoverBehavior{PurgeMode: "Directly"}},
				Suspension:                  &workv1alpha2.Suspension{Suspension: policyv1alpha1.Suspension{Dispatching: &dispatching}},
				PreserveResourcesOnDeletion: &preserve,
			},
		},
		"existing binding keeps others' fields and its id": {
			meta: metav1.ObjectMeta{
				Labels: map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: "old-id", policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel: "cpp-id", "team": "a"},
				Annotations: map[string]string{policyv1alpha1.ClusterPropagationPolicyAnnotation: "cpp", "note": "x",
					TemplateFingerprintAnnotation: "old"},
				OwnerReferences: []metav1.OwnerReference{
					{APIVersion: "v1", Kind: "ConfigMap", Name: "other", UID: "cm"},
					{APIVersion: "apps/v1", Kind: "Deployment", Name: "nginx", UID: "uid-0", Controller: &preserve},
				},
				Finalizers: []string{"atoll.dev/cleanup"},
			},
			spec: workv1alpha2.ResourceBindingSpec{
				Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "ns", Name: "nginx", UID: "uid-0", ResourceVersion: "1"},
				Replicas: 1, Clusters: []workv1alpha2.TargetCluster{{Name: "m1", Replicas: 1}},
				RequiredBy:    []workv1alpha2.BindingSnapshot{{Namespace: "ns", Name: "x"}},
				Suspension:    &workv1alpha2.Suspension{Scheduling: &scheduling},
				Placement:     &policyv1alpha1.Placement{ClusterTolerations: []corev1.Toleration{{Key: "k"}}},
				SchedulerName: "other",
			},
			in: bindingInput{Resource: ref, Fingerprint: "fp", Workload: workload{Replicas: 3, Requirements: req}, Policy: policy},
			wantMeta: metav1.ObjectMeta{
				Labels: map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: "old-id", policyv1alpha1.PropagationPolicyPermanentIDLabel: "pp-id", "team": "a"},
				Annotations: map[string]string{policyv1alpha1.PropagationPolicyNamespaceAnnotation: "ns", policyv1alpha1.PropagationPolicyNameAnnotation: "pp",
					"note": "x", TemplateFingerprintAnnotation: "fp"},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "other", UID: "cm"}, owner},
				Finalizers:      []string{"atoll.dev/cleanup"},
			},
			wantSpec: workv1alpha2.ResourceBindingSpec{
				Resource: ref, Replicas: 3, ReplicaRequirements: req, PropagateDeps: true, Placement: &placement,
				Clusters:      []workv1alpha2.TargetCluster{{Name: "m1", Replicas: 1}},
				RequiredBy:    []workv1alpha2.BindingSnapshot{{Namespace: "ns", Name: "x"}},
				SchedulerName: "default-scheduler", ConflictResolution: policyv1alpha1.ConflictOverwrite,
				Failover:                    &policyv1alpha1.FailoverBehavior{Cluster: &policyv1alpha1.ClusterFailoverBehavior{PurgeMode: "Directly"}},
				Suspension:                  &workv1alpha2.Suspension{Suspension: policyv1alpha1.Suspension{Dispatching: &dispatching}, Scheduling: &scheduling},
				PreserveResourcesOnDeletion: &preserve,
			},
		},
		"policy fields removed when the policy drops them": {
			meta: metav1.ObjectMeta{Labels: map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: "id"}},
			spec: workv1alpha2.ResourceBindingSpec{
				Resource: ref, PropagateDeps: true, Replicas: 5, ReplicaRequirements: req,
				Failover:                    &policyv1alpha1.FailoverBehavior{},
				Suspension:                  &workv1alpha2.Suspension{Suspension: policyv1alpha1.Suspension{Dispatching: &dispatching}},
				PreserveResourcesOnDeletion: &preserve,
			},
			in: bindingInput{Resource: ref, Fingerprint: "fp", Policy: &Policy{Namespace: "ns", Name: "pp", PermanentID: "pp-id",
				Spec: &policyv1alpha1.PropagationSpec{SchedulerName: "default-scheduler"}}},
			wantMeta: metav1.ObjectMeta{
				Labels: map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: "id", policyv1alpha1.PropagationPolicyPermanentIDLabel: "pp-id"},
				Annotations: map[string]string{policyv1alpha1.PropagationPolicyNamespaceAnnotation: "ns", policyv1alpha1.PropagationPolicyNameAnnotation: "pp",
					TemplateFingerprintAnnotation: "fp"},
				OwnerReferences: []metav1.OwnerReference{owner},
			},
			wantSpec: workv1alpha2.ResourceBindingSpec{Resource: ref, Placement: &policyv1alpha1.Placement{}, SchedulerName: "default-scheduler",
				ConflictResolution: policyv1alpha1.ConflictAbort},
		},
		"a policy without conflictResolution (the namespace auto-provision) gets the binding schema's default": {
			meta: metav1.ObjectMeta{Labels: map[string]string{workv1alpha2.ClusterResourceBindingPermanentIDLabel: "id"}},
			spec: workv1alpha2.ResourceBindingSpec{ConflictResolution: policyv1alpha1.ConflictAbort},
			in: bindingInput{Resource: workv1alpha2.ObjectReference{APIVersion: "v1", Kind: "Namespace", Name: "team", UID: "u", ResourceVersion: "7"},
				Fingerprint: "fp", Policy: namespaceAutoProvision, Cluster: true},
			wantMeta: metav1.ObjectMeta{
				Labels:      map[string]string{workv1alpha2.ClusterResourceBindingPermanentIDLabel: "id", workv1alpha2.NamespaceAutoProvisionLabel: "true"},
				Annotations: map[string]string{TemplateFingerprintAnnotation: "fp"},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Namespace", Name: "team", UID: "u",
					Controller: &preserve, BlockOwnerDeletion: new(false)}},
			},
			wantSpec: workv1alpha2.ResourceBindingSpec{
				Resource:           workv1alpha2.ObjectReference{APIVersion: "v1", Kind: "Namespace", Name: "team", UID: "u", ResourceVersion: "7"},
				Placement:          namespaceAutoProvision.Spec.Placement.DeepCopy(),
				ConflictResolution: policyv1alpha1.ConflictAbort,
			},
		},
		"cluster binding of a cluster-scoped template": {
			in: bindingInput{Resource: workv1alpha2.ObjectReference{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "r", UID: "u", ResourceVersion: "7"},
				Fingerprint: "fp", Policy: clusterPolicy, Cluster: true},
			wantMeta: metav1.ObjectMeta{
				Labels:      map[string]string{workv1alpha2.ClusterResourceBindingPermanentIDLabel: "new-id", policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel: "cpp-id"},
				Annotations: map[string]string{policyv1alpha1.ClusterPropagationPolicyAnnotation: "cpp", TemplateFingerprintAnnotation: "fp"},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "r", UID: "u",
					Controller: &preserve, BlockOwnerDeletion: new(false)}},
			},
			wantSpec: workv1alpha2.ResourceBindingSpec{
				Resource:  workv1alpha2.ObjectReference{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "r", UID: "u", ResourceVersion: "7"},
				Placement: &policyv1alpha1.Placement{}, SchedulerName: "default-scheduler", ConflictResolution: policyv1alpha1.ConflictAbort,
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			meta, spec := tc.meta.DeepCopy(), tc.spec.DeepCopy()
			renderBinding(meta, spec, tc.in, newID)
			if diff := cmp.Diff(tc.wantMeta, *meta, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("metadata (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantSpec, *spec, quantityCmp); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
			// Rendering again changes nothing: no write without a change.
			again, againSpec := meta.DeepCopy(), spec.DeepCopy()
			renderBinding(again, againSpec, tc.in, func() string { return "other-id" })
			if diff := cmp.Diff(meta, again); diff != "" {
				t.Errorf("second render changed metadata:\n%s", diff)
			}
			if diff := cmp.Diff(spec, againSpec, quantityCmp); diff != "" {
				t.Errorf("second render changed spec:\n%s", diff)
			}
		})
	}
}

func TestRenderBindingDoesNotAliasPolicy(t *testing.T) {
	policy := &Policy{Name: "p", Namespace: "ns", PermanentID: "id", Spec: &policyv1alpha1.PropagationSpec{
		Placement: policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"a"}}},
	}}
	var meta metav1.ObjectMeta
	var spec workv1alpha2.ResourceBindingSpec
	renderBinding(&meta, &spec, bindingInput{Policy: policy}, func() string { return "x" })
	spec.Placement.ClusterAffinity.ClusterNames[0] = "changed"
	if got := policy.Spec.Placement.ClusterAffinity.ClusterNames[0]; got != "a" {
		t.Errorf("policy placement changed through the binding: %q", got)
	}
}

func TestClaimOf(t *testing.T) {
	cases := map[string]struct {
		labels, annotations map[string]string
		want                *Claim
	}{
		"none": {nil, nil, nil},
		"pp": {map[string]string{policyv1alpha1.PropagationPolicyPermanentIDLabel: "id"},
			map[string]string{policyv1alpha1.PropagationPolicyNamespaceAnnotation: "ns", policyv1alpha1.PropagationPolicyNameAnnotation: "p"},
			&Claim{Namespace: "ns", Name: "p", PermanentID: "id"}},
		"cpp": {map[string]string{policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel: "id"},
			map[string]string{policyv1alpha1.ClusterPropagationPolicyAnnotation: "c"},
			&Claim{Cluster: true, Name: "c", PermanentID: "id"}},
		"pp first when both": {
			map[string]string{policyv1alpha1.PropagationPolicyPermanentIDLabel: "id", policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel: "cid"},
			map[string]string{policyv1alpha1.PropagationPolicyNamespaceAnnotation: "ns", policyv1alpha1.PropagationPolicyNameAnnotation: "p",
				policyv1alpha1.ClusterPropagationPolicyAnnotation: "c"},
			&Claim{Namespace: "ns", Name: "p", PermanentID: "id"}},
		"pp label without annotations, cpp complete": {
			map[string]string{policyv1alpha1.PropagationPolicyPermanentIDLabel: "id", policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel: "cid"},
			map[string]string{policyv1alpha1.ClusterPropagationPolicyAnnotation: "c"},
			&Claim{Cluster: true, Name: "c", PermanentID: "cid"}},
		"annotations without label": {nil, map[string]string{policyv1alpha1.ClusterPropagationPolicyAnnotation: "c"}, nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, claimOf(tc.labels, tc.annotations)); diff != "" {
				t.Errorf("claimOf (-want +got):\n%s", diff)
			}
		})
	}
}

func TestClaimPatch(t *testing.T) {
	p := &Policy{Namespace: "ns", Name: "pp", PermanentID: "pp-id"}
	c := &Policy{Cluster: true, Name: "cpp", PermanentID: "cpp-id"}
	ppLabels := map[string]string{"app": "x", policyv1alpha1.PropagationPolicyPermanentIDLabel: "pp-id"}
	ppAnnotations := map[string]string{policyv1alpha1.PropagationPolicyNamespaceAnnotation: "ns", policyv1alpha1.PropagationPolicyNameAnnotation: "pp"}
	cases := map[string]struct {
		labels, annotations map[string]string
		policy              *Policy
		want                string // JSON, "" for no patch
	}{
		"claim unclaimed": {map[string]string{"app": "x"}, nil, p,
			`{"metadata":{"annotations":{"propagationpolicy.karmada.io/name":"pp","propagationpolicy.karmada.io/namespace":"ns"},"labels":{"propagationpolicy.karmada.io/permanent-id":"pp-id"}}}`},
		"already claimed":  {ppLabels, ppAnnotations, p, ""},
		"nothing to clear": {map[string]string{"app": "x"}, map[string]string{"note": "y"}, nil, ""},
		"unclaim": {ppLabels, ppAnnotations, nil,
			`{"metadata":{"annotations":{"propagationpolicy.karmada.io/name":null,"propagationpolicy.karmada.io/namespace":null},"labels":{"propagationpolicy.karmada.io/permanent-id":null}}}`},
		"pp to cpp": {ppLabels, ppAnnotations, c,
			`{"metadata":{"annotations":{"clusterpropagationpolicy.karmada.io/name":"cpp","propagationpolicy.karmada.io/name":null,"propagationpolicy.karmada.io/namespace":null},"labels":{"clusterpropagationpolicy.karmada.io/permanent-id":"cpp-id","propagationpolicy.karmada.io/permanent-id":null}}}`},
		"stale id only": {map[string]string{policyv1alpha1.PropagationPolicyPermanentIDLabel: "old"}, ppAnnotations, p,
			`{"metadata":{"labels":{"propagationpolicy.karmada.io/permanent-id":"pp-id"}}}`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := claimPatch(tc.labels, tc.annotations, tc.policy)
			if tc.want == "" {
				if got != nil {
					t.Errorf("claimPatch = %s, want none", got)
				}
				return
			}
			var gotV, wantV any
			if err := json.Unmarshal(got, &gotV); err != nil {
				t.Fatalf("claimPatch = %q: %v", got, err)
			}
			_ = json.Unmarshal([]byte(tc.want), &wantV)
			if diff := cmp.Diff(wantV, gotV); diff != "" {
				t.Errorf("claimPatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFingerprint(t *testing.T) {
	base := func() *metav1.ObjectMeta {
		return &metav1.ObjectMeta{UID: "u", Generation: 2, ResourceVersion: "10",
			Labels: map[string]string{"app": "x"}, Annotations: map[string]string{"note": "y"}}
	}
	cases := map[string]struct {
		change   func(m *metav1.ObjectMeta)
		wantSame bool
	}{
		"identical":              {func(*metav1.ObjectMeta) {}, true},
		"status write (rv only)": {func(m *metav1.ObjectMeta) { m.ResourceVersion = "11" }, true},
		"claim label":            {func(m *metav1.ObjectMeta) { m.Labels[policyv1alpha1.PropagationPolicyPermanentIDLabel] = "id" }, true},
		"claim annotation":       {func(m *metav1.ObjectMeta) { m.Annotations[policyv1alpha1.ClusterPropagationPolicyAnnotation] = "c" }, true},
		"last-applied": {func(m *metav1.ObjectMeta) {
			m.Annotations["kubectl.kubernetes.io/last-applied-configuration"] = "{}"
		}, true},
		"managed fields":    {func(m *metav1.ObjectMeta) { m.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "x"}} }, true},
		"spec (generation)": {func(m *metav1.ObjectMeta) { m.Generation = 3 }, false},
		"label":             {func(m *metav1.ObjectMeta) { m.Labels["tier"] = "web" }, false},
		"annotation":        {func(m *metav1.ObjectMeta) { m.Annotations["note"] = "z" }, false},
		"recreated":         {func(m *metav1.ObjectMeta) { m.UID = "v" }, false},
		"no generation: any write": {func(m *metav1.ObjectMeta) {
			m.Generation = 0
		}, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			m := base()
			tc.change(m)
			if same := fingerprint(base()) == fingerprint(m); same != tc.wantSame {
				t.Errorf("same fingerprint = %v, want %v", same, tc.wantSame)
			}
		})
	}
	noGen := base()
	noGen.Generation = 0
	other := noGen.DeepCopy()
	other.ResourceVersion = "11"
	if fingerprint(noGen) == fingerprint(other) {
		t.Error("without a generation, a new resourceVersion must change the fingerprint")
	}
}

func TestWithController(t *testing.T) {
	yes := true
	ours := metav1.OwnerReference{Kind: "Deployment", Name: "d", UID: "new", Controller: &yes}
	cases := map[string]struct {
		refs []metav1.OwnerReference
		want []string // UIDs
	}{
		"empty":                      {nil, []string{"new"}},
		"other owners kept":          {[]metav1.OwnerReference{{UID: "a"}}, []string{"a", "new"}},
		"controller replaced":        {[]metav1.OwnerReference{{UID: "a"}, {UID: "old", Controller: &yes}, {UID: "b"}}, []string{"a", "new", "b"}},
		"second controller dropped":  {[]metav1.OwnerReference{{UID: "old", Controller: &yes}, {UID: "old2", Controller: &yes}}, []string{"new"}},
		"non-controller copy merged": {[]metav1.OwnerReference{{UID: "new"}}, []string{"new"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, r := range withController(tc.refs, ours) {
				got = append(got, string(r.UID))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("withController (-want +got):\n%s", diff)
			}
		})
	}
}

var quantityCmp = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })

func TestAffinityGroups(t *testing.T) {
	aff := &policyv1alpha1.WorkloadAffinity{
		Affinity:     &policyv1alpha1.WorkloadAffinityTerm{GroupByLabelKey: "app.group"},
		AntiAffinity: &policyv1alpha1.WorkloadAntiAffinityTerm{GroupByLabelKey: "ha.group"},
	}
	for _, tc := range []struct {
		name   string
		wa     *policyv1alpha1.WorkloadAffinity
		labels map[string]string
		want   *workv1alpha2.WorkloadAffinityGroups
	}{
		{name: "no workloadAffinity", labels: map[string]string{"app.group": "a"}},
		{name: "template without the labels", wa: aff, labels: map[string]string{"other": "x"}},
		{name: "affinity only", wa: aff, labels: map[string]string{"app.group": "front"},
			want: &workv1alpha2.WorkloadAffinityGroups{AffinityGroup: "app.group=front"}},
		{name: "both", wa: aff, labels: map[string]string{"app.group": "front", "ha.group": "db"},
			want: &workv1alpha2.WorkloadAffinityGroups{AffinityGroup: "app.group=front", AntiAffinityGroup: "ha.group=db"}},
		{name: "empty value is a group", wa: aff, labels: map[string]string{"ha.group": ""},
			want: &workv1alpha2.WorkloadAffinityGroups{AntiAffinityGroup: "ha.group="}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := affinityGroups(tc.wa, tc.labels)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("affinityGroups (-want +got):\n%s", diff)
			}
		})
	}
}
