package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Names of the ResourceInterpreterCustomization resource.
const (
	ResourceKindResourceInterpreterCustomization   = "ResourceInterpreterCustomization"
	ResourcePluralResourceInterpreterCustomization = "resourceinterpretercustomizations"
)

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=resourceinterpretercustomizations,scope=Cluster,shortName=ric,categories=karmada-io
// +kubebuilder:printcolumn:name="TARGET-API-VERSION",type=string,JSONPath=`.spec.target.apiVersion`
// +kubebuilder:printcolumn:name="TARGET-KIND",type=string,JSONPath=`.spec.target.kind`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`

// ResourceInterpreterCustomization describes one kind with Lua scripts: how
// many replicas an object asks for, how to set a cluster's share, what the
// member owns, which status to reflect and how to add it up, when it is
// healthy, and what it depends on. A script takes precedence over atoll's
// built-in knowledge of the kind.
type ResourceInterpreterCustomization struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec says which kind is described and how.
	// +required
	Spec ResourceInterpreterCustomizationSpec `json:"spec"`
}

// ResourceInterpreterCustomizationSpec is the target kind and its scripts.
type ResourceInterpreterCustomizationSpec struct {
	// target is the kind the scripts describe.
	// +required
	Target CustomizationTarget `json:"target"`

	// customizations are the scripts, one per operation.
	// +required
	Customizations CustomizationRules `json:"customizations"`
}

// CustomizationTarget names a kind.
type CustomizationTarget struct {
	// apiVersion of the kind, group/version (or version for the core group).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	APIVersion string `json:"apiVersion"`

	// kind of the target.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Kind string `json:"kind"`
}

// CustomizationRules are the scripts of a customization. Each is optional;
// an operation without a script falls back to the built-in interpreter.
type CustomizationRules struct {
	// retention keeps fields the member owns when atoll updates an object:
	// function Retain(desiredObj, observedObj) returns the object to apply.
	// +optional
	Retention *LuaScript `json:"retention,omitempty"`

	// replicaResource reads replicas and the requirements of one replica:
	// function GetReplicas(desiredObj) returns replicas, requirements.
	// +optional
	ReplicaResource *LuaScript `json:"replicaResource,omitempty"`

	// componentResource describes a multi-component workload's components:
	// function GetComponents(desiredObj) returns a list of {name, replicas,
	// replicaRequirements}, recorded in the binding's spec.components.
	// +optional
	ComponentResource *LuaScript `json:"componentResource,omitempty"`

	// replicaRevision sets one cluster's share of the replicas:
	// function ReviseReplica(desiredObj, desiredReplica) returns the object.
	// +optional
	ReplicaRevision *LuaScript `json:"replicaRevision,omitempty"`

	// statusReflection picks the status recorded from a member object:
	// function ReflectStatus(observedObj) returns the status.
	// +optional
	StatusReflection *LuaScript `json:"statusReflection,omitempty"`

	// statusAggregation adds the clusters' statuses up on the template:
	// function AggregateStatus(desiredObj, statusItems) returns the object.
	// +optional
	StatusAggregation *LuaScript `json:"statusAggregation,omitempty"`

	// healthInterpretation says whether a member object is healthy:
	// function InterpretHealth(observedObj) returns a boolean.
	// +optional
	HealthInterpretation *LuaScript `json:"healthInterpretation,omitempty"`

	// dependencyInterpretation lists the objects an object needs in the same
	// clusters: function GetDependencies(desiredObj) returns the references.
	// +optional
	DependencyInterpretation *LuaScript `json:"dependencyInterpretation,omitempty"`
}

// LuaScript is one customization rule: Lua source defining the rule's
// function. (Karmada declares one Go type per rule, all of this shape; the
// JSON is the same.)
type LuaScript struct {
	// luaScript is the Lua source.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=65536
	LuaScript string `json:"luaScript"`
}

// DependentObjectReference is one dependency a GetDependencies script
// returns.
type DependentObjectReference struct {
	// apiVersion of the dependency.
	// +required
	APIVersion string `json:"apiVersion"`
	// kind of the dependency.
	// +required
	Kind string `json:"kind"`
	// namespace of the dependency; empty means the object's own.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// name of the dependency.
	// +optional
	Name string `json:"name,omitempty"`
	// labelSelector selects dependencies by label instead of by name.
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
}

// +kubebuilder:object:root=true

// ResourceInterpreterCustomizationList is a list of
// ResourceInterpreterCustomization.
type ResourceInterpreterCustomizationList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// items is the list of ResourceInterpreterCustomization.
	// +required
	Items []ResourceInterpreterCustomization `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &ResourceInterpreterCustomization{}, &ResourceInterpreterCustomizationList{})
}
