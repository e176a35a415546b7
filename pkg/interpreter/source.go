package interpreter

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1alpha1 "github.com/atoll-dev/atoll/apis/config/v1alpha1"
	"github.com/atoll-dev/atoll/pkg/controller/indexer"
)

// CacheSource reads customizations from the controller-manager's cache
// through the indexer.CustomizationTarget index.
type CacheSource struct {
	Reader client.Reader
}

// ForKind lists the customizations targeting gvk.
func (s CacheSource) ForKind(ctx context.Context, gvk schema.GroupVersionKind) ([]configv1alpha1.ResourceInterpreterCustomization, error) {
	var l configv1alpha1.ResourceInterpreterCustomizationList
	// The items are only read (lookupAll): not copied out of the cache.
	if err := s.Reader.List(ctx, &l, client.MatchingFields{indexer.CustomizationTarget: indexer.TargetKey(gvk)}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	return l.Items, nil
}
