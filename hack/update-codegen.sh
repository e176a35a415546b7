#!/usr/bin/env bash
# Regenerates the deepcopy functions under apis/ and the CRD manifests under
# config/crd/bases/ with controller-gen, pinned in hack/tools/go.mod.
#
# Usage: hack/update-codegen.sh [output-root]
#   output-root defaults to the repository root; hack/verify-codegen.sh passes
#   a temporary copy of the tree.
set -o errexit -o nounset -o pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ROOT="$(cd "${1:-${REPO_ROOT}}" && pwd)"

# `go tool -n` builds controller-gen (cached after the first run) in its own
# module and prints the binary's path instead of running it, so that it can
# run from the root of the tree being generated.
CONTROLLER_GEN="$(go -C "${REPO_ROOT}/hack/tools" tool -n controller-gen)"
controller_gen() {
	"${CONTROLLER_GEN}" "$@"
}

# controller-gen resolves packages relative to its working directory, so it
# runs from the module root of the tree being generated.
cd "${ROOT}"

controller_gen \
	object:headerFile="${ROOT}/hack/boilerplate.go.txt" \
	paths="./apis/..."

rm -f "${ROOT}"/config/crd/bases/*.yaml
controller_gen \
	crd:allowDangerousTypes=false \
	paths="./apis/..." \
	output:crd:artifacts:config="${ROOT}/config/crd/bases"
