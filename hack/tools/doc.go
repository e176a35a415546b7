// Package tools pins the code generators used by hack/update-codegen.sh.
//
// It is a separate module so that the generators resolve their own
// Kubernetes dependencies instead of the main module's replace directives.
// Run a tool with `go -C hack/tools tool <name>`.
package tools
