package tenancy

import (
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	tenancyv1alpha1 "github.com/atoll-dev/atoll/apis/tenancy/v1alpha1"
)

func tenant(name string, namespaces []string, clusters policyv1alpha1.ClusterAffinity, sel map[string]string) tenancyv1alpha1.Tenant {
	t := tenancyv1alpha1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: tenancyv1alpha1.TenantSpec{
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: name, Name: "dev"}},
		Namespaces: namespaces, Clusters: clusters,
	}}
	if sel != nil {
		t.Spec.ResourceSelector = &metav1.LabelSelector{MatchLabels: sel}
	}
	return t
}

func cluster(name string, labels map[string]string) *clusterv1alpha1.Cluster {
	return &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

func teams() *Set {
	return NewSet([]tenancyv1alpha1.Tenant{
		tenant("team-a", []string{"team-a", "shared"}, policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}, map[string]string{"team": "a"}),
		tenant("team-b", []string{"team-b", "shared"}, policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"owner": "b"}}}, nil),
	})
}

func TestBoundary(t *testing.T) {
	s := teams()
	a, b := map[string]string{"team": "a"}, map[string]string{"team": "b"}
	cases := map[string]struct {
		namespace   string
		annotations map[string]string
		template    map[string]string // labels of a template in namespace
		wantTenant  string
		wantBounded bool
		wantOwns    bool
		wantWhy     string
	}{
		"a namespace no tenant lists is an admin's": {namespace: "ops", template: b, wantOwns: true},
		"a tenant's own namespace":                  {namespace: "team-a", template: nil, wantTenant: "team-a", wantBounded: true, wantOwns: true},
		"a forged record in an own namespace is ignored": {namespace: "team-a", annotations: map[string]string{tenancyv1alpha1.TenantAnnotation: "team-b"},
			wantTenant: "team-a", wantBounded: true, wantOwns: true},
		"shared, recorded, own labels": {namespace: "shared", annotations: map[string]string{tenancyv1alpha1.TenantAnnotation: "team-a"}, template: a,
			wantTenant: "team-a", wantBounded: true, wantOwns: true},
		"shared, recorded, another team's labels": {namespace: "shared", annotations: map[string]string{tenancyv1alpha1.TenantAnnotation: "team-a"}, template: b,
			wantTenant: "team-a", wantBounded: true, wantWhy: "does not carry tenant team-a's labels"},
		"shared, tenant without a selector": {namespace: "shared", annotations: map[string]string{tenancyv1alpha1.TenantAnnotation: "team-b"}, template: b,
			wantTenant: "team-b", wantBounded: true, wantWhy: "has no resourceSelector"},
		"shared, no record": {namespace: "shared", template: a, wantBounded: true, wantWhy: "acts on nothing"},
		"shared, a record of a tenant that does not list it": {namespace: "shared", annotations: map[string]string{tenancyv1alpha1.TenantAnnotation: "team-c"},
			template: a, wantBounded: true, wantWhy: "acts on nothing"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			bd := s.ForPolicy(tc.namespace, tc.annotations)
			if bd.Name() != tc.wantTenant || bd.Bounded() != tc.wantBounded {
				t.Fatalf("boundary tenant %q bounded %v, want %q %v", bd.Name(), bd.Bounded(), tc.wantTenant, tc.wantBounded)
			}
			owns, why := bd.OwnsTemplate(tc.namespace, tc.template)
			if owns != tc.wantOwns || !strings.Contains(why, tc.wantWhy) {
				t.Errorf("owns %v (%q), want %v (%q)", owns, why, tc.wantOwns, tc.wantWhy)
			}
		})
	}
}

func TestAllowsCluster(t *testing.T) {
	s := teams()
	m1, m2 := cluster("member1", nil), cluster("member2", map[string]string{"owner": "b"})
	cases := map[string]struct {
		boundary Boundary
		want     map[string]bool
	}{
		"admin":                     {boundary: s.ForPolicy("ops", nil), want: map[string]bool{"member1": true, "member2": true}},
		"by name":                   {boundary: s.ForPolicy("team-a", nil), want: map[string]bool{"member1": true, "member2": false}},
		"by label":                  {boundary: s.ForPolicy("team-b", nil), want: map[string]bool{"member1": false, "member2": true}},
		"closed":                    {boundary: s.ForPolicy("shared", nil), want: map[string]bool{"member1": false, "member2": false}},
		"no tenants: all as before": {boundary: NewSet(nil).ForPolicy("team-a", nil), want: map[string]bool{"member1": true, "member2": true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			for _, c := range []*clusterv1alpha1.Cluster{m1, m2} {
				if got := tc.boundary.AllowsCluster(c); got != tc.want[c.Name] {
					t.Errorf("%s: got %v, want %v", c.Name, got, tc.want[c.Name])
				}
			}
		})
	}
}

func TestStatus(t *testing.T) {
	clusters := []*clusterv1alpha1.Cluster{cluster("member2", map[string]string{"owner": "b"}), cluster("member1", nil)}
	bad := tenant("team-c", []string{"team-c"}, policyv1alpha1.ClusterAffinity{}, nil)
	bad.Spec.ResourceSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "team", Operator: "Near", Values: []string{"c"}}}}
	twice := tenant("team-d", []string{"team-d"}, policyv1alpha1.ClusterAffinity{}, nil)
	twice.Spec.Subjects = []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "team-a", Name: "dev"}}
	all := []tenancyv1alpha1.Tenant{
		tenant("team-a", []string{"team-a", "shared"}, policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}, map[string]string{"team": "a"}),
		tenant("team-b", []string{"team-b", "shared"}, policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"owner": "b"}}}, nil),
		bad, twice,
	}
	s := NewSet(all)
	cases := map[string]struct {
		tenant       int
		wantClusters string
		wantShared   string
		wantReason   string
		wantMessage  string
	}{
		"ready":                        {tenant: 0, wantClusters: "member1", wantShared: "shared", wantReason: ReasonSubjectInSeveralTenants, wantMessage: "also a subject of team-d"},
		"shared without a selector":    {tenant: 1, wantClusters: "member2", wantShared: "shared", wantReason: ReasonSharedWithoutSelector, wantMessage: "namespace shared is also listed by team-a"},
		"invalid selector":             {tenant: 2, wantClusters: "member1,member2", wantReason: ReasonInvalidSelector, wantMessage: "spec.resourceSelector"},
		"a subject of another as well": {tenant: 3, wantClusters: "member1,member2", wantReason: ReasonSubjectInSeveralTenants, wantMessage: "ServiceAccount team-a/dev is also a subject of team-a"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			st := s.Status(&all[tc.tenant], clusters, tenancyv1alpha1.TenantStatus{}, metav1.Now())
			if got := strings.Join(st.Clusters, ","); got != tc.wantClusters {
				t.Errorf("clusters %q, want %q", got, tc.wantClusters)
			}
			if got := strings.Join(st.SharedNamespaces, ","); got != tc.wantShared {
				t.Errorf("shared %q, want %q", got, tc.wantShared)
			}
			c := st.Conditions[0]
			if c.Reason != tc.wantReason || !strings.Contains(c.Message, tc.wantMessage) {
				t.Errorf("condition %s %q, want %s containing %q", c.Reason, c.Message, tc.wantReason, tc.wantMessage)
			}
		})
	}
}
