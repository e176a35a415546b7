package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Names of the OverridePolicy resource.
const (
	ResourceKindOverridePolicy     = "OverridePolicy"
	ResourcePluralOverridePolicy   = "overridepolicies"
	ResourceSingularOverridePolicy = "overridepolicy"
)

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=overridepolicies,scope=Namespaced,shortName=op,categories=karmada-io

// OverridePolicy changes the copies of resources of its own namespace that
// are sent to particular clusters.
type OverridePolicy struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired override behaviour.
	// +required
	Spec OverrideSpec `json:"spec"`
}

// +kubebuilder:object:root=true

// OverridePolicyList is a list of OverridePolicy.
type OverridePolicyList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// items is the list of OverridePolicy.
	// +required
	Items []OverridePolicy `json:"items"`
}

// OverrideSpec is the desired behaviour shared by OverridePolicy and
// ClusterOverridePolicy.
//
// Use overrideRules. The older pair targetCluster + overriders is still
// accepted for compatibility but cannot be combined with overrideRules.
//
// +kubebuilder:validation:XValidation:rule="!has(self.targetCluster) || !has(self.overrideRules)",message="targetCluster (deprecated) cannot be combined with overrideRules; use overrideRules[].targetCluster",fieldPath=".targetCluster"
// +kubebuilder:validation:XValidation:rule="!has(self.overrideRules) || !has(self.overriders) || ((!has(self.overriders.plaintext) || size(self.overriders.plaintext) == 0) && (!has(self.overriders.imageOverrider) || size(self.overriders.imageOverrider) == 0) && (!has(self.overriders.commandOverrider) || size(self.overriders.commandOverrider) == 0) && (!has(self.overriders.argsOverrider) || size(self.overriders.argsOverrider) == 0) && (!has(self.overriders.labelsOverrider) || size(self.overriders.labelsOverrider) == 0) && (!has(self.overriders.annotationsOverrider) || size(self.overriders.annotationsOverrider) == 0) && (!has(self.overriders.fieldOverrider) || size(self.overriders.fieldOverrider) == 0))",message="overriders (deprecated) cannot be combined with overrideRules; use overrideRules[].overriders",fieldPath=".overriders"
type OverrideSpec struct {
	// resourceSelectors restricts the policy to the selected resources. When
	// empty the policy applies to every resource (of its namespace, for an
	// OverridePolicy).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=1000
	ResourceSelectors []ResourceSelector `json:"resourceSelectors,omitempty"`

	// overrideRules are the overrides, each for the clusters its targetCluster
	// selects.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	OverrideRules []RuleWithCluster `json:"overrideRules,omitempty"`

	// targetCluster restricts the deprecated overriders to the selected
	// clusters; unset means all clusters.
	// Deprecated: use overrideRules. Cannot be combined with overrideRules.
	// +optional
	TargetCluster *ClusterAffinity `json:"targetCluster,omitempty"`

	// overriders are applied to the clusters targetCluster selects.
	// Deprecated: use overrideRules. Cannot be combined with overrideRules.
	// +optional
	Overriders Overriders `json:"overriders"`
}

// RuleWithCluster is a set of overriders for the clusters a selector picks.
type RuleWithCluster struct {
	// targetCluster selects the clusters the overriders apply to; unset means
	// all clusters.
	// +optional
	TargetCluster *ClusterAffinity `json:"targetCluster,omitempty"`

	// overriders are the changes to make.
	// +required
	Overriders Overriders `json:"overriders"`
}

// Overriders are the ways to change a resource. When several are set they
// are applied in this order: imageOverrider, commandOverrider, argsOverrider,
// labelsOverrider, annotationsOverrider, fieldOverrider, plaintext.
type Overriders struct {
	// plaintext are JSON patch operations on the resource.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	Plaintext []PlaintextOverrider `json:"plaintext,omitempty"`

	// imageOverrider changes parts of container images.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	ImageOverrider []ImageOverrider `json:"imageOverrider,omitempty"`

	// commandOverrider changes container commands.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	CommandOverrider []CommandArgsOverrider `json:"commandOverrider,omitempty"`

	// argsOverrider changes container args.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	ArgsOverrider []CommandArgsOverrider `json:"argsOverrider,omitempty"`

	// labelsOverrider changes the resource's labels.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	LabelsOverrider []LabelAnnotationOverrider `json:"labelsOverrider,omitempty"`

	// annotationsOverrider changes the resource's annotations.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	AnnotationsOverrider []LabelAnnotationOverrider `json:"annotationsOverrider,omitempty"`

	// fieldOverrider edits a JSON or YAML document stored in one field of the
	// resource, such as a key of a ConfigMap.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	FieldOverrider []FieldOverrider `json:"fieldOverrider,omitempty"`
}

// OverriderOperator is an operation an overrider performs.
type OverriderOperator string

// The overrider operations.
const (
	OverriderOpAdd     OverriderOperator = "add"
	OverriderOpRemove  OverriderOperator = "remove"
	OverriderOpReplace OverriderOperator = "replace"
)

// PlaintextOverrider is one JSON patch (RFC 6902) operation.
// +kubebuilder:validation:XValidation:rule="!(self.path in ['/apiVersion', '/kind', '/metadata', '/metadata/name', '/metadata/namespace', '/metadata/generateName', '/metadata/ownerReferences', '/metadata/managedFields'] || self.path.startsWith('/metadata/ownerReferences/') || self.path.startsWith('/metadata/managedFields/'))",message="an override may not change the object's identity (apiVersion, kind, metadata.name, metadata.namespace, metadata.generateName, metadata.ownerReferences, metadata.managedFields)",fieldPath=".path"
type PlaintextOverrider struct {
	// path is the JSON pointer (RFC 6901) of the field to change, e.g.
	// /spec/replicas. It must start with "/".
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^/`
	Path string `json:"path"`

	// operator is add, remove or replace.
	// +required
	// +kubebuilder:validation:Enum=add;remove;replace
	Operator OverriderOperator `json:"operator"`

	// value is the value to add or replace with; leave it empty for remove.
	// +optional
	Value apiextensionsv1.JSON `json:"value,omitempty"`
}

// ImageComponent is a part of a container image reference
// [registry/]repository[:tag].
// +kubebuilder:validation:Enum=Registry;Repository;Tag
type ImageComponent string

// The parts of an image reference.
const (
	// Registry is the registry host, e.g. registry.k8s.io or
	// registry.example:10443.
	Registry ImageComponent = "Registry"

	// Repository is the repository path, e.g. kube-apiserver or library/nginx.
	Repository ImageComponent = "Repository"

	// Tag is the tag or digest, e.g. v1.37.2 or @sha256:....
	Tag ImageComponent = "Tag"
)

// ImageOverrider changes one part of container images.
type ImageOverrider struct {
	// predicate selects the image field to change. When unset, the images of
	// all containers are changed for Pods, ReplicaSets, Deployments,
	// DaemonSets, StatefulSets and Jobs
	// (/spec/template/spec/containers/<N>/image, or /spec/containers/<N>/image
	// for Pods).
	// +optional
	Predicate *ImagePredicate `json:"predicate,omitempty"`

	// component is the part of the image to change: Registry, Repository or
	// Tag.
	// +required
	Component ImageComponent `json:"component"`

	// operator is add, remove or replace.
	// +required
	// +kubebuilder:validation:Enum=add;remove;replace
	Operator OverriderOperator `json:"operator"`

	// value is the new part for add and replace; it is ignored for remove.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Value string `json:"value,omitempty"`
}

// ImagePredicate selects an image field.
type ImagePredicate struct {
	// path is the JSON pointer (RFC 6901) of the image field, e.g.
	// /spec/template/spec/containers/0/image.
	// +required
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^(/|$)`
	Path string `json:"path"`
}

// CommandArgsOverrider changes the command or args of one container.
type CommandArgsOverrider struct {
	// containerName is the container to change.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	ContainerName string `json:"containerName"`

	// operator is add (append value) or remove (delete matching items).
	// +required
	// +kubebuilder:validation:Enum=add;remove
	Operator OverriderOperator `json:"operator"`

	// value is the items to append or remove. Empty changes nothing.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=256
	Value []string `json:"value,omitempty"`
}

// LabelAnnotationOverrider changes labels or annotations.
type LabelAnnotationOverrider struct {
	// operator is add, remove or replace.
	// +required
	// +kubebuilder:validation:Enum=add;remove;replace
	Operator OverriderOperator `json:"operator"`

	// value holds the keys and values to add, remove or replace.
	// +required
	// +kubebuilder:validation:MaxProperties=256
	Value map[string]string `json:"value"`
}

// FieldOverrider edits a JSON or YAML document stored in one string field,
// for example a configuration file in a ConfigMap. Exactly one of json and
// yaml must be set.
//
// +kubebuilder:validation:XValidation:rule="(has(self.json) && size(self.json) > 0) != (has(self.yaml) && size(self.yaml) > 0)",message="fieldOverrider must set exactly one of json and yaml"
// +kubebuilder:validation:XValidation:rule="!(size(self.fieldPath) == 0 || self.fieldPath in ['/apiVersion', '/kind', '/metadata', '/metadata/name', '/metadata/namespace', '/metadata/generateName', '/metadata/ownerReferences', '/metadata/managedFields'] || self.fieldPath.startsWith('/metadata/ownerReferences/') || self.fieldPath.startsWith('/metadata/managedFields/'))",message="an override may not change the object's identity (apiVersion, kind, metadata.name, metadata.namespace, metadata.generateName, metadata.ownerReferences, metadata.managedFields)",fieldPath=".fieldPath"
type FieldOverrider struct {
	// fieldPath is the JSON pointer (RFC 6901) of the field that holds the
	// document, e.g. /data/db-config.yaml. It may not be a field that
	// identifies the object (apiVersion, kind, metadata.name, ...).
	// +required
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^(/|$)`
	FieldPath string `json:"fieldPath"`

	// json are the operations on a JSON document.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	JSON []JSONPatchOperation `json:"json,omitempty"`

	// yaml are the operations on a YAML document.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	YAML []YAMLPatchOperation `json:"yaml,omitempty"`
}

// JSONPatchOperation is one operation on a JSON document.
type JSONPatchOperation struct {
	// subPath is the JSON pointer (RFC 6901) of the target inside the
	// document.
	// +required
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^(/|$)`
	SubPath string `json:"subPath"`

	// operator is add, remove or replace.
	// +required
	// +kubebuilder:validation:Enum=add;remove;replace
	Operator OverriderOperator `json:"operator"`

	// value is the value for add and replace; leave it empty for remove.
	// +optional
	Value apiextensionsv1.JSON `json:"value,omitempty"`
}

// YAMLPatchOperation is one operation on a YAML document.
type YAMLPatchOperation struct {
	// subPath is the JSON pointer (RFC 6901) of the target inside the
	// document.
	// +required
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^(/|$)`
	SubPath string `json:"subPath"`

	// operator is add, remove or replace.
	// +required
	// +kubebuilder:validation:Enum=add;remove;replace
	Operator OverriderOperator `json:"operator"`

	// value is the value for add and replace; leave it empty for remove.
	// +optional
	Value apiextensionsv1.JSON `json:"value,omitempty"`
}

func init() {
	objectTypes = append(objectTypes, &OverridePolicy{}, &OverridePolicyList{})
}
