package crd

import (
	"bufio"
	"bytes"
	"context"
	stdjson "encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structurallisttype "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
)

// offlineValidator checks custom resources the way the kube-apiserver's
// custom resource handler does, using the same apiextensions-apiserver code:
// prune unknown fields, default, validate the OpenAPI schema and list types,
// then run the CEL rules unless an earlier error blocks them. It does not
// validate metadata beyond what the schema and CEL rules check, and it does
// not run admission.
type offlineValidator struct {
	// statusSubresource is true when the CRD has a status subresource, in
	// which case a create ignores the object's status.
	statusSubresource bool
	structural        *structuralschema.Structural
	schema            apiservervalidation.SchemaValidator
	cel               *cel.Validator
}

func newOfflineValidators(t *testing.T) map[schema.GroupKind]*offlineValidator {
	t.Helper()
	validators := map[schema.GroupKind]*offlineValidator{}
	for name, crd := range loadCRDs(t) {
		internal := toInternal(t, crd)
		var props *apiextensions.JSONSchemaProps
		if internal.Spec.Validation != nil {
			props = internal.Spec.Validation.OpenAPIV3Schema
		} else {
			props = internal.Spec.Versions[0].Schema.OpenAPIV3Schema
		}
		structural, err := structuralschema.NewStructural(props)
		if err != nil {
			t.Fatalf("structural schema of %s: %v", name, err)
		}
		schemaValidator, _, err := apiservervalidation.NewSchemaValidator(props)
		if err != nil {
			t.Fatalf("schema validator of %s: %v", name, err)
		}
		gk := schema.GroupKind{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind}
		validators[gk] = &offlineValidator{
			statusSubresource: internal.Spec.Subresources != nil && internal.Spec.Subresources.Status != nil,
			structural:        structural,
			schema:            schemaValidator,
			cel:               cel.NewValidator(structural, true, celconfig.PerCallLimit),
		}
	}
	return validators
}

// validateCreate validates obj as a create request: the status of a kind
// with a status subresource is ignored, as the API server resets it.
func (v *offlineValidator) validateCreate(obj map[string]interface{}) (unknown []string, errs field.ErrorList) {
	if v.statusSubresource {
		delete(obj, "status")
	}
	return v.validate(obj)
}

// validate defaults obj in place and returns the fields the API server would
// drop as unknown and the validation errors it would report, for a create or
// update of the whole object including its status.
func (v *offlineValidator) validate(obj map[string]interface{}) (unknown []string, errs field.ErrorList) {
	unknown = structuralpruning.PruneWithOptions(obj, v.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(obj, v.structural)
	structuraldefaulting.Default(obj, v.structural)

	errs = append(errs, apiservervalidation.ValidateCustomResource(nil, obj, v.schema)...)
	errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, v.structural, obj)...)
	for _, err := range errs {
		switch err.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			// The API server skips the CEL rules after these errors.
			return unknown, errs
		}
	}
	celErrs, _ := v.cel.Validate(context.Background(), nil, v.structural, obj, nil, celconfig.RuntimeCELCostBudget)
	return unknown, append(errs, celErrs...)
}

// readDocuments splits a YAML file into its non-empty documents.
func readDocuments(t *testing.T, path string) []map[string]interface{} {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs []map[string]interface{}
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("reading %s: %v", path, err)
		}
		// Decode like the API server does, so that integers stay int64.
		jsonDoc, err := yaml.YAMLToJSON(doc)
		if err != nil {
			t.Fatalf("parsing %s: %v", path, err)
		}
		obj := map[string]interface{}{}
		if err := utiljson.Unmarshal(jsonDoc, &obj); err != nil {
			t.Fatalf("parsing %s: %v", path, err)
		}
		if len(obj) > 0 {
			docs = append(docs, obj)
		}
	}
	return docs
}

func groupKindOf(obj map[string]interface{}) schema.GroupKind {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	return schema.FromAPIVersionAndKind(apiVersion, kind).GroupKind()
}

// builtinKinds are the built-in kinds the examples use, parsed strictly into
// their Go types to catch misspelt fields.
var builtinKinds = map[schema.GroupKind]func() interface{}{
	{Kind: "Namespace"}:                                              func() interface{} { return &corev1.Namespace{} },
	{Kind: "ConfigMap"}:                                              func() interface{} { return &corev1.ConfigMap{} },
	{Kind: "Service"}:                                                func() interface{} { return &corev1.Service{} },
	{Group: "apps", Kind: "Deployment"}:                              func() interface{} { return &appsv1.Deployment{} },
	{Group: "apps", Kind: "DaemonSet"}:                               func() interface{} { return &appsv1.DaemonSet{} },
	{Kind: "ServiceAccount"}:                                         func() interface{} { return &corev1.ServiceAccount{} },
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:        func() interface{} { return &rbacv1.ClusterRole{} },
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}: func() interface{} { return &rbacv1.ClusterRoleBinding{} },
	{Group: "scheduling.k8s.io", Kind: "PriorityClass"}:              func() interface{} { return &schedulingv1.PriorityClass{} },
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}: func() interface{} {
		return &apiextensionsv1.CustomResourceDefinition{}
	},
}

// exampleKinds are the kinds the CustomResourceDefinitions of one example
// file define: their objects (an operator's custom resources) are checked
// for a name only.
func exampleKinds(t *testing.T, docs []map[string]interface{}) map[schema.GroupKind]bool {
	t.Helper()
	out := map[schema.GroupKind]bool{}
	for _, obj := range docs {
		if groupKindOf(obj) != (schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}) {
			continue
		}
		group, kind := stringAt(obj, "spec", "group"), stringAt(obj, "spec", "names", "kind")
		out[schema.GroupKind{Group: group, Kind: kind}] = true
	}
	return out
}

// stringAt is the string at path in obj ("" when there is none).
func stringAt(obj map[string]interface{}, path ...string) string {
	var cur interface{} = obj
	for _, p := range path {
		m, ok := cur.(map[string]interface{})
		if !ok {
			return ""
		}
		cur = m[p]
	}
	s, _ := cur.(string)
	return s
}

func TestExamplesAreValid(t *testing.T) {
	validators := newOfflineValidators(t)
	paths, err := filepath.Glob(filepath.Join("..", "..", "examples", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no examples found")
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			docs := readDocuments(t, path)
			if len(docs) == 0 {
				t.Fatal("no objects in file")
			}
			defined := exampleKinds(t, docs)
			for i, obj := range docs {
				gk := groupKindOf(obj)
				if defined[gk] {
					if stringAt(obj, "metadata", "name") == "" {
						t.Errorf("object %d (%s) has no name", i, gk)
					}
					continue
				}
				if newObj, ok := builtinKinds[gk]; ok {
					raw, err := yaml.Marshal(obj)
					if err != nil {
						t.Fatal(err)
					}
					if err := yaml.UnmarshalStrict(raw, newObj()); err != nil {
						t.Errorf("object %d (%s): %v", i, gk, err)
					}
					continue
				}
				v, ok := validators[gk]
				if !ok {
					t.Errorf("object %d has kind %s, which neither a CRD nor this test knows", i, gk)
					continue
				}
				unknown, errs := v.validateCreate(obj)
				if len(unknown) > 0 {
					t.Errorf("object %d (%s): unknown fields %v", i, gk, unknown)
				}
				if len(errs) > 0 {
					t.Errorf("object %d (%s) is invalid: %v", i, gk, errs.ToAggregate())
				}
			}
		})
	}
}

func TestInvalidManifestsAreRejected(t *testing.T) {
	validators := newOfflineValidators(t)
	paths, err := filepath.Glob(filepath.Join("..", "..", "test", "testdata", "invalid", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no invalid manifests found")
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			want := expectedSubstring(t, path)
			docs := readDocuments(t, path)
			if len(docs) != 1 {
				t.Fatalf("got %d objects, want exactly 1 per file", len(docs))
			}
			obj := docs[0]
			gk := groupKindOf(obj)
			v, ok := validators[gk]
			if !ok {
				t.Fatalf("kind %s has no CRD", gk)
			}
			unknown, errs := v.validateCreate(obj)
			if len(unknown) > 0 {
				t.Errorf("unknown fields %v: an invalid manifest must fail for its stated reason only", unknown)
			}
			if len(errs) == 0 {
				t.Fatalf("accepted, want an error containing %q", want)
			}
			got := errs.ToAggregate().Error()
			t.Logf("rejected: %s", got)
			if !strings.Contains(got, want) {
				t.Errorf("error %q does not contain %q", got, want)
			}
		})
	}
}

// expectedSubstring reads the "# expect: <substring>" first line of path.
func expectedSubstring(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(data), "\n")
	want, ok := strings.CutPrefix(first, "# expect: ")
	if !ok || strings.TrimSpace(want) == "" {
		t.Fatalf("first line %q is not '# expect: <substring>'", first)
	}
	return strings.TrimSpace(want)
}

// TestGoObjectsAreValid checks that objects as controllers write them with the
// Go types, zero values and all, pass the CRD validation: for example the
// non-pointer structs placement and overriders serialize as {}, and an
// empty plaintext value as null.
func TestGoObjectsAreValid(t *testing.T) {
	validators := newOfflineValidators(t)
	now := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	selector := []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "nginx"}}
	cases := map[string]runtime.Object{
		"minimal PropagationPolicy": &policyv1alpha1.PropagationPolicy{
			TypeMeta:   metav1.TypeMeta{APIVersion: "policy.karmada.io/v1alpha1", Kind: "PropagationPolicy"},
			ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "demo"},
			Spec:       policyv1alpha1.PropagationSpec{ResourceSelectors: selector},
		},
		"ClusterPropagationPolicy with failover": &policyv1alpha1.ClusterPropagationPolicy{
			TypeMeta:   metav1.TypeMeta{APIVersion: "policy.karmada.io/v1alpha1", Kind: "ClusterPropagationPolicy"},
			ObjectMeta: metav1.ObjectMeta{Name: "p"},
			Spec: policyv1alpha1.PropagationSpec{
				ResourceSelectors: selector,
				PropagateDeps:     true,
				Placement: policyv1alpha1.Placement{
					SpreadConstraints: []policyv1alpha1.SpreadConstraint{{MaxGroups: 2}},
					ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
						ReplicaSchedulingType:     policyv1alpha1.ReplicaSchedulingTypeDivided,
						ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
						WeightPreference: &policyv1alpha1.ClusterPreferences{
							StaticWeightList: []policyv1alpha1.StaticClusterWeight{{TargetCluster: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"a"}}, Weight: 2}},
							DynamicWeight:    policyv1alpha1.DynamicWeightByAvailableReplicas,
						},
					},
				},
				Failover: &policyv1alpha1.FailoverBehavior{
					Application: &policyv1alpha1.ApplicationFailoverBehavior{PurgeMode: policyv1alpha1.PurgeModeGraciously, GracePeriodSeconds: ptr.To[int32](60)}, //nolint:staticcheck // SA1019: the CEL rule must accept the deprecated spelling with gracePeriodSeconds
					Cluster:     &policyv1alpha1.ClusterFailoverBehavior{PurgeMode: policyv1alpha1.PurgeModeDirectly},
				},
			},
		},
		"OverridePolicy with overrideRules": &policyv1alpha1.OverridePolicy{
			TypeMeta:   metav1.TypeMeta{APIVersion: "policy.karmada.io/v1alpha1", Kind: "OverridePolicy"},
			ObjectMeta: metav1.ObjectMeta{Name: "o", Namespace: "demo"},
			Spec: policyv1alpha1.OverrideSpec{
				ResourceSelectors: selector,
				OverrideRules: []policyv1alpha1.RuleWithCluster{{
					TargetCluster: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}},
					Overriders: policyv1alpha1.Overriders{
						Plaintext: []policyv1alpha1.PlaintextOverrider{{Path: "/metadata/annotations", Operator: policyv1alpha1.OverriderOpRemove}},
						FieldOverrider: []policyv1alpha1.FieldOverrider{{
							FieldPath: "/data/config.json",
							JSON:      []policyv1alpha1.JSONPatchOperation{{SubPath: "/a", Operator: policyv1alpha1.OverriderOpRemove}},
						}},
					},
				}},
			},
		},
		"ClusterOverridePolicy with deprecated overriders": &policyv1alpha1.ClusterOverridePolicy{
			TypeMeta:   metav1.TypeMeta{APIVersion: "policy.karmada.io/v1alpha1", Kind: "ClusterOverridePolicy"},
			ObjectMeta: metav1.ObjectMeta{Name: "o"},
			Spec: policyv1alpha1.OverrideSpec{
				TargetCluster: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}},
				Overriders: policyv1alpha1.Overriders{
					ImageOverrider: []policyv1alpha1.ImageOverrider{{Component: policyv1alpha1.Tag, Operator: policyv1alpha1.OverriderOpReplace, Value: "v2"}},
				},
			},
		},
		"scheduled ResourceBinding with status": &workv1alpha2.ResourceBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "work.karmada.io/v1alpha2", Kind: "ResourceBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: "nginx-deployment", Namespace: "demo"},
			Spec: workv1alpha2.ResourceBindingSpec{
				Resource:            workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "demo", Name: "nginx", UID: "0d8b6ad1-3f0e-4d3c-9a65-3a3f6a9e1f00"},
				Replicas:            6,
				ReplicaRequirements: &workv1alpha2.ReplicaRequirements{ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}},
				Clusters:            []workv1alpha2.TargetCluster{{Name: "member1", Replicas: 4}, {Name: "member2", Replicas: 2}},
				Placement:           &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member2"}}},
				GracefulEvictionTasks: []workv1alpha2.GracefulEvictionTask{{
					FromCluster:       "member3",
					PurgeMode:         policyv1alpha1.PurgeModeGracefully,
					Reason:            workv1alpha2.EvictionReasonTaintUntolerated,
					Producer:          workv1alpha2.EvictionProducerTaintManager,
					CreationTimestamp: &now,
				}},
				ConflictResolution: policyv1alpha1.ConflictAbort,
				SchedulerName:      "default-scheduler",
			},
			Status: workv1alpha2.ResourceBindingStatus{
				SchedulerObservedGeneration: 1,
				LastScheduledTime:           &now,
				Conditions: []metav1.Condition{{
					Type: workv1alpha2.Scheduled, Status: metav1.ConditionTrue, Reason: workv1alpha2.BindingReasonSuccess,
					LastTransitionTime: now,
				}},
				AggregatedStatus: []workv1alpha2.AggregatedStatusItem{{
					ClusterName: "member1",
					Status:      &runtime.RawExtension{Raw: []byte(`{"readyReplicas":4}`)},
					Applied:     true,
					Health:      workv1alpha2.ResourceHealthy,
				}},
			},
		},
		"ClusterResourceBinding with zero values": &workv1alpha2.ClusterResourceBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "work.karmada.io/v1alpha2", Kind: "ClusterResourceBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: "reader-clusterrole"},
			Spec: workv1alpha2.ResourceBindingSpec{
				Resource: workv1alpha2.ObjectReference{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "reader"},
			},
		},
		"Cluster with status": &clusterv1alpha1.Cluster{
			TypeMeta:   metav1.TypeMeta{APIVersion: "cluster.karmada.io/v1alpha1", Kind: "Cluster"},
			ObjectMeta: metav1.ObjectMeta{Name: "member1"},
			Spec: clusterv1alpha1.ClusterSpec{
				SyncMode:    clusterv1alpha1.Push,
				APIEndpoint: "https://127.0.0.1:36443",
				Taints:      []corev1.Taint{{Key: clusterv1alpha1.TaintClusterNotReady, Effect: corev1.TaintEffectNoSchedule}},
				ResourceModels: []clusterv1alpha1.ResourceModel{{
					Grade:  0,
					Ranges: []clusterv1alpha1.ResourceModelRange{{Name: corev1.ResourceCPU, Min: resource.MustParse("0"), Max: resource.MustParse("1")}},
				}},
			},
			Status: clusterv1alpha1.ClusterStatus{
				KubernetesVersion: "v1.37.2",
				Conditions: []metav1.Condition{{
					Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue, Reason: "ClusterReady",
					Message: "cluster is healthy and ready to accept workloads", LastTransitionTime: now,
				}},
				NodeSummary:     &clusterv1alpha1.NodeSummary{TotalNum: 3, ReadyNum: 3},
				ResourceSummary: &clusterv1alpha1.ResourceSummary{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("12")}},
				APIEnablements:  []clusterv1alpha1.APIEnablement{{GroupVersion: "apps/v1", Resources: []clusterv1alpha1.APIResource{{Name: "deployments", Kind: "Deployment"}}}},
			},
		},
	}
	for name, obj := range cases {
		t.Run(name, func(t *testing.T) {
			data, err := stdjson.Marshal(obj)
			if err != nil {
				t.Fatal(err)
			}
			u := map[string]interface{}{}
			if err := utiljson.Unmarshal(data, &u); err != nil {
				t.Fatal(err)
			}
			gk := groupKindOf(u)
			v, ok := validators[gk]
			if !ok {
				t.Fatalf("kind %s has no CRD", gk)
			}
			unknown, errs := v.validate(u)
			if len(unknown) > 0 {
				t.Errorf("unknown fields %v", unknown)
			}
			if len(errs) > 0 {
				t.Errorf("invalid: %v\n%s", errs.ToAggregate(), data)
			}
		})
	}
}
