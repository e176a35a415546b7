// Package discovery lets atoll refresh what the admission plugins of its
// embedded kube-apiserver know of the API's kinds, instead of waiting for
// the API server to do it.
//
// kube-apiserver hands its admission plugins one REST mapper over cached
// discovery and resets it when it starts and every 30 seconds after. After
// a restart the admission policies' informer meets the tenancy policies
// before the API server serves the CRDs they take as parameters (paramKind
// Tenant): the mapper caches discovery without them, every policy write is
// refused ("failed to find resource referenced by paramKind", failurePolicy
// Fail), and it stays so until the next reset, up to 30 s later. The
// controllers wait for the policies to work (admission.WaitEffective), so a
// restarted `atoll up` was ready only after 20 to 30 s instead of a few
// (kubernetes/kubernetes#124237, #122658; not fixed in Kubernetes 1.37).
//
// The plugin admits nothing and refuses nothing: it only asks the API server
// for that REST mapper, as any admission plugin may, so that Refresh can
// reset it once the CRDs are served.
package discovery

import (
	"io"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/initializer"
)

// PluginName is the admission plugin's name.
const PluginName = "AtollAdmissionDiscovery"

// Refresher resets the REST mapper the API server hands its admission
// plugins. The zero value is ready to use.
type Refresher struct {
	mu      sync.Mutex
	mappers []meta.ResettableRESTMapper
}

// Register adds the plugin to plugins, handing the mapper it receives to r;
// the kube-apiserver enables it when its name is also in the recommended
// plugin order.
func (r *Refresher) Register(plugins *admission.Plugins) {
	plugins.Register(PluginName, func(io.Reader) (admission.Interface, error) {
		return &plugin{refresher: r}, nil
	})
}

// Refresh makes the admission plugins' next mapping read discovery again,
// and reports whether there was a mapper to reset (false before the API
// server has initialised its plugins, or when its mapper cannot be reset).
func (r *Refresher) Refresh() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range r.mappers {
		m.Reset()
	}
	return len(r.mappers) > 0
}

func (r *Refresher) add(m meta.ResettableRESTMapper) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mappers = append(r.mappers, m)
}

type plugin struct {
	refresher *Refresher
}

var _ initializer.WantsRESTMapper = (*plugin)(nil)

// Handles is false for every operation: the plugin takes part in no
// admission decision.
func (*plugin) Handles(admission.Operation) bool { return false }

// SetRESTMapper keeps the mapper the API server shares between its
// admission plugins, when it can be reset (kube-apiserver's is a
// DeferredDiscoveryRESTMapper).
func (p *plugin) SetRESTMapper(m meta.RESTMapper) {
	if rm, ok := m.(meta.ResettableRESTMapper); ok {
		p.refresher.add(rm)
	}
}

// ValidateInitialization accepts a plugin without a resettable mapper:
// Refresh then does nothing and the API server's own resets still apply.
func (*plugin) ValidateInitialization() error { return nil }
