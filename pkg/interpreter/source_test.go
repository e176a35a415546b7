package interpreter

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"

	configv1alpha1 "github.com/atoll-dev/atoll/apis/config/v1alpha1"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
)

var (
	deploymentKind = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	rolloutKind    = schema.GroupVersionKind{Group: "apps.example.io", Version: "v1alpha1", Kind: "Rollout"}
)

func customization(name, resourceVersion, apiVersion, kind string) *configv1alpha1.ResourceInterpreterCustomization {
	return &configv1alpha1.ResourceInterpreterCustomization{
		ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: resourceVersion},
		Spec: configv1alpha1.ResourceInterpreterCustomizationSpec{
			Target: configv1alpha1.CustomizationTarget{APIVersion: apiVersion, Kind: kind},
		},
	}
}

// indexSource runs an informer over listed and events, indexed for an
// IndexSource; handler (if any) hears its events.
func indexSource(t *testing.T, ctx context.Context, listed []*configv1alpha1.ResourceInterpreterCustomization, events watch.Interface,
	handler toolscache.ResourceEventHandler) *IndexSource {
	t.Helper()
	list := &configv1alpha1.ResourceInterpreterCustomizationList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}
	for _, c := range listed {
		list.Items = append(list.Items, *c)
	}
	inf := toolscache.NewSharedIndexInformer(utiltesting.Listed(list, events), &configv1alpha1.ResourceInterpreterCustomization{}, 0, toolscache.Indexers{})
	src, err := NewIndexSource(inf)
	if err != nil {
		t.Fatal(err)
	}
	if handler != nil {
		if _, err := inf.AddEventHandler(handler); err != nil {
			t.Fatal(err)
		}
	}
	go inf.RunWithContext(ctx)
	return src
}

func TestIndexSourceForKind(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	src := indexSource(t, ctx, []*configv1alpha1.ResourceInterpreterCustomization{
		customization("deploy-b", "2", "apps/v1", "Deployment"),
		customization("deploy-a", "3", "apps/v1", "Deployment"),
		customization("rollout", "4", "apps.example.io/v1alpha1", "Rollout"),
		customization("bad-version", "5", "apps/v1/extra", "Deployment"),
	}, watch.NewFake(), nil)
	cases := map[string]struct {
		gvk  schema.GroupVersionKind
		want []string
	}{
		"two for one kind":          {gvk: deploymentKind, want: []string{"deploy-a", "deploy-b"}},
		"one for another":           {gvk: rolloutKind, want: []string{"rollout"}},
		"same kind, other version":  {gvk: schema.GroupVersionKind{Group: "apps", Version: "v1beta1", Kind: "Deployment"}},
		"a kind nothing customizes": {gvk: schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			// ForKind waits for the informer's list (the first case).
			got, err := src.ForKind(ctx, tc.gvk)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, c := range got {
				names = append(names, c.Name)
			}
			slices.Sort(names)
			if !slices.Equal(names, tc.want) {
				t.Errorf("ForKind(%s) = %v, want %v", tc.gvk, names, tc.want)
			}
		})
	}
}

// The index follows the informer's events: a customization that changes
// its target is found under the new kind only, and one whose target
// becomes no API version under none.
func TestIndexSourceFollowsTargetChanges(t *testing.T) {
	cases := map[string]struct {
		listed []*configv1alpha1.ResourceInterpreterCustomization
		event  *configv1alpha1.ResourceInterpreterCustomization
		want   map[schema.GroupVersionKind]string // "" for none
	}{
		"retargeted": {
			listed: []*configv1alpha1.ResourceInterpreterCustomization{customization("a", "2", "apps/v1", "Deployment")},
			event:  customization("a", "3", "apps.example.io/v1alpha1", "Rollout"),
			want:   map[schema.GroupVersionKind]string{deploymentKind: "", rolloutKind: "a"},
		},
		"target no longer an API version": {
			listed: []*configv1alpha1.ResourceInterpreterCustomization{customization("a", "2", "apps/v1", "Deployment")},
			event:  customization("a", "3", "a/b/c", "Deployment"),
			want:   map[schema.GroupVersionKind]string{deploymentKind: "", rolloutKind: ""},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			events := watch.NewFake()
			src := indexSource(t, ctx, tc.listed, events, nil)
			if _, err := src.ForKind(ctx, deploymentKind); err != nil {
				t.Fatal(err)
			}
			events.Modify(tc.event)
			// The event reaches the store in the background; wait for it,
			// bounded (a failure shows the last answer).
			var got map[schema.GroupVersionKind]string
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				got = map[schema.GroupVersionKind]string{}
				for gvk := range tc.want {
					list, err := src.ForKind(ctx, gvk)
					if err != nil {
						t.Fatal(err)
					}
					got[gvk] = ""
					for _, c := range list {
						got[gvk] += c.Name
					}
				}
				if maps.Equal(got, tc.want) {
					return
				}
			}
			t.Errorf("ForKind = %v, want %v", got, tc.want)
		})
	}
}

// A handler that hears of a customization's change must find the change
// in the source: a binding that the handler enqueues is interpreted with
// it (the handler-fed map of design 0013 decision 31 failed this).
func TestIndexSourceHoldsWhatHandlersHear(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events := watch.NewFake()
	// found is the resourceVersion the source holds when the handler
	// hears of resourceVersion heard; -1 for none.
	type seen struct{ heard, found int }
	seenCh := make(chan seen, 8)
	var src *IndexSource
	ready := make(chan struct{})
	lookup := func() int {
		got, err := src.ForKind(ctx, deploymentKind)
		if err != nil || len(got) != 1 {
			return -1
		}
		rv, _ := strconv.Atoi(got[0].ResourceVersion)
		return rv
	}
	handler := toolscache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) {
			<-ready
			heard, _ := strconv.Atoi(obj.(*configv1alpha1.ResourceInterpreterCustomization).ResourceVersion)
			seenCh <- seen{heard: heard, found: lookup()}
		},
		DeleteFunc: func(any) {
			<-ready
			seenCh <- seen{heard: -1, found: lookup()}
		},
	}
	src = indexSource(t, ctx, []*configv1alpha1.ResourceInterpreterCustomization{customization("deploy", "2", "apps/v1", "Deployment")}, events, handler)
	close(ready)
	if _, err := src.ForKind(ctx, deploymentKind); err != nil {
		t.Fatal(err)
	}
	events.Modify(customization("deploy", "3", "apps/v1", "Deployment"))
	events.Modify(customization("deploy", "4", "apps/v1", "Deployment"))
	events.Delete(customization("deploy", "5", "apps/v1", "Deployment"))
	for _, heard := range []int{3, 4, -1} {
		select {
		case got := <-seenCh:
			// The store may already hold a later event when a handler
			// runs, never an earlier state; after the delete, nothing.
			if got.heard != heard || (heard > 0 && got.found < heard && got.found != -1) || (heard < 0 && got.found != -1) {
				t.Errorf("heard %d, the source held %d; want what was heard or later", got.heard, got.found)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("event %d not heard", heard)
		}
	}
}

func TestIndexSourceWaitsForTheList(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	inf := toolscache.NewSharedIndexInformer(utiltesting.Listed(&configv1alpha1.ResourceInterpreterCustomizationList{}, watch.NewFake()),
		&configv1alpha1.ResourceInterpreterCustomization{}, 0, toolscache.Indexers{})
	src, err := NewIndexSource(inf)
	if err != nil {
		t.Fatal(err)
	}
	cancel() // never started, given up on
	if got, err := src.ForKind(ctx, deploymentKind); err == nil {
		t.Errorf("ForKind before the list = %v, nil; want an error, not an empty answer", got)
	}
}
