// Package templatemeta holds the control plane's metadata-only informers,
// one per resource, shared by every controller that reads templates'
// metadata: the detector watches every propagatable resource, and the
// dependencies distributor needs ConfigMaps, Secrets, ServiceAccounts and
// PersistentVolumeClaims. Before, each kept its own informer, so at 100,000
// templates a restart listed the dependency kinds twice and the process
// held their metadata twice (design 0013, decision 26).
//
// An informer starts when its first user acquires it and stops when its
// last user releases it. Every informer of one Informers has the same
// transform and indexers, whichever user started it. Cached objects are
// shared: readers must not change them.
package templatemeta

import (
	"context"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	toolscache "k8s.io/client-go/tools/cache"
)

// Options shape every informer of an Informers.
type Options struct {
	// Transform is applied to every object before it is cached (nil: the
	// objects' managedFields are dropped, nothing else).
	Transform toolscache.TransformFunc
	// Indexers are the informers' indexers besides the namespace index,
	// which every informer has.
	Indexers toolscache.Indexers
}

// Informers are the shared metadata informers of one control plane.
type Informers struct {
	client metadata.Interface
	opts   Options

	mu    sync.Mutex
	byGVR map[schema.GroupVersionResource]*shared
}

type shared struct {
	informer toolscache.SharedIndexInformer
	users    int
	stop     context.CancelFunc
}

// New returns the shared informers reading through client.
func New(client metadata.Interface, opts Options) *Informers {
	if opts.Transform == nil {
		opts.Transform = dropManagedFields
	}
	return &Informers{client: client, opts: opts, byGVR: map[schema.GroupVersionResource]*shared{}}
}

func dropManagedFields(obj any) (any, error) {
	if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
		m.ManagedFields = nil
	}
	return obj, nil
}

// Acquire returns the running informer of gvr, starting it when no one
// holds it, and the function that gives it back (call it once; the
// informer stops when its last holder gives it back). The informer may not
// have synced yet.
func (i *Informers) Acquire(gvr schema.GroupVersionResource) (toolscache.SharedIndexInformer, func()) {
	i.mu.Lock()
	defer i.mu.Unlock()
	s := i.byGVR[gvr]
	if s == nil {
		indexers := toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc}
		for name, f := range i.opts.Indexers {
			indexers[name] = f
		}
		inf := metadatainformer.NewFilteredMetadataInformer(i.client, gvr, metav1.NamespaceAll, 0, indexers, nil).Informer()
		_ = inf.SetTransform(i.opts.Transform) // fails only once started
		// The informer outlives the context of the user that starts it.
		ctx, cancel := context.WithCancel(context.Background())
		s = &shared{informer: inf, stop: cancel}
		i.byGVR[gvr] = s
		go inf.RunWithContext(ctx)
	}
	s.users++
	var once sync.Once
	return s.informer, func() { once.Do(func() { i.release(gvr, s) }) }
}

func (i *Informers) release(gvr schema.GroupVersionResource, s *shared) {
	i.mu.Lock()
	defer i.mu.Unlock()
	s.users--
	if s.users > 0 {
		return
	}
	s.stop()
	if i.byGVR[gvr] == s {
		delete(i.byGVR, gvr)
	}
}

// Running is the number of informers running, for tests and metrics.
func (i *Informers) Running() int {
	i.mu.Lock()
	defer i.mu.Unlock()
	return len(i.byGVR)
}
