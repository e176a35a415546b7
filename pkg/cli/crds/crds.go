// Package crds prints atoll's CRDs (`atoll crds`).
package crds

import (
	"bytes"
	"fmt"
	"io"

	"github.com/atoll-dev/atoll/config/crd"
	"github.com/atoll-dev/atoll/pkg/admission"
)

// Run writes every CRD, then the admission policies that go with them, as
// one multi-document YAML stream.
func Run(w io.Writer) error {
	docs, err := crd.All()
	if err != nil {
		return err
	}
	policies, err := admission.Manifests()
	if err != nil {
		return err
	}
	docs = append(docs, policies...)
	for _, doc := range docs {
		if _, err := fmt.Fprintf(w, "---\n%s\n", bytes.TrimSpace(doc)); err != nil {
			return err
		}
	}
	return nil
}
