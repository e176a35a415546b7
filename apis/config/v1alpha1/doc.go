// Package v1alpha1 holds the config.karmada.io/v1alpha1 API served by atoll:
// ResourceInterpreterCustomization, which describes a kind atoll does not
// know natively (a CRD with replicas, its own status and health) with Lua
// scripts.
//
// The group, version, kind and JSON field names are those of Karmada v1.19,
// so customizations published for Karmada apply unchanged. The Lua functions
// each script defines, their arguments and their results are Karmada's too;
// docs/interpreter.md lists them.
//
// +kubebuilder:object:generate=true
// +groupName=config.karmada.io
package v1alpha1
