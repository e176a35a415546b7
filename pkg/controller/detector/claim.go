package detector

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	"github.com/atoll-dev/atoll/pkg/util/names"
)

// TemplateFingerprintAnnotation on a binding is the fingerprint of the
// template version the binding was rendered from (see fingerprint). While it
// equals the template's, the detector neither re-reads the template nor
// rewrites the binding, so template status writes and restarts cost nothing.
const TemplateFingerprintAnnotation = "atoll.dev/template-fingerprint"

// Claim bookkeeping on templates (and, as Karmada does, on bindings).
var (
	claimLabels      = names.ClaimLabels
	claimAnnotations = []string{
		policyv1alpha1.PropagationPolicyNamespaceAnnotation,
		policyv1alpha1.PropagationPolicyNameAnnotation,
		policyv1alpha1.ClusterPropagationPolicyAnnotation,
	}
)

// Annotations that never make two template versions different for
// propagation: they are not propagated (the executor drops them too).
var unpropagatedAnnotations = map[string]bool{
	"kubectl.kubernetes.io/last-applied-configuration": true,
	"deployment.kubernetes.io/revision":                true,
}

// claimOf reads the claim recorded on a template, nil when there is none.
// A PropagationPolicy claim is read first, as Karmada does.
func claimOf(labels, annotations map[string]string) *Claim {
	if id := labels[policyv1alpha1.PropagationPolicyPermanentIDLabel]; id != "" {
		ns := annotations[policyv1alpha1.PropagationPolicyNamespaceAnnotation]
		name := annotations[policyv1alpha1.PropagationPolicyNameAnnotation]
		if ns != "" && name != "" {
			return &Claim{Namespace: ns, Name: name, PermanentID: id}
		}
	}
	if id := labels[policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel]; id != "" {
		if name := annotations[policyv1alpha1.ClusterPropagationPolicyAnnotation]; name != "" {
			return &Claim{Cluster: true, Name: name, PermanentID: id}
		}
	}
	return nil
}

// claimMetadata is the claim labels and annotations that record p (none for
// nil).
func claimMetadata(p *Policy) (labels, annotations map[string]string) {
	switch {
	case p == nil, p.AutoProvision:
		return nil, nil
	case p.Cluster:
		return map[string]string{policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel: p.PermanentID},
			map[string]string{policyv1alpha1.ClusterPropagationPolicyAnnotation: p.Name}
	default:
		return map[string]string{policyv1alpha1.PropagationPolicyPermanentIDLabel: p.PermanentID},
			map[string]string{
				policyv1alpha1.PropagationPolicyNamespaceAnnotation: p.Namespace,
				policyv1alpha1.PropagationPolicyNameAnnotation:      p.Name,
			}
	}
}

// claimPatch is the JSON merge patch that makes a template's claim metadata
// record p (or nothing, for nil), or nil when it already does. Other labels
// and annotations are left alone.
func claimPatch(labels, annotations map[string]string, p *Policy) []byte {
	wantLabels, wantAnnotations := claimMetadata(p)
	lp := keyPatch(labels, wantLabels, claimLabels)
	ap := keyPatch(annotations, wantAnnotations, claimAnnotations)
	if len(lp) == 0 && len(ap) == 0 {
		return nil
	}
	meta := map[string]any{}
	if len(lp) > 0 {
		meta["labels"] = lp
	}
	if len(ap) > 0 {
		meta["annotations"] = ap
	}
	data, _ := json.Marshal(map[string]any{"metadata": meta}) // maps of strings always marshal
	return data
}

// keyPatch sets each managed key to want's value (null when want lacks it)
// where have differs.
func keyPatch(have, want map[string]string, managed []string) map[string]any {
	patch := map[string]any{}
	for _, k := range managed {
		hv, hok := have[k]
		wv, wok := want[k]
		switch {
		case wok && (!hok || hv != wv):
			patch[k] = wv
		case !wok && hok:
			patch[k] = nil
		}
	}
	return patch
}

// fingerprint identifies a template version as far as propagation is
// concerned: its generation (resourceVersion for kinds without one, such as
// ConfigMaps), labels and annotations, leaving out claim bookkeeping and
// annotations that are never propagated. Status-only writes (which do not
// bump the generation) leave it unchanged.
func fingerprint(meta metav1.Object) string {
	version := "g" + strconv.FormatInt(meta.GetGeneration(), 10)
	if meta.GetGeneration() == 0 {
		version = "r" + meta.GetResourceVersion()
	}
	labels := maps.Clone(meta.GetLabels())
	for _, k := range claimLabels {
		delete(labels, k)
	}
	annotations := maps.Clone(meta.GetAnnotations())
	for _, k := range claimAnnotations {
		delete(annotations, k)
	}
	for k := range unpropagatedAnnotations {
		delete(annotations, k)
	}
	// encoding/json sorts map keys, so equal input gives equal bytes.
	data, _ := json.Marshal(struct {
		UID         string            `json:"u"`
		Version     string            `json:"v"`
		Labels      map[string]string `json:"l,omitempty"`
		Annotations map[string]string `json:"a,omitempty"`
	}{string(meta.GetUID()), version, labels, annotations})
	sum := sha256.Sum256(data)
	return "v1-" + hex.EncodeToString(sum[:12])
}
