// Package baseline is the pure logic of ClusterBaseline: the dependency
// graph of its components and the readiness of delivered objects. It has no
// client and does not import k8s.io/kubernetes.
package baseline

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	appsv1alpha1 "github.com/atoll-dev/atoll/apis/apps/v1alpha1"
)

// Validate checks what the CRD schema cannot: the selector, references
// between components, their expressions and timeouts, and dependency
// cycles. Errors come in spec order, cycles last.
func Validate(spec *appsv1alpha1.ClusterBaselineSpec) field.ErrorList {
	root := field.NewPath("spec")
	var errs field.ErrorList
	if _, err := metav1.LabelSelectorAsSelector(spec.ClusterSelector); err != nil {
		errs = append(errs, field.Invalid(root.Child("clusterSelector"), spec.ClusterSelector, err.Error()))
	}

	compsPath := root.Child("components")
	first := firstIndex(spec.Components)
	for i := range spec.Components {
		c := &spec.Components[i]
		p := compsPath.Index(i)
		errs = append(errs, refErrors(p, i, c, first)...)
		if c.ReadinessExpression != "" {
			if err := CompileExpression(c.ReadinessExpression); err != nil {
				errs = append(errs, field.Invalid(p.Child("readinessExpression"), c.ReadinessExpression, "does not compile: "+err.Error()))
			}
		}
		if c.Timeout != nil && c.Timeout.Duration <= 0 {
			errs = append(errs, field.Invalid(p.Child("timeout"), c.Timeout.Duration.String(), "must be positive"))
		}
	}

	names, deps := namesAndDeps(spec.Components)
	return append(errs, cycleErrors(compsPath, names, deps)...)
}

// firstIndex maps each component name to the index of its first occurrence.
func firstIndex(components []appsv1alpha1.BaselineComponent) map[string]int {
	first := make(map[string]int, len(components))
	for i := range components {
		if _, ok := first[components[i].Name]; !ok {
			first[components[i].Name] = i
		}
	}
	return first
}

// refErrors checks component i's name and dependsOn against the others.
func refErrors(p *field.Path, i int, c *appsv1alpha1.BaselineComponent, first map[string]int) field.ErrorList {
	var errs field.ErrorList
	if first[c.Name] != i {
		errs = append(errs, field.Duplicate(p.Child("name"), c.Name))
	}
	seen := sets.New[string]()
	for j, dep := range c.DependsOn {
		dp := p.Child("dependsOn").Index(j)
		switch _, known := first[dep]; {
		case seen.Has(dep):
			errs = append(errs, field.Duplicate(dp, dep))
		case !known:
			err := field.NotFound(dp, dep)
			err.Detail = fmt.Sprintf("component %q depends on unknown component %q", c.Name, dep)
			errs = append(errs, err)
		}
		seen.Insert(dep)
	}
	return errs
}

// namesAndDeps is the graph's input from components; for a duplicated
// name, the first occurrence wins (the duplicate is an error anyway).
func namesAndDeps(components []appsv1alpha1.BaselineComponent) ([]string, map[string][]string) {
	var names []string
	deps := make(map[string][]string, len(components))
	for i := range components {
		c := &components[i]
		if _, dup := deps[c.Name]; dup {
			continue
		}
		names = append(names, c.Name)
		deps[c.Name] = c.DependsOn
	}
	return names, cleanDeps(names, deps)
}

// cleanDeps drops references to unknown names and repeated entries, so
// that the graph algorithms see only edges between known nodes.
func cleanDeps(names []string, deps map[string][]string) map[string][]string {
	known := sets.New(names...)
	clean := make(map[string][]string, len(names))
	for _, n := range names {
		seen := sets.New[string]()
		out := []string{}
		for _, d := range deps[n] {
			if known.Has(d) && !seen.Has(d) {
				seen.Insert(d)
				out = append(out, d)
			}
		}
		clean[n] = out
	}
	return clean
}

// cycleErrors reports one error per set of components that depend on each
// other (strongly connected component), naming one cycle through it from
// its member earliest in spec order. Components that merely depend on a
// cycle are not reported: fixing the cycle fixes them.
func cycleErrors(p *field.Path, names []string, deps map[string][]string) field.ErrorList {
	var errs field.ErrorList
	for _, scc := range cyclicSCCs(names, deps) {
		path := cyclePath(scc, deps)
		errs = append(errs, field.Invalid(p, field.OmitValueType{}, "dependency cycle: "+strings.Join(path, " → ")))
	}
	return errs
}

// cyclicSCCs returns the strongly connected components that contain a
// cycle (more than one member, or a self-dependency), each sorted in spec
// order, ordered by their first member (Tarjan's algorithm).
func cyclicSCCs(names []string, deps map[string][]string) [][]string {
	pos := make(map[string]int, len(names))
	for i, n := range names {
		pos[n] = i
	}
	index := map[string]int{}
	low := map[string]int{}
	onStack := sets.New[string]()
	var stack []string
	var out [][]string

	var visit func(n string)
	visit = func(n string) {
		index[n], low[n] = len(index), len(index)
		stack = append(stack, n)
		onStack.Insert(n)
		for _, d := range deps[n] {
			if _, seen := index[d]; !seen {
				visit(d)
				low[n] = min(low[n], low[d])
			} else if onStack.Has(d) {
				low[n] = min(low[n], index[d])
			}
		}
		if low[n] != index[n] {
			return
		}
		var scc []string
		for {
			top := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			onStack.Delete(top)
			scc = append(scc, top)
			if top == n {
				break
			}
		}
		if len(scc) > 1 || slices.Contains(deps[n], n) {
			slices.SortFunc(scc, func(a, b string) int { return pos[a] - pos[b] })
			out = append(out, scc)
		}
	}
	for _, n := range names {
		if _, seen := index[n]; !seen {
			visit(n)
		}
	}
	slices.SortFunc(out, func(a, b []string) int { return pos[a[0]] - pos[b[0]] })
	return out
}

// cyclePath is the shortest cycle from the SCC's first member back to it,
// following dependsOn in list order (breadth-first, within the SCC).
func cyclePath(scc []string, deps map[string][]string) []string {
	start := scc[0]
	in := sets.New(scc...)
	parent := map[string]string{}
	queue := []string{start}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, d := range deps[n] {
			if d == start {
				path := []string{start}
				for m := n; m != start; m = parent[m] {
					path = append(path, m)
				}
				slices.Reverse(path[1:])
				return append(path, start)
			}
			if _, seen := parent[d]; in.Has(d) && !seen {
				parent[d] = n
				queue = append(queue, d)
			}
		}
	}
	return scc // unreachable: every SCC member lies on a cycle through start
}

// Graph is the dependency graph of a baseline's components. It is
// immutable; the slices its methods return are copies.
type Graph struct {
	order      []string
	deps       map[string][]string
	dependents map[string][]string
	depth      int
	components map[string]*appsv1alpha1.BaselineComponent
}

// NewGraph builds the graph of components, or returns the Validate errors
// of their names and references (duplicates, unknown dependsOn, cycles).
func NewGraph(components []appsv1alpha1.BaselineComponent) (*Graph, error) {
	p := field.NewPath("spec", "components")
	first := firstIndex(components)
	var errs field.ErrorList
	for i := range components {
		errs = append(errs, refErrors(p.Index(i), i, &components[i], first)...)
	}
	names, deps := namesAndDeps(components)
	if errs = append(errs, cycleErrors(p, names, deps)...); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	g := newGraph(names, deps)
	for i := range components {
		g.components[components[i].Name] = components[i].DeepCopy()
	}
	return g, nil
}

// GraphFromDeps builds a graph from names and dependsOn alone, as recorded
// for components removed from a spec that are still being withdrawn.
// References to unknown names are dropped: the components they named may
// be gone already. Component returns nil on such a graph.
func GraphFromDeps(names []string, deps map[string][]string) (*Graph, error) {
	p := field.NewPath("components")
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, n := range names {
		if seen.Has(n) {
			errs = append(errs, field.Duplicate(p.Index(i), n))
		}
		seen.Insert(n)
	}
	clean := cleanDeps(names, deps)
	if errs = append(errs, cycleErrors(p, names, clean)...); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	return newGraph(names, clean), nil
}

// newGraph builds the graph of valid, acyclic, clean deps.
func newGraph(names []string, deps map[string][]string) *Graph {
	g := &Graph{
		deps:       deps,
		dependents: map[string][]string{},
		components: map[string]*appsv1alpha1.BaselineComponent{},
	}
	// Stable topological order: each step places the earliest component (in
	// spec order) whose prerequisites are all placed. Quadratic, which is
	// fine for at most 200 components, and easy to check by eye.
	placed := sets.New[string]()
	for len(g.order) < len(names) {
		for _, n := range names {
			if !placed.Has(n) && placed.HasAll(deps[n]...) {
				placed.Insert(n)
				g.order = append(g.order, n)
				break
			}
		}
	}

	chain := map[string]int{} // components on the longest chain ending at n
	for _, n := range g.order {
		chain[n] = 1
		for _, d := range deps[n] {
			chain[n] = max(chain[n], chain[d]+1)
			g.dependents[d] = append(g.dependents[d], n)
		}
		g.depth = max(g.depth, chain[n])
	}
	return g
}

// Order is the components in dependency order: prerequisites first, ties
// in spec order.
func (g *Graph) Order() []string { return slices.Clone(g.order) }

// Reverse is Order reversed: dependents first, the order of withdrawal.
func (g *Graph) Reverse() []string {
	r := slices.Clone(g.order)
	slices.Reverse(r)
	return r
}

// Deps is the direct dependsOn of name.
func (g *Graph) Deps(name string) []string { return slices.Clone(g.deps[name]) }

// Dependents is the components that directly depend on name, in Order.
func (g *Graph) Dependents(name string) []string { return slices.Clone(g.dependents[name]) }

// Has reports whether name is a component of the graph.
func (g *Graph) Has(name string) bool {
	_, ok := g.deps[name]
	return ok
}

// Depth is the number of components on the longest dependency chain: the
// number of rounds a delivery needs at least. 0 for an empty graph.
func (g *Graph) Depth() int { return g.depth }

// Component is the named component (the graph's own copy: do not modify
// it), or nil if unknown or if the graph was built by GraphFromDeps.
func (g *Graph) Component(name string) *appsv1alpha1.BaselineComponent {
	return g.components[name]
}
