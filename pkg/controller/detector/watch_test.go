package detector

import (
	"context"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	"github.com/atoll-dev/atoll/pkg/util/names"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
)

// TestHandledWaitsForTheHandlerNotTheInformer: a shared template informer
// that another controller started has listed already; the detector's
// handler, added afterwards, gets the list as notifications. The detector
// counts the resource as handled (and so says it is ready) only once its
// handler has had every one of them, not when the informer has synced:
// otherwise a template created right after "ready" waits behind the
// undelivered list (session 19's 9.6 s fresh template at 100,000).
func TestHandledWaitsForTheHandlerNotTheInformer(t *testing.T) {
	const listed = 50
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inf := syncedInformer(ctx, t, listed)

	gate := make(chan struct{})
	q := &gatedQueue{PriorityQueue: priorityqueue.New[item]("test"), gate: gate}
	defer q.ShutDown()
	d := &Detector{queue: q}
	w := d.watch(configMaps, inf, func() {})
	defer w.stop()

	// The handler is blocked on the first notification: the informer has
	// synced, the detector has not seen the list.
	if w.handled() {
		t.Fatal("handled before the handler had the informer's list")
	}
	close(gate)
	if !toolscache.WaitForCacheSync(ctx.Done(), w.handled) {
		t.Fatal("never handled")
	}
	if got := q.Len(); got != listed { // Len counts buffered adds too
		t.Errorf("%d templates queued once handled, want %d", got, listed)
	}
}

// gatedQueue blocks adds until gate is closed.
type gatedQueue struct {
	priorityqueue.PriorityQueue[item]
	gate chan struct{}
}

func (q *gatedQueue) AddWithOpts(o priorityqueue.AddOpts, items ...item) {
	<-q.gate
	q.PriorityQueue.AddWithOpts(o, items...)
}

var configMaps = resourceInfo{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Kind: "ConfigMap", Namespaced: true}

// syncedInformer is a running, synced metadata informer over listedOnly(n).
func syncedInformer(ctx context.Context, t *testing.T, n int) toolscache.SharedIndexInformer {
	t.Helper()
	inf := toolscache.NewSharedIndexInformer(listedOnly(n), &metav1.PartialObjectMetadata{}, 0, toolscache.Indexers{})
	go inf.RunWithContext(ctx)
	if !toolscache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("informer did not sync")
	}
	return inf
}

// listedOnly lists n ConfigMaps' metadata and then watches nothing.
func listedOnly(n int) toolscache.ListerWatcher {
	list := &metav1.PartialObjectMetadataList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}
	for i := range n {
		list.Items = append(list.Items, metav1.PartialObjectMetadata{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("cm-%d", i), ResourceVersion: "1"},
		})
	}
	return utiltesting.Listed(list, watch.NewFake())
}

// TestInitialBindingQueuesOnlyAnOrphan: a binding of the initial list
// queues its template only when the template's informer does not hold it
// (the template was deleted while the detector was down): a template it
// holds was queued by its own initial event. A binding deleted later
// always brings its template back.
func TestInitialBindingQueuesOnlyAnOrphan(t *testing.T) {
	cases := map[string]struct {
		template   string
		initial    bool
		wantQueued int
	}{
		"initial, template listed":         {template: "cm-0", initial: true},
		"initial, template gone":           {template: "cm-9", initial: true, wantQueued: 1},
		"binding deleted, template listed": {template: "cm-0", wantQueued: 1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			inf := syncedInformer(ctx, t, 2)
			q := priorityqueue.New[item]("test")
			defer q.ShutDown()
			w := &watched{resourceInfo: configMaps, informer: inf, handled: inf.HasSynced}
			d := &Detector{queue: q, byGK: map[schema.GroupKind]*watched{{Kind: "ConfigMap"}: w}}

			b := utiltesting.MakeBinding(names.BindingName("ConfigMap", tc.template), "default").Resource("v1", "ConfigMap", tc.template).Obj()
			b.Labels = map[string]string{policyv1alpha1.PropagationPolicyPermanentIDLabel: "pp-id"}
			h := d.bindingHandler()
			if tc.initial {
				h.OnAdd(b, true)
			} else {
				h.OnDelete(b)
			}
			if got := q.Len(); got != tc.wantQueued {
				t.Errorf("%d templates queued, want %d", got, tc.wantQueued)
			}
		})
	}
}
