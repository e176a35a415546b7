package manager

import (
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/util/wire"
)

// newInformerFunc returns the manager cache's informer constructor:
// ResourceBindings and ClusterResourceBindings (one per template, and
// nearly all of a restart's decoding) list and watch through pkg/util/wire,
// every other kind through controller-runtime's ListerWatcher.
//
// The wire ListerWatchers list every namespace with no selector, as the
// cache's ByObject entries for bindings ask; one that restricts bindings
// must restrict them here too.
func newInformerFunc(cfg *rest.Config, httpClient *http.Client, scheme *runtime.Scheme) (func(toolscache.ListerWatcher, runtime.Object, time.Duration, toolscache.Indexers) toolscache.SharedIndexInformer, error) {
	client, err := wire.NewTypedClient(cfg, httpClient, workv1alpha2.SchemeGroupVersion, scheme)
	if err != nil {
		return nil, err
	}
	params := runtime.NewParameterCodec(scheme)
	bindings := wire.NewListWatch(client, "resourcebindings", func() runtime.Object { return &workv1alpha2.ResourceBindingList{} }, params)
	clusterBindings := wire.NewListWatch(client, "clusterresourcebindings", func() runtime.Object { return &workv1alpha2.ClusterResourceBindingList{} }, params)
	return func(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
		switch obj.(type) {
		case *workv1alpha2.ResourceBinding:
			lw = bindings
		case *workv1alpha2.ClusterResourceBinding:
			lw = clusterBindings
		}
		return toolscache.NewSharedIndexInformer(lw, obj, resync, indexers)
	}, nil
}
