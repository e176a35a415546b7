// Package apis registers every API group that atoll serves.
package apis

import (
	"k8s.io/apimachinery/pkg/runtime"

	appsv1alpha1 "github.com/atoll-dev/atoll/apis/apps/v1alpha1"
	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	configv1alpha1 "github.com/atoll-dev/atoll/apis/config/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	tenancyv1alpha1 "github.com/atoll-dev/atoll/apis/tenancy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
)

// AddToScheme adds the kinds of apps.atoll.dev/v1alpha1, cluster.karmada.io/v1alpha1,
// config.karmada.io/v1alpha1,
// policy.karmada.io/v1alpha1, policy.atoll.dev/v1alpha1 and work.karmada.io/v1alpha2 to s.
func AddToScheme(s *runtime.Scheme) error {
	builder := runtime.NewSchemeBuilder(
		appsv1alpha1.AddToScheme,
		clusterv1alpha1.AddToScheme,
		configv1alpha1.AddToScheme,
		policyv1alpha1.AddToScheme,
		tenancyv1alpha1.AddToScheme,
		workv1alpha2.AddToScheme,
	)
	return builder.AddToScheme(s)
}
