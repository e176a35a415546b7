// Package crdinstall installs CustomResourceDefinitions with server-side
// apply and waits until the API server serves them.
package crdinstall

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

// FieldManager owns the fields atoll applies.
const FieldManager = "atoll"

// Apply applies every CRD document in docs and waits until each one is
// Established. An unchanged CRD is not written: server-side apply of
// identical content is a no-op on the server.
func Apply(ctx context.Context, cfg *rest.Config, docs [][]byte) error {
	client, err := clientset.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("building apiextensions client: %w", err)
	}
	names := make([]string, 0, len(docs))
	var served []servedResource
	for _, doc := range docs {
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.UnmarshalStrict(doc, &crd); err != nil {
			return fmt.Errorf("decoding embedded CRD: %w", err)
		}
		crd.TypeMeta = metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"}
		body, err := json.Marshal(&crd)
		if err != nil {
			return fmt.Errorf("encoding CRD %s: %w", crd.Name, err)
		}
		force := true
		if _, err := client.ApiextensionsV1().CustomResourceDefinitions().Patch(ctx, crd.Name, types.ApplyPatchType, body,
			metav1.PatchOptions{FieldManager: FieldManager, Force: &force}); err != nil {
			return fmt.Errorf("applying CRD %s: %w", crd.Name, err)
		}
		names = append(names, crd.Name)
		for _, v := range crd.Spec.Versions {
			if v.Served {
				served = append(served, servedResource{groupVersion: crd.Spec.Group + "/" + v.Name, plural: crd.Spec.Names.Plural})
			}
		}
	}
	for _, name := range names {
		if err := waitEstablished(ctx, client, name); err != nil {
			return err
		}
	}
	// Established is not yet discoverable: clients that build a REST
	// mapper right after (the controller-manager) would not find the kinds.
	for _, r := range served {
		if err := waitDiscoverable(ctx, client, r); err != nil {
			return err
		}
	}
	return nil
}

// servedResource is one resource a CRD serves, as discovery lists it.
type servedResource struct {
	groupVersion, plural string
}

func waitDiscoverable(ctx context.Context, client clientset.Interface, r servedResource) error {
	var last string
	err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(context.Context) (bool, error) {
		list, err := client.Discovery().ServerResourcesForGroupVersion(r.groupVersion)
		if err != nil {
			last = err.Error()
			return false, nil
		}
		for _, res := range list.APIResources {
			if res.Name == r.plural {
				return true, nil
			}
		}
		last = "not in discovery yet"
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %s in %s to be discoverable: %w (%s)", r.plural, r.groupVersion, err, last)
	}
	return nil
}

func waitEstablished(ctx context.Context, client clientset.Interface, name string) error {
	var last string
	err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		crd, err := client.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		for _, c := range crd.Status.Conditions {
			switch {
			case c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue:
				return true, nil
			case c.Type == apiextensionsv1.NamesAccepted && c.Status == apiextensionsv1.ConditionFalse:
				return false, fmt.Errorf("CRD %s: names not accepted: %s", name, c.Message)
			}
		}
		last = "not yet established"
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for CRD %s: %w (%s)", name, err, last)
	}
	return nil
}
