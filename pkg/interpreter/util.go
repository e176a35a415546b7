package interpreter

import (
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
)

func runtimeDeepCopy(v any) any { return runtime.DeepCopyJSONValue(v) }

// quantityEqual treats "1" and "1000m" as equal when both parse as
// quantities; the member API server may normalise what the template said.
func quantityEqual(a, b string) bool {
	if a == b {
		return true
	}
	qa, err1 := resource.ParseQuantity(a)
	qb, err2 := resource.ParseQuantity(b)
	return err1 == nil && err2 == nil && qa.Cmp(qb) == 0
}
