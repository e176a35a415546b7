package overridemanager

import (
	"fmt"
	"strings"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
)

// image is a container image reference split as Karmada's imageparser does:
// [registry/]repository[:tag|@digest].
type image struct {
	registry, repository, tag, digest string
}

// parseImage splits ref. The first path element is the registry when it
// contains a "." or ":" or is "localhost" (the Docker reference rule).
func parseImage(ref string) (image, error) {
	if ref == "" {
		return image{}, fmt.Errorf("empty image reference")
	}
	var img image
	rest := ref
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		first := rest[:i]
		if strings.ContainsAny(first, ".:") || first == "localhost" {
			img.registry, rest = first, rest[i+1:]
		}
	}
	if i := strings.IndexByte(rest, '@'); i >= 0 {
		img.digest, rest = rest[i+1:], rest[:i]
	}
	if i := strings.LastIndexByte(rest, ':'); i >= 0 {
		img.tag, rest = rest[i+1:], rest[:i]
	}
	img.repository = rest
	return img, nil
}

func (img image) tagOrDigest() string {
	if img.tag != "" {
		return img.tag
	}
	return img.digest
}

// setTagOrDigest sets a digest when v looks like one (algorithm:hex, with
// or without a leading @), else a tag.
func (img *image) setTagOrDigest(v string) {
	v = strings.TrimPrefix(v, "@")
	img.tag, img.digest = "", ""
	if strings.Contains(v, ":") {
		img.digest = v
	} else {
		img.tag = v
	}
}

func (img image) String() string {
	var b strings.Builder
	if img.registry != "" {
		b.WriteString(img.registry)
		b.WriteByte('/')
	}
	b.WriteString(img.repository)
	if img.tag != "" {
		b.WriteByte(':')
		b.WriteString(img.tag)
	}
	if img.digest != "" {
		b.WriteByte('@')
		b.WriteString(img.digest)
	}
	return b.String()
}

// overrideImage changes one component of ref: add appends the value to the
// component, replace sets it, remove drops it (Karmada's semantics).
func overrideImage(ref string, o *policyv1alpha1.ImageOverrider) (string, error) {
	img, err := parseImage(ref)
	if err != nil {
		return "", err
	}
	switch o.Component {
	case policyv1alpha1.Registry:
		switch o.Operator {
		case policyv1alpha1.OverriderOpAdd:
			img.registry += o.Value
		case policyv1alpha1.OverriderOpReplace:
			img.registry = o.Value
		case policyv1alpha1.OverriderOpRemove:
			img.registry = ""
		default:
			return "", fmt.Errorf("unsupported operator %q", o.Operator)
		}
	case policyv1alpha1.Repository:
		switch o.Operator {
		case policyv1alpha1.OverriderOpAdd:
			img.repository += o.Value
		case policyv1alpha1.OverriderOpReplace:
			img.repository = o.Value
		case policyv1alpha1.OverriderOpRemove:
			img.repository = ""
		default:
			return "", fmt.Errorf("unsupported operator %q", o.Operator)
		}
	case policyv1alpha1.Tag:
		switch o.Operator {
		case policyv1alpha1.OverriderOpAdd:
			img.setTagOrDigest(img.tagOrDigest() + o.Value)
		case policyv1alpha1.OverriderOpReplace:
			img.setTagOrDigest(o.Value)
		case policyv1alpha1.OverriderOpRemove:
			img.tag, img.digest = "", ""
		default:
			return "", fmt.Errorf("unsupported operator %q", o.Operator)
		}
	default:
		return "", fmt.Errorf("unsupported image component %q", o.Component)
	}
	return img.String(), nil
}
