package detector

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata"
	ctrl "sigs.k8s.io/controller-runtime"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/controller/dependencies"
	detector "github.com/atoll-dev/atoll/pkg/controller/detector"
	"github.com/atoll-dev/atoll/pkg/controller/indexer"
	"github.com/atoll-dev/atoll/pkg/templatemeta"
	"github.com/atoll-dev/atoll/pkg/util/names"
	"github.com/atoll-dev/atoll/test/framework"
)

// The dependencies distributor reads and watches ConfigMaps, Secrets,
// ServiceAccounts and PVCs through the detector's template informers: no
// informer of its own, and a dependency created after its workload still
// reaches the workload through the shared informer's events.
func TestDependenciesShareTheTemplateInformers(t *testing.T) {
	cfg := cp.RESTConfig(t)
	before := framework.Watches(t, cp.RESTConfig(t), "configmaps")
	templates := templatemeta.New(metadata.NewForConfigOrDie(cfg), detector.InformerOptions())
	m := framework.StartManager(t, cfg, func(ctx context.Context, mgr ctrl.Manager) error {
		if err := indexer.Setup(ctx, mgr.GetFieldIndexer()); err != nil {
			return err
		}
		if err := detector.Setup(ctx, mgr, detector.Options{RediscoveryPeriod: time.Second, TemplateInformers: templates}); err != nil {
			return err
		}
		return dependencies.Setup(ctx, mgr, dependencies.Options{TemplateInformers: templates})
	})
	var watched float64
	framework.Eventually(t, time.Minute, "the detector to sync", func() (bool, string) {
		watched = framework.MetricValue(t, "atoll_detector_watched_resources", nil)
		return watched > 0, fmt.Sprintf("watched resources: %v", watched)
	})
	if got := templates.Running(); float64(got) != watched {
		t.Errorf("%d metadata informers run for %v resources the detector watches: the dependencies distributor started its own", got, watched)
	}
	// One list and one watch of ConfigMaps for both controllers.
	framework.Eventually(t, timeout, "one more ConfigMap watch on the API server", func() (bool, string) {
		n := framework.Watches(t, cp.RESTConfig(t), "configmaps")
		return n == before+1, fmt.Sprintf("%v ConfigMap watches, %v before the controllers started", n, before)
	})

	c := cp.Client(t)
	ns := namespace(t, c)
	ctx := framework.Context(t, time.Minute)
	policy := newPolicy(ns, "deps", 0).PropagateDeps().
		Select("apps/v1", "Deployment", "web").Obj()
	if err := c.Create(ctx, policy); err != nil {
		t.Fatal(err)
	}
	deploy := newDeployment(ns, "web", 1, nil)
	deploy.Spec.Template.Spec.Containers[0].EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}}}}
	if err := c.Create(ctx, deploy); err != nil {
		t.Fatal(err)
	}
	// No scheduler runs here: place the workload's binding by hand.
	key := types.NamespacedName{Namespace: ns, Name: names.BindingName("Deployment", "web")}
	framework.Eventually(t, timeout, "the workload's binding placed on member1", func() (bool, string) {
		var b workv1alpha2.ResourceBinding
		if err := c.Get(ctx, key, &b); err != nil {
			return false, err.Error()
		}
		if len(b.Spec.Clusters) == 0 {
			b.Spec.Clusters = []workv1alpha2.TargetCluster{{Name: "member1", Replicas: 1}}
			if err := c.Update(ctx, &b); err != nil {
				return false, err.Error()
			}
		}
		return true, ""
	})

	// The ConfigMap comes after its Deployment: only an event from the
	// shared ConfigMap informer can attach it.
	if err := c.Create(ctx, newConfigMap(ns, "settings", nil)); err != nil {
		t.Fatal(err)
	}
	attached := types.NamespacedName{Namespace: ns, Name: names.BindingName("ConfigMap", "settings")}
	framework.Eventually(t, timeout, "the ConfigMap's attached binding requiring the Deployment's", func() (bool, string) {
		var a workv1alpha2.ResourceBinding
		if err := c.Get(ctx, attached, &a); err != nil {
			return false, err.Error()
		}
		return len(a.Spec.RequiredBy) == 1 && a.Spec.RequiredBy[0].Name == key.Name && a.Spec.Resource.UID != "",
			fmt.Sprintf("requiredBy %+v, resource %+v", a.Spec.RequiredBy, a.Spec.Resource)
	})
	if got := templates.Running(); float64(got) != watched {
		t.Errorf("%d metadata informers run after a dependency was read, want %v", got, watched)
	}

	deleteObj(t, c, policy)
	m.Stop()
	framework.Eventually(t, timeout, "every metadata informer stopped with both controllers", func() (bool, string) {
		n := templates.Running()
		return n == 0, fmt.Sprintf("%d running", n)
	})
}
