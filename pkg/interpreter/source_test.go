package interpreter

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"

	configv1alpha1 "github.com/atoll-dev/atoll/apis/config/v1alpha1"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
)

var (
	deploymentKind = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	configMapKind  = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
)

func customization(name, apiVersion, kind string) *configv1alpha1.ResourceInterpreterCustomization {
	return &configv1alpha1.ResourceInterpreterCustomization{
		ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1"},
		Spec: configv1alpha1.ResourceInterpreterCustomizationSpec{
			Target: configv1alpha1.CustomizationTarget{APIVersion: apiVersion, Kind: kind},
		},
	}
}

// TestInformerSourceFollowsTheCustomizations: what ForKind returns follows
// the informer's list and events, by kind and sorted by name.
func TestInformerSourceFollowsTheCustomizations(t *testing.T) {
	cases := map[string]struct {
		listed []*configv1alpha1.ResourceInterpreterCustomization
		events []watch.Event
		want   map[schema.GroupVersionKind][]string
	}{
		"none": {
			want: map[schema.GroupVersionKind][]string{deploymentKind: nil, configMapKind: nil},
		},
		"listed, by name": {
			listed: []*configv1alpha1.ResourceInterpreterCustomization{
				customization("b", "apps/v1", "Deployment"), customization("a", "apps/v1", "Deployment"), customization("c", "v1", "ConfigMap"),
			},
			want: map[schema.GroupVersionKind][]string{deploymentKind: {"a", "b"}, configMapKind: {"c"}},
		},
		"added": {
			listed: []*configv1alpha1.ResourceInterpreterCustomization{customization("b", "apps/v1", "Deployment")},
			events: []watch.Event{{Type: watch.Added, Object: customization("a", "apps/v1", "Deployment")}},
			want:   map[schema.GroupVersionKind][]string{deploymentKind: {"a", "b"}, configMapKind: nil},
		},
		"retargeted": {
			listed: []*configv1alpha1.ResourceInterpreterCustomization{
				customization("a", "apps/v1", "Deployment"), customization("b", "apps/v1", "Deployment"),
			},
			events: []watch.Event{{Type: watch.Modified, Object: customization("a", "v1", "ConfigMap")}},
			want:   map[schema.GroupVersionKind][]string{deploymentKind: {"b"}, configMapKind: {"a"}},
		},
		"deleted": {
			listed: []*configv1alpha1.ResourceInterpreterCustomization{
				customization("a", "apps/v1", "Deployment"), customization("b", "v1", "ConfigMap"),
			},
			events: []watch.Event{{Type: watch.Deleted, Object: customization("a", "apps/v1", "Deployment")}},
			want:   map[schema.GroupVersionKind][]string{deploymentKind: nil, configMapKind: {"b"}},
		},
		"a target that is no API version": {
			listed: []*configv1alpha1.ResourceInterpreterCustomization{
				customization("a", "apps/v1/extra", "Deployment"), customization("b", "apps/v1", "Deployment"),
			},
			events: []watch.Event{{Type: watch.Modified, Object: customization("b", "a/b/c", "Deployment")}},
			want:   map[schema.GroupVersionKind][]string{deploymentKind: nil, configMapKind: nil},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			events := watch.NewFake()
			inf := toolscache.NewSharedIndexInformer(customizationsListed(tc.listed, events), &configv1alpha1.ResourceInterpreterCustomization{}, 0, toolscache.Indexers{})
			s, err := NewInformerSource(inf)
			if err != nil {
				t.Fatal(err)
			}
			go inf.RunWithContext(ctx)
			for _, e := range tc.events {
				events.Action(e.Type, e.Object)
			}
			// The events reach the handlers in the background; wait for
			// them, bounded (a failure shows the last answer).
			var got map[schema.GroupVersionKind][]string
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				if got = namesByKind(t, s, tc.want); cmp.Equal(got, tc.want) {
					return
				}
			}
			t.Errorf("ForKind (-want +got):\n%s", cmp.Diff(tc.want, got))
		})
	}
}

// TestInformerSourceWaitsForTheFirstList: before the informer has listed,
// ForKind waits instead of answering that there is no customization.
func TestInformerSourceWaitsForTheFirstList(t *testing.T) {
	inf := toolscache.NewSharedIndexInformer(customizationsListed(nil, watch.NewFake()), &configv1alpha1.ResourceInterpreterCustomization{}, 0, toolscache.Indexers{})
	s, err := NewInformerSource(inf)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the informer never runs: ForKind must not answer
	if got, err := s.ForKind(ctx, deploymentKind); !errors.Is(err, context.Canceled) {
		t.Errorf("ForKind before the first list = %v, %v; want context.Canceled", got, err)
	}
}

func namesByKind(t *testing.T, s *InformerSource, kinds map[schema.GroupVersionKind][]string) map[schema.GroupVersionKind][]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out := map[schema.GroupVersionKind][]string{}
	for gvk := range kinds {
		list, err := s.ForKind(ctx, gvk)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, c := range list {
			names = append(names, c.Name)
		}
		out[gvk] = slices.Clip(names)
	}
	return out
}

// customizationsListed lists customizations, then watches events.
func customizationsListed(listed []*configv1alpha1.ResourceInterpreterCustomization, events watch.Interface) toolscache.ListerWatcher {
	list := &configv1alpha1.ResourceInterpreterCustomizationList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}
	for _, c := range listed {
		list.Items = append(list.Items, *c)
	}
	return utiltesting.Listed(list, events)
}
