// Package crds prints atoll's CRDs with their admission policies (`atoll
// crds`) and the controller-manager's RBAC objects (`atoll rbac`).
package crds

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/atoll-dev/atoll/config/crd"
	"github.com/atoll-dev/atoll/pkg/admission"
	"github.com/atoll-dev/atoll/pkg/cli/cmds"
	"github.com/atoll-dev/atoll/pkg/rbac"
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

// RBAC writes the controller-manager's RBAC objects (`atoll rbac`).
func RBAC(cfg *cmds.RBAC) error {
	subject := rbac.UserSubject(cfg.User)
	if ns, name, ok := strings.Cut(cfg.ServiceAccount, "/"); ok {
		subject = rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}
	}
	docs, err := rbac.Manifests(subject)
	if err != nil {
		return err
	}
	for _, doc := range docs {
		if _, err := fmt.Fprintf(cfg.Out, "---\n%s\n", bytes.TrimSpace(doc)); err != nil {
			return err
		}
	}
	return nil
}
