package crd

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	"sigs.k8s.io/yaml"
)

// loadCRDs parses every embedded manifest, keyed by CRD name.
func loadCRDs(t *testing.T) map[string]*apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	files, err := Files()
	if err != nil {
		t.Fatal(err)
	}
	crds := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, f := range files {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(f.Data, crd); err != nil {
			t.Fatalf("parsing %s: %v", f.Name, err)
		}
		if want := crd.Spec.Group + "_" + crd.Spec.Names.Plural + ".yaml"; f.Name != want {
			t.Errorf("file %s holds CRD %s, want file name %s", f.Name, crd.Name, want)
		}
		crds[crd.Name] = crd
	}
	return crds
}

func TestFilesAreSortedAndComplete(t *testing.T) {
	files, err := Files()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, f.Name)
	}
	want := []string{
		"apps.atoll.dev_clusterbaselines.yaml",
		"apps.atoll.dev_rebalances.yaml",
		"cluster.karmada.io_clusters.yaml",
		"config.karmada.io_resourceinterpretercustomizations.yaml",
		"policy.atoll.dev_tenants.yaml",
		"policy.karmada.io_clusteroverridepolicies.yaml",
		"policy.karmada.io_clusterpropagationpolicies.yaml",
		"policy.karmada.io_overridepolicies.yaml",
		"policy.karmada.io_propagationpolicies.yaml",
		"work.karmada.io_clusterresourcebindings.yaml",
		"work.karmada.io_resourcebindings.yaml",
	}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("embedded CRD files (-want +got):\n%s", diff)
	}
	docs, err := All()
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != len(files) {
		t.Errorf("All() returned %d documents, Files() %d", len(docs), len(files))
	}
}

func TestCRDNames(t *testing.T) {
	type want struct {
		group          string
		kind           string
		scope          apiextensionsv1.ResourceScope
		shortNames     []string
		categories     []string
		version        string
		status         bool
		printerColumns []string
	}
	cases := map[string]want{
		"clusterbaselines.apps.atoll.dev": {
			group: "apps.atoll.dev", kind: "ClusterBaseline", scope: apiextensionsv1.ClusterScoped,
			shortNames: []string{"cbl"}, categories: []string{"atoll"}, version: "v1alpha1", status: true,
			printerColumns: []string{"READY-CLUSTERS", "COMPONENTS", "AGE"},
		},
		"rebalances.apps.atoll.dev": {
			group: "apps.atoll.dev", kind: "Rebalance", scope: apiextensionsv1.NamespaceScoped,
			shortNames: []string{"rbl"}, categories: []string{"atoll"}, version: "v1alpha1", status: true,
			printerColumns: []string{"WORKLOAD", "PHASE", "STEP", "PROGRESS", "FROM", "TO", "AGE"},
		},
		"clusters.cluster.karmada.io": {
			group: "cluster.karmada.io", kind: "Cluster", scope: apiextensionsv1.ClusterScoped,
			version: "v1alpha1", status: true,
			printerColumns: []string{"VERSION", "MODE", "READY", "AGE"},
		},
		"resourceinterpretercustomizations.config.karmada.io": {
			group: "config.karmada.io", kind: "ResourceInterpreterCustomization", scope: apiextensionsv1.ClusterScoped,
			shortNames: []string{"ric"}, categories: []string{"karmada-io"}, version: "v1alpha1",
			printerColumns: []string{"TARGET-API-VERSION", "TARGET-KIND", "AGE"},
		},
		"propagationpolicies.policy.karmada.io": {
			group: "policy.karmada.io", kind: "PropagationPolicy", scope: apiextensionsv1.NamespaceScoped,
			shortNames: []string{"pp"}, categories: []string{"karmada-io"}, version: "v1alpha1",
			printerColumns: []string{"CONFLICT-RESOLUTION", "PRIORITY", "AGE"},
		},
		"clusterpropagationpolicies.policy.karmada.io": {
			group: "policy.karmada.io", kind: "ClusterPropagationPolicy", scope: apiextensionsv1.ClusterScoped,
			shortNames: []string{"cpp"}, categories: []string{"karmada-io"}, version: "v1alpha1",
			printerColumns: []string{"CONFLICT-RESOLUTION", "PRIORITY", "AGE"},
		},
		"overridepolicies.policy.karmada.io": {
			group: "policy.karmada.io", kind: "OverridePolicy", scope: apiextensionsv1.NamespaceScoped,
			shortNames: []string{"op"}, categories: []string{"karmada-io"}, version: "v1alpha1",
		},
		"tenants.policy.atoll.dev": {
			group: "policy.atoll.dev", kind: "Tenant", scope: apiextensionsv1.ClusterScoped,
			shortNames: []string{"tnt"}, categories: []string{"atoll"}, version: "v1alpha1", status: true,
			printerColumns: []string{"NAMESPACES", "CLUSTERS", "READY", "AGE"},
		},
		"clusteroverridepolicies.policy.karmada.io": {
			group: "policy.karmada.io", kind: "ClusterOverridePolicy", scope: apiextensionsv1.ClusterScoped,
			shortNames: []string{"cop"}, categories: []string{"karmada-io"}, version: "v1alpha1",
		},
		"resourcebindings.work.karmada.io": {
			group: "work.karmada.io", kind: "ResourceBinding", scope: apiextensionsv1.NamespaceScoped,
			shortNames: []string{"rb"}, categories: []string{"karmada-io"}, version: "v1alpha2", status: true,
			printerColumns: []string{"SCHEDULED", "FULLYAPPLIED", "AGE"},
		},
		"clusterresourcebindings.work.karmada.io": {
			group: "work.karmada.io", kind: "ClusterResourceBinding", scope: apiextensionsv1.ClusterScoped,
			shortNames: []string{"crb"}, categories: []string{"karmada-io"}, version: "v1alpha2", status: true,
			printerColumns: []string{"SCHEDULED", "FULLYAPPLIED", "AGE"},
		},
	}
	crds := loadCRDs(t)
	if len(crds) != len(cases) {
		t.Errorf("got %d CRDs, want %d", len(crds), len(cases))
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			crd, ok := crds[name]
			if !ok {
				t.Fatalf("CRD %s is not embedded", name)
			}
			if len(crd.Spec.Versions) != 1 {
				t.Fatalf("got %d versions, want exactly 1", len(crd.Spec.Versions))
			}
			v := crd.Spec.Versions[0]
			var columns []string
			for _, c := range v.AdditionalPrinterColumns {
				columns = append(columns, c.Name)
			}
			got := want{
				group:          crd.Spec.Group,
				kind:           crd.Spec.Names.Kind,
				scope:          crd.Spec.Scope,
				shortNames:     crd.Spec.Names.ShortNames,
				categories:     crd.Spec.Names.Categories,
				version:        v.Name,
				status:         v.Subresources != nil && v.Subresources.Status != nil,
				printerColumns: columns,
			}
			if diff := cmp.Diff(tc, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("CRD %s (-want +got):\n%s", name, diff)
			}
			if !v.Served || !v.Storage {
				t.Errorf("version %s: served=%v storage=%v, want both true", v.Name, v.Served, v.Storage)
			}
			if crd.Spec.Conversion != nil && crd.Spec.Conversion.Strategy != apiextensionsv1.NoneConverter {
				t.Errorf("conversion strategy %s, want None", crd.Spec.Conversion.Strategy)
			}
		})
	}
}

// schemaAt walks a schema along property names; "[]" steps into array items.
func schemaAt(t *testing.T, s *apiextensionsv1.JSONSchemaProps, path ...string) *apiextensionsv1.JSONSchemaProps {
	t.Helper()
	for i, p := range path {
		if p == "[]" {
			if s.Items == nil || s.Items.Schema == nil {
				t.Fatalf("%s is not an array", strings.Join(path[:i], "."))
			}
			s = s.Items.Schema
			continue
		}
		next, ok := s.Properties[p]
		if !ok {
			t.Fatalf("schema has no field %s", strings.Join(path[:i+1], "."))
		}
		s = &next
	}
	return s
}

func TestSchemaDefaults(t *testing.T) {
	crds := loadCRDs(t)
	type defaultCase struct {
		crd  string
		path []string
		want string // JSON
	}
	propagationDefaults := func(crd string) map[string]defaultCase {
		return map[string]defaultCase{
			crd + " conflictResolution":            {crd, []string{"spec", "conflictResolution"}, `"Abort"`},
			crd + " preemption":                    {crd, []string{"spec", "preemption"}, `"Never"`},
			crd + " priority":                      {crd, []string{"spec", "priority"}, `0`},
			crd + " schedulerName":                 {crd, []string{"spec", "schedulerName"}, `"default-scheduler"`},
			crd + " replicaSchedulingType":         {crd, []string{"spec", "placement", "replicaScheduling", "replicaSchedulingType"}, `"Divided"`},
			crd + " spreadConstraints minGroups":   {crd, []string{"spec", "placement", "spreadConstraints", "[]", "minGroups"}, `1`},
			crd + " application purgeMode":         {crd, []string{"spec", "failover", "application", "purgeMode"}, `"Gracefully"`},
			crd + " application tolerationSeconds": {crd, []string{"spec", "failover", "application", "decisionConditions", "tolerationSeconds"}, `300`},
			crd + " cluster purgeMode":             {crd, []string{"spec", "failover", "cluster", "purgeMode"}, `"Gracefully"`},
		}
	}
	cases := map[string]defaultCase{}
	for _, crd := range []string{"propagationpolicies.policy.karmada.io", "clusterpropagationpolicies.policy.karmada.io"} {
		for k, v := range propagationDefaults(crd) {
			cases[k] = v
		}
	}
	for _, crd := range []string{"resourcebindings.work.karmada.io", "clusterresourcebindings.work.karmada.io"} {
		cases[crd+" conflictResolution"] = defaultCase{crd, []string{"spec", "conflictResolution"}, `"Abort"`}
		cases[crd+" schedulePriority"] = defaultCase{crd, []string{"spec", "schedulePriority", "priority"}, `0`}
		cases[crd+" placement minGroups"] = defaultCase{crd, []string{"spec", "placement", "spreadConstraints", "[]", "minGroups"}, `1`}
		cases[crd+" failover purgeMode"] = defaultCase{crd, []string{"spec", "failover", "application", "purgeMode"}, `"Gracefully"`}
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := schemaAt(t, crds[tc.crd].Spec.Versions[0].Schema.OpenAPIV3Schema, tc.path...)
			if s.Default == nil {
				t.Fatalf("%s has no default, want %s", strings.Join(tc.path, "."), tc.want)
			}
			if got := string(s.Default.Raw); got != tc.want {
				t.Errorf("%s default = %s, want %s", strings.Join(tc.path, "."), got, tc.want)
			}
		})
	}
}

func TestEnums(t *testing.T) {
	crds := loadCRDs(t)
	pp := crds["propagationpolicies.policy.karmada.io"].Spec.Versions[0].Schema.OpenAPIV3Schema
	rb := crds["resourcebindings.work.karmada.io"].Spec.Versions[0].Schema.OpenAPIV3Schema
	cluster := crds["clusters.cluster.karmada.io"].Spec.Versions[0].Schema.OpenAPIV3Schema
	cases := map[string]struct {
		schema *apiextensionsv1.JSONSchemaProps
		path   []string
		want   []string
	}{
		"application purgeMode accepts the deprecated spellings": {
			pp, []string{"spec", "failover", "application", "purgeMode"},
			[]string{"Directly", "Gracefully", "Never", "Immediately", "Graciously"},
		},
		"cluster purgeMode": {pp, []string{"spec", "failover", "cluster", "purgeMode"}, []string{"Directly", "Gracefully", "Never", "Immediately", "Graciously"}},
		"eviction task purgeMode": {
			rb, []string{"spec", "gracefulEvictionTasks", "[]", "purgeMode"},
			[]string{"Directly", "Gracefully", "Never", "Immediately", "Graciously"},
		},
		"replicaSchedulingType":     {pp, []string{"spec", "placement", "replicaScheduling", "replicaSchedulingType"}, []string{"Duplicated", "Divided"}},
		"replicaDivisionPreference": {pp, []string{"spec", "placement", "replicaScheduling", "replicaDivisionPreference"}, []string{"Aggregated", "Weighted"}},
		"dynamicWeight":             {pp, []string{"spec", "placement", "replicaScheduling", "weightPreference", "dynamicWeight"}, []string{"AvailableReplicas"}},
		"spreadByField":             {pp, []string{"spec", "placement", "spreadConstraints", "[]", "spreadByField"}, []string{"cluster", "region", "zone", "provider"}},
		"conflictResolution":        {pp, []string{"spec", "conflictResolution"}, []string{"Abort", "Overwrite"}},
		"preemption":                {pp, []string{"spec", "preemption"}, []string{"Always", "Never"}},
		"activationPreference":      {pp, []string{"spec", "activationPreference"}, []string{"", "Lazy"}},
		"priorityClassSource":       {pp, []string{"spec", "schedulePriority", "priorityClassSource"}, []string{"KubePriorityClass"}},
		"aggregated health":         {rb, []string{"status", "aggregatedStatus", "[]", "health"}, []string{"Healthy", "Unhealthy", "Unknown"}},
		"syncMode":                  {cluster, []string{"spec", "syncMode"}, []string{"Push", "Pull"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := schemaAt(t, tc.schema, tc.path...)
			var got []string
			for _, e := range s.Enum {
				var v string
				if err := yaml.Unmarshal(e.Raw, &v); err != nil {
					t.Fatalf("enum value %s: %v", e.Raw, err)
				}
				got = append(got, v)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("enum of %s (-want +got):\n%s", strings.Join(tc.path, "."), diff)
			}
		})
	}
}

// TestCRDsPassAPIServerValidation runs the kube-apiserver's own CRD
// validation, which compiles every CEL rule and rejects a CRD whose rules
// could exceed the CEL cost budget.
func TestCRDsPassAPIServerValidation(t *testing.T) {
	for name, crd := range loadCRDs(t) {
		t.Run(name, func(t *testing.T) {
			internal := toInternal(t, crd)
			if errs := apiextensionsvalidation.ValidateCustomResourceDefinition(context.Background(), internal); len(errs) > 0 {
				t.Errorf("the API server would reject %s:\n%v", name, errs.ToAggregate())
			}
		})
	}
}

func toInternal(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition) *apiextensions.CustomResourceDefinition {
	t.Helper()
	crd = crd.DeepCopy()
	apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(crd)
	internal := &apiextensions.CustomResourceDefinition{}
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(crd, internal, nil); err != nil {
		t.Fatalf("converting %s: %v", crd.Name, err)
	}
	return internal
}
