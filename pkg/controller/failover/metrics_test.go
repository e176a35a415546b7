package failover

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
)

const (
	taint = workv1alpha2.EvictionProducerTaintManager
	app   = workv1alpha2.EvictionProducerApplicationFailover
)

// TestPendingTasksFollowTheBindings: the eviction-task gauge follows the
// bindings an informer lists and then sees change and go, without listing
// them on a scrape.
func TestPendingTasksFollowTheBindings(t *testing.T) {
	cases := map[string]struct {
		listed []*workv1alpha2.ResourceBinding
		events []watch.Event
		want   map[string]float64
	}{
		"no tasks": {
			listed: []*workv1alpha2.ResourceBinding{binding("a")},
			want:   map[string]float64{taint: 0, app: 0},
		},
		"listed": {
			listed: []*workv1alpha2.ResourceBinding{binding("a", taint, taint), binding("b", app), binding("c")},
			want:   map[string]float64{taint: 2, app: 1},
		},
		"a task replaced": {
			listed: []*workv1alpha2.ResourceBinding{binding("a", taint), binding("b", taint)},
			events: []watch.Event{{Type: watch.Modified, Object: binding("a", app)}},
			want:   map[string]float64{taint: 1, app: 1},
		},
		"tasks done": {
			listed: []*workv1alpha2.ResourceBinding{binding("a", taint, app)},
			events: []watch.Event{{Type: watch.Modified, Object: binding("a")}},
			want:   map[string]float64{taint: 0, app: 0},
		},
		"binding deleted, another added": {
			listed: []*workv1alpha2.ResourceBinding{binding("a", taint, taint), binding("b", taint)},
			events: []watch.Event{
				{Type: watch.Deleted, Object: binding("a", taint, taint)},
				{Type: watch.Added, Object: binding("d", app)},
			},
			want: map[string]float64{taint: 1, app: 1},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			events := watch.NewFake()
			inf := toolscache.NewSharedIndexInformer(bindingsListed(tc.listed, events), &workv1alpha2.ResourceBinding{}, 0, toolscache.Indexers{})
			p := newPendingTasks()
			if _, err := inf.AddEventHandler(p.handler()); err != nil {
				t.Fatal(err)
			}
			go inf.RunWithContext(ctx)
			if !toolscache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
				t.Fatal("informer did not sync")
			}
			for _, e := range tc.events {
				events.Action(e.Type, e.Object)
			}
			// The events reach the handler in the background; wait for the
			// counts, bounded (a failure shows the last counts).
			var got map[string]float64
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				if got = gauges(t, p); maps.Equal(got, tc.want) {
					return
				}
			}
			t.Errorf("gauge %v, want %v", got, tc.want)
		})
	}
}

func binding(name string, producers ...string) *workv1alpha2.ResourceBinding {
	b := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, ResourceVersion: "1"}}
	for i, p := range producers {
		b.Spec.GracefulEvictionTasks = append(b.Spec.GracefulEvictionTasks,
			workv1alpha2.GracefulEvictionTask{FromCluster: fmt.Sprintf("member%d", i), Producer: p})
	}
	return b
}

// bindingsListed lists bindings, then watches events.
func bindingsListed(bindings []*workv1alpha2.ResourceBinding, events watch.Interface) toolscache.ListerWatcher {
	list := &workv1alpha2.ResourceBindingList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}
	for _, b := range bindings {
		list.Items = append(list.Items, *b)
	}
	return utiltesting.Listed(list, events)
}

// gauges collects c's gauge by its one label.
func gauges(t *testing.T, c prometheus.Collector) map[string]float64 {
	t.Helper()
	ch := make(chan prometheus.Metric, 16)
	c.Collect(ch)
	close(ch)
	out := map[string]float64{}
	for m := range ch {
		var d dto.Metric
		if err := m.Write(&d); err != nil {
			t.Fatal(err)
		}
		out[d.GetLabel()[0].GetValue()] = d.GetGauge().GetValue()
	}
	return out
}
