package overridemanager

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	"github.com/atoll-dev/atoll/pkg/interpreter"
)

// podSpecPath is where the pod spec of kinds with containers lives, as a
// JSON pointer.
func podSpecPath(kind string) (string, bool) {
	path, ok := interpreter.PodSpecPathOfKind(kind)
	if !ok {
		return "", false
	}
	return "/" + strings.Join(path, "/"), true
}

// containers returns the containers list of obj's pod spec, or nil.
func containers(obj map[string]any, kind string) (string, []any) {
	prefix, ok := podSpecPath(kind)
	if !ok {
		return "", nil
	}
	v, err := getPath(obj, prefix+"/containers")
	if err != nil {
		return "", nil
	}
	list, _ := v.([]any)
	return prefix + "/containers", list
}

// applyOverriders applies one rule's overriders to obj in the fixed order.
// Errors name the overrider and the path.
func applyOverriders(obj *unstructured.Unstructured, o *policyv1alpha1.Overriders) error {
	for i := range o.ImageOverrider {
		if err := applyImage(obj, &o.ImageOverrider[i]); err != nil {
			return err
		}
	}
	for i := range o.CommandOverrider {
		if err := applyCommandArgs(obj, &o.CommandOverrider[i], "command"); err != nil {
			return err
		}
	}
	for i := range o.ArgsOverrider {
		if err := applyCommandArgs(obj, &o.ArgsOverrider[i], "args"); err != nil {
			return err
		}
	}
	for i := range o.LabelsOverrider {
		if err := applyMetadataMap(obj, &o.LabelsOverrider[i], "labels"); err != nil {
			return err
		}
	}
	for i := range o.AnnotationsOverrider {
		if err := applyMetadataMap(obj, &o.AnnotationsOverrider[i], "annotations"); err != nil {
			return err
		}
	}
	for i := range o.FieldOverrider {
		if err := applyField(obj, &o.FieldOverrider[i]); err != nil {
			return err
		}
	}
	for i := range o.Plaintext {
		p := &o.Plaintext[i]
		if err := applyPatch(obj, p.Operator, p.Path, p.Value.Raw); err != nil {
			return fmt.Errorf("plaintext %s %s: %w", p.Operator, p.Path, err)
		}
	}
	return nil
}

// applyPatch applies one JSON patch operation to the object.
func applyPatch(obj *unstructured.Unstructured, op policyv1alpha1.OverriderOperator, path string, raw []byte) error {
	value, err := decodeValue(op, raw)
	if err != nil {
		return err
	}
	out, err := patch(obj.Object, op, path, value)
	if err != nil {
		return err
	}
	m, ok := out.(map[string]any)
	if !ok {
		return fmt.Errorf("the result is not an object")
	}
	obj.Object = m
	return nil
}

// decodeValue decodes a JSON value, keeping integers int64 as unstructured
// objects do.
func decodeValue(op policyv1alpha1.OverriderOperator, raw []byte) (any, error) {
	if op == policyv1alpha1.OverriderOpRemove {
		return nil, nil
	}
	if len(raw) == 0 {
		return nil, fmt.Errorf("value is required for %s", op)
	}
	var v any
	if err := utiljson.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("decoding value: %w", err)
	}
	return v, nil
}

func applyImage(obj *unstructured.Unstructured, o *policyv1alpha1.ImageOverrider) error {
	var paths []string
	if o.Predicate != nil {
		paths = []string{o.Predicate.Path}
	} else {
		prefix, list := containers(obj.Object, obj.GetKind())
		for i := range list {
			paths = append(paths, fmt.Sprintf("%s/%d/image", prefix, i))
		}
	}
	for _, p := range paths {
		v, err := getPath(obj.Object, p)
		if err != nil {
			return fmt.Errorf("imageOverrider %s %s at %s: %w", o.Operator, o.Component, p, err)
		}
		ref, ok := v.(string)
		if !ok {
			return fmt.Errorf("imageOverrider %s %s at %s: not a string", o.Operator, o.Component, p)
		}
		img, err := overrideImage(ref, o)
		if err != nil {
			return fmt.Errorf("imageOverrider %s %s at %s: %w", o.Operator, o.Component, p, err)
		}
		if _, err := patch(obj.Object, policyv1alpha1.OverriderOpReplace, p, img); err != nil {
			return fmt.Errorf("imageOverrider %s %s at %s: %w", o.Operator, o.Component, p, err)
		}
	}
	return nil
}

// applyCommandArgs appends to (add) or deletes items from (remove) the
// command or args of the named container; other kinds and containers are
// left alone.
func applyCommandArgs(obj *unstructured.Unstructured, o *policyv1alpha1.CommandArgsOverrider, field string) error {
	_, list := containers(obj.Object, obj.GetKind())
	for _, c := range list {
		m, ok := c.(map[string]any)
		if !ok || m["name"] != o.ContainerName {
			continue
		}
		cur, _ := m[field].([]any)
		switch o.Operator {
		case policyv1alpha1.OverriderOpAdd:
			for _, v := range o.Value {
				cur = append(cur, v)
			}
		case policyv1alpha1.OverriderOpRemove:
			cur = slices.DeleteFunc(cur, func(item any) bool {
				s, ok := item.(string)
				return ok && slices.Contains(o.Value, s)
			})
		default:
			return fmt.Errorf("%sOverrider %s for container %s: unsupported operator", field, o.Operator, o.ContainerName)
		}
		if len(cur) == 0 {
			delete(m, field)
		} else {
			m[field] = cur
		}
	}
	return nil
}

// applyMetadataMap changes labels or annotations as Karmada does: add sets
// the keys, replace and remove change only keys that exist.
func applyMetadataMap(obj *unstructured.Unstructured, o *policyv1alpha1.LabelAnnotationOverrider, field string) error {
	m, _, err := unstructured.NestedStringMap(obj.Object, "metadata", field)
	if err != nil {
		return fmt.Errorf("%sOverrider %s /metadata/%s: %w", field, o.Operator, field, err)
	}
	if m == nil {
		m = map[string]string{}
	}
	for k, v := range o.Value {
		_, exists := m[k]
		switch o.Operator {
		case policyv1alpha1.OverriderOpAdd:
			m[k] = v
		case policyv1alpha1.OverriderOpReplace:
			if exists {
				m[k] = v
			}
		case policyv1alpha1.OverriderOpRemove:
			delete(m, k)
		default:
			return fmt.Errorf("%sOverrider %s: unsupported operator", field, o.Operator)
		}
	}
	if len(m) == 0 {
		unstructured.RemoveNestedField(obj.Object, "metadata", field)
		return nil
	}
	return unstructured.SetNestedStringMap(obj.Object, m, "metadata", field)
}

// applyField edits the JSON or YAML document held in the string at
// fieldPath.
func applyField(obj *unstructured.Unstructured, o *policyv1alpha1.FieldOverrider) error {
	v, err := getPath(obj.Object, o.FieldPath)
	if err != nil {
		return fmt.Errorf("fieldOverrider %s: %w", o.FieldPath, err)
	}
	text, ok := v.(string)
	if !ok {
		return fmt.Errorf("fieldOverrider %s: not a string", o.FieldPath)
	}
	isYAML := len(o.YAML) > 0
	data := []byte(text)
	if isYAML {
		if data, err = yaml.YAMLToJSON(data); err != nil {
			return fmt.Errorf("fieldOverrider %s: parsing YAML: %w", o.FieldPath, err)
		}
	}
	var doc any
	if err := utiljson.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("fieldOverrider %s: parsing JSON: %w", o.FieldPath, err)
	}
	type op struct {
		subPath  string
		operator policyv1alpha1.OverriderOperator
		raw      []byte
	}
	var ops []op
	for _, j := range o.JSON {
		ops = append(ops, op{j.SubPath, j.Operator, j.Value.Raw})
	}
	for _, y := range o.YAML {
		ops = append(ops, op{y.SubPath, y.Operator, y.Value.Raw})
	}
	for _, p := range ops {
		value, err := decodeValue(p.operator, p.raw)
		if err == nil {
			doc, err = patch(doc, p.operator, p.subPath, value)
		}
		if err != nil {
			return fmt.Errorf("fieldOverrider %s: %s %s: %w", o.FieldPath, p.operator, p.subPath, err)
		}
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("fieldOverrider %s: %w", o.FieldPath, err)
	}
	if isYAML {
		if out, err = yaml.JSONToYAML(out); err != nil {
			return fmt.Errorf("fieldOverrider %s: %w", o.FieldPath, err)
		}
	}
	if _, err := patch(obj.Object, policyv1alpha1.OverriderOpReplace, o.FieldPath, string(out)); err != nil {
		return fmt.Errorf("fieldOverrider %s: %w", o.FieldPath, err)
	}
	return nil
}
