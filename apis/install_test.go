package apis

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

func TestAddToScheme(t *testing.T) {
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	cases := map[string]schema.GroupVersionKind{
		"Cluster":                      {Group: "cluster.karmada.io", Version: "v1alpha1", Kind: "Cluster"},
		"ClusterList":                  {Group: "cluster.karmada.io", Version: "v1alpha1", Kind: "ClusterList"},
		"PropagationPolicy":            {Group: "policy.karmada.io", Version: "v1alpha1", Kind: "PropagationPolicy"},
		"PropagationPolicyList":        {Group: "policy.karmada.io", Version: "v1alpha1", Kind: "PropagationPolicyList"},
		"ClusterPropagationPolicy":     {Group: "policy.karmada.io", Version: "v1alpha1", Kind: "ClusterPropagationPolicy"},
		"ClusterPropagationPolicyList": {Group: "policy.karmada.io", Version: "v1alpha1", Kind: "ClusterPropagationPolicyList"},
		"OverridePolicy":               {Group: "policy.karmada.io", Version: "v1alpha1", Kind: "OverridePolicy"},
		"OverridePolicyList":           {Group: "policy.karmada.io", Version: "v1alpha1", Kind: "OverridePolicyList"},
		"ClusterOverridePolicy":        {Group: "policy.karmada.io", Version: "v1alpha1", Kind: "ClusterOverridePolicy"},
		"ClusterOverridePolicyList":    {Group: "policy.karmada.io", Version: "v1alpha1", Kind: "ClusterOverridePolicyList"},
		"ResourceBinding":              {Group: "work.karmada.io", Version: "v1alpha2", Kind: "ResourceBinding"},
		"ResourceBindingList":          {Group: "work.karmada.io", Version: "v1alpha2", Kind: "ResourceBindingList"},
		"ClusterResourceBinding":       {Group: "work.karmada.io", Version: "v1alpha2", Kind: "ClusterResourceBinding"},
		"ClusterResourceBindingList":   {Group: "work.karmada.io", Version: "v1alpha2", Kind: "ClusterResourceBindingList"},
		"Tenant":                       {Group: "policy.atoll.dev", Version: "v1alpha1", Kind: "Tenant"},
	}
	for name, gvk := range cases {
		t.Run(name, func(t *testing.T) {
			if !s.Recognizes(gvk) {
				t.Errorf("scheme does not recognize %s", gvk)
			}
		})
	}
	if got, want := len(s.AllKnownTypes()), len(cases); got < want {
		t.Errorf("scheme knows %d types, want at least %d", got, want)
	}
}

// TestExamplesDecodeIntoGoTypes decodes every example object of atoll's API
// groups strictly into its Go type, so a JSON name in the examples (and
// therefore in the CRD schema they are validated against) that the Go types
// spell differently is caught.
func TestExamplesDecodeIntoGoTypes(t *testing.T) {
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	strict := json.NewSerializerWithOptions(json.DefaultMetaFactory, s, s, json.SerializerOptions{Yaml: true, Strict: true})
	paths, err := filepath.Glob(filepath.Join("..", "examples", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	decoded := 0
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
			for {
				doc, err := reader.Read()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				jsonDoc, err := utilyaml.ToJSON(doc)
				if err != nil {
					t.Fatal(err)
				}
				gvk, err := json.DefaultMetaFactory.Interpret(jsonDoc)
				if err != nil {
					t.Fatal(err)
				}
				if !s.Recognizes(*gvk) {
					continue // a built-in kind
				}
				if _, _, err := strict.Decode(doc, nil, nil); err != nil {
					t.Errorf("decoding %s: %v", gvk.Kind, err)
				}
				decoded++
			}
		})
	}
	if decoded == 0 {
		t.Error("no example object of atoll's API groups was decoded")
	}
}
