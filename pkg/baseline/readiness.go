package baseline

import (
	"fmt"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/ext"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

// Readiness is what a member object says about its component.
type Readiness struct {
	// Ready: the object is what its component waits for.
	Ready bool
	// Failed: the object will not become ready without a change (kstatus
	// Failed, e.g. a Deployment past its progress deadline or a failed Job).
	Failed bool
	// Message says why it is not ready, or what it is.
	Message string
}

// knownGroups are the API groups of the kinds kstatus judges by itself:
// either it has rules for them (workloads, Jobs, CRDs, PVCs...) or they are
// ready once they exist (ConfigMaps, RBAC, webhooks, storage classes...).
// A kind of any other group is a custom resource, which kstatus calls
// Current when it has no status conditions; see Evaluate.
var knownGroups = sets.New(
	"", // core
	"apps",
	"batch",
	"policy",
	"apiextensions.k8s.io",
	"rbac.authorization.k8s.io",
	"networking.k8s.io",
	"storage.k8s.io",
	"scheduling.k8s.io",
	"admissionregistration.k8s.io",
	"coordination.k8s.io",
	"discovery.k8s.io",
	"node.k8s.io",
	"certificates.k8s.io",
)

// Evaluate says whether obj, a component's object as it is on a member
// cluster (nil if not there yet), is ready. An empty expression means the
// built-in rule: kstatus, except that a custom resource needs status
// conditions, since without them nothing says its controller has acted on
// it. Otherwise expression is a CEL expression over `self`.
func Evaluate(obj *unstructured.Unstructured, expression string) Readiness {
	switch {
	case obj == nil:
		return Readiness{Message: "not created yet"}
	case obj.GetDeletionTimestamp() != nil:
		return Readiness{Message: "terminating"}
	case expression != "":
		return evaluateExpression(obj, expression)
	}

	res, err := status.Compute(obj)
	if err != nil {
		return Readiness{Message: "computing status: " + err.Error()}
	}
	switch res.Status {
	case status.CurrentStatus:
		if conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions"); len(conds) == 0 && !knownGroups.Has(obj.GroupVersionKind().Group) {
			return Readiness{Message: obj.GetKind() + " has no status conditions; set readinessExpression to say what ready means"}
		}
		return Readiness{Ready: true, Message: res.Message}
	case status.FailedStatus:
		return Readiness{Failed: true, Message: res.Message}
	default:
		return Readiness{Message: fmt.Sprintf("%s: %s", res.Status, res.Message)}
	}
}

// costLimit bounds one evaluation, so that an expression looping over a
// large object cannot hold a worker (Kubernetes' per-expression limit for
// CRD validation rules is of the same order).
const costLimit = 1_000_000

var (
	celEnv = sync.OnceValues(func() (*cel.Env, error) {
		return cel.NewEnv(cel.Variable("self", cel.DynType), ext.Strings())
	})
	// programs caches compiled expressions by source: the same few
	// expressions are evaluated on every object of every cluster.
	programs sync.Map // string → cel.Program
)

// CompileExpression checks that expr is a valid readinessExpression: it
// compiles against `self` (of dynamic type) and returns a bool.
func CompileExpression(expr string) error {
	_, err := program(expr)
	return err
}

func program(expr string) (cel.Program, error) {
	if p, ok := programs.Load(expr); ok {
		return p.(cel.Program), nil
	}
	env, err := celEnv()
	if err != nil {
		return nil, err
	}
	ast, iss := env.Compile(expr)
	if iss.Err() != nil {
		return nil, iss.Err()
	}
	if t := ast.OutputType(); !t.IsExactType(cel.BoolType) && !t.IsExactType(cel.DynType) {
		return nil, fmt.Errorf("must return bool, not %s", t)
	}
	p, err := env.Program(ast, cel.CostLimit(costLimit))
	if err != nil {
		return nil, err
	}
	programs.Store(expr, p)
	return p, nil
}

func evaluateExpression(obj *unstructured.Unstructured, expr string) Readiness {
	p, err := program(expr)
	if err != nil {
		// Admission refuses such expressions; one that gets here can never
		// become true.
		return Readiness{Failed: true, Message: "readinessExpression does not compile: " + err.Error()}
	}
	// An evaluation error is usually a field the controller has not set
	// yet ("no such key: status"): not ready, not failed.
	out, _, err := p.Eval(map[string]any{"self": obj.Object})
	if err != nil {
		return Readiness{Message: "readinessExpression: " + err.Error()}
	}
	ready, ok := out.Value().(bool)
	switch {
	case !ok:
		return Readiness{Message: fmt.Sprintf("readinessExpression returned %s, not bool", out.Type().TypeName())}
	case !ready:
		return Readiness{Message: "readinessExpression is false"}
	}
	return Readiness{Ready: true, Message: "readinessExpression is true"}
}
