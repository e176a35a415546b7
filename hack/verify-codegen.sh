#!/usr/bin/env bash
# Fails if the checked-in generated code (apis/**/zz_generated.deepcopy.go and
# config/crd/bases/*.yaml) differs from what hack/update-codegen.sh produces.
# It generates into a temporary copy of the tree, so it never modifies the
# working tree and also works when the files are not committed yet.
set -o errexit -o nounset -o pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TMP="$(mktemp -d)"
trap 'rm -rf "${TMP}"' EXIT

mkdir -p "${TMP}/hack" "${TMP}/config/crd"
cp "${REPO_ROOT}/go.mod" "${REPO_ROOT}/go.sum" "${TMP}/"
cp "${REPO_ROOT}/hack/boilerplate.go.txt" "${TMP}/hack/"
cp -R "${REPO_ROOT}/apis" "${TMP}/apis"
cp -R "${REPO_ROOT}/config/crd/bases" "${TMP}/config/crd/bases"

"${REPO_ROOT}/hack/update-codegen.sh" "${TMP}"

status=0
for dir in apis config/crd/bases; do
	if ! diff -ru "${REPO_ROOT}/${dir}" "${TMP}/${dir}"; then
		status=1
	fi
done
if [[ ${status} -ne 0 ]]; then
	echo "Generated code is out of date; run hack/update-codegen.sh." >&2
	exit 1
fi
echo "Generated code is up to date."
