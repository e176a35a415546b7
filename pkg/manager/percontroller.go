package manager

import (
	"fmt"
	"net/http"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/util/bindingkind"
	"github.com/atoll-dev/atoll/pkg/util/events"
	"github.com/atoll-dev/atoll/pkg/util/requestmetrics"
	"github.com/atoll-dev/atoll/pkg/util/stalewrites"
	"github.com/atoll-dev/atoll/pkg/util/untracked"
)

// controllerManager is the manager as one controller sees it: the same
// cache, scheme and lifecycle, but a client, config and HTTP client of its
// own whose requests count as that controller's
// (atoll_controller_requests_total). Reads through the client still come
// from the shared cache; conditional writes that the process's own earlier
// writes have made sure to lose are not sent (stalewrites), and writes to
// bindings clear the API server's field-ownership record (untracked).
type controllerManager struct {
	ctrl.Manager
	cfg    *rest.Config
	http   *http.Client
	client client.Client
	events *events.Writer
}

// forController returns mgr's view for the controller called name; base is
// the manager's configuration before any counting was added; versions is
// the process's record of the object versions its writes replaced.
func forController(mgr ctrl.Manager, base *rest.Config, name string, ew *events.Writer, versions *stalewrites.Versions) (*controllerManager, error) {
	cfg := requestmetrics.Config(base, name)
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("HTTP client of controller %s: %w", name, err)
	}
	c, err := client.NewWithWatch(cfg, client.Options{
		HTTPClient: hc,
		Scheme:     mgr.GetScheme(),
		Mapper:     mgr.GetRESTMapper(),
		Cache:      &client.CacheOptions{Reader: mgr.GetCache()},
	})
	if err != nil {
		return nil, fmt.Errorf("client of controller %s: %w", name, err)
	}
	// untracked outside the guard: the guard computes each patch's body.
	guarded := untracked.Writes(stalewrites.Guard(c, versions, name), bindingKinds...)
	return &controllerManager{Manager: mgr, cfg: cfg, http: hc, client: guarded, events: ew}, nil
}

func (m *controllerManager) GetConfig() *rest.Config     { return m.cfg }
func (m *controllerManager) GetHTTPClient() *http.Client { return m.http }
func (m *controllerManager) GetClient() client.Client    { return m.client }

// GetEventRecorder records through the process's bounded event writer.
func (m *controllerManager) GetEventRecorder(name string) recorder.EventRecorder {
	return m.events.Recorder(name)
}

// bindingKinds are the kinds whose field ownership the API server need not
// record: one object per template, written only by atoll (design 0013,
// decision 45).
var bindingKinds = func() []schema.GroupKind {
	out := make([]schema.GroupKind, 0, len(bindingkind.Both))
	for _, k := range bindingkind.Both {
		out = append(out, workv1alpha2.SchemeGroupVersion.WithKind(k.Kind()).GroupKind())
	}
	return out
}()
