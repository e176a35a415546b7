package cluster

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
)

// pageSize bounds the objects of one list page, so the pods of a large
// member are summed page by page and never held at once.
const pageSize = 500

// Reasons of the CompleteAPIEnablements condition (Karmada's).
const (
	ReasonAPIEnablementsComplete = "Complete"
	ReasonAPIEnablementsPartial  = "Partial"
)

// apiEnablements lists every group version and resource the member serves
// (all served versions, not only the preferred one: a template of
// autoscaling/v1 fits a member whose preferred version is v2). Subresources
// are left out; the result is sorted. complete is false when discovery of
// some groups failed; the groups that answered are still returned.
func apiEnablements(ctx context.Context, d discovery.DiscoveryInterfaceWithContext) (list []clusterv1alpha1.APIEnablement, complete bool, err error) {
	_, resources, err := d.ServerGroupsAndResourcesWithContext(ctx)
	complete = err == nil
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return nil, false, err
	}
	for _, rl := range resources {
		if rl == nil {
			continue
		}
		e := clusterv1alpha1.APIEnablement{GroupVersion: rl.GroupVersion}
		for _, r := range rl.APIResources {
			if strings.Contains(r.Name, "/") {
				continue
			}
			e.Resources = append(e.Resources, clusterv1alpha1.APIResource{Name: r.Name, Kind: r.Kind})
		}
		sort.Slice(e.Resources, func(i, j int) bool { return e.Resources[i].Name < e.Resources[j].Name })
		list = append(list, e)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].GroupVersion < list[j].GroupVersion })
	return list, complete, err
}

// listPages calls fn for every page of a paged list.
func listPages(ctx context.Context, opts metav1.ListOptions, list func(context.Context, metav1.ListOptions) (string, error)) error {
	opts.Limit = pageSize
	for {
		next, err := list(ctx, opts)
		if err != nil {
			return err
		}
		if next == "" {
			return nil
		}
		opts.Continue = next
	}
}

// nodeSummary counts the member's nodes and sums the allocatable resources
// of the Ready ones.
func nodeSummary(ctx context.Context, kube kubernetes.Interface) (*clusterv1alpha1.NodeSummary, corev1.ResourceList, error) {
	sum := &clusterv1alpha1.NodeSummary{}
	allocatable := corev1.ResourceList{}
	err := listPages(ctx, metav1.ListOptions{}, func(ctx context.Context, opts metav1.ListOptions) (string, error) {
		nodes, err := kube.CoreV1().Nodes().List(ctx, opts)
		if err != nil {
			return "", err
		}
		for i := range nodes.Items {
			addNode(sum, allocatable, &nodes.Items[i])
		}
		return nodes.Continue, nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("listing nodes: %w", err)
	}
	return sum, allocatable, nil
}

func addNode(sum *clusterv1alpha1.NodeSummary, allocatable corev1.ResourceList, node *corev1.Node) {
	sum.TotalNum++
	if !nodeReady(node) {
		return
	}
	sum.ReadyNum++
	addResources(allocatable, node.Status.Allocatable)
}

func nodeReady(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// podUsage sums the requests of the member's non-terminal pods:
// allocated for pods bound to a node, allocating for pending pods not yet
// bound. Both count pods under the resource "pods", as Karmada does.
type podUsage struct {
	allocated, allocating corev1.ResourceList
}

func newPodUsage() *podUsage {
	return &podUsage{allocated: corev1.ResourceList{}, allocating: corev1.ResourceList{}}
}

func (u *podUsage) add(pod *corev1.Pod) {
	var into corev1.ResourceList
	switch {
	case pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed:
		return
	case pod.Spec.NodeName != "":
		into = u.allocated
	case pod.Status.Phase == corev1.PodPending || pod.Status.Phase == "":
		into = u.allocating
	default:
		return
	}
	addResources(into, podRequests(pod))
	addResources(into, corev1.ResourceList{corev1.ResourcePods: *resource.NewQuantity(1, resource.DecimalSI)})
}

// podUsageOf lists the member's non-terminal pods page by page.
func podUsageOf(ctx context.Context, kube kubernetes.Interface) (*podUsage, error) {
	u := newPodUsage()
	selector := fields.AndSelectors(
		fields.OneTermNotEqualSelector("status.phase", string(corev1.PodSucceeded)),
		fields.OneTermNotEqualSelector("status.phase", string(corev1.PodFailed)),
	).String()
	err := listPages(ctx, metav1.ListOptions{FieldSelector: selector}, func(ctx context.Context, opts metav1.ListOptions) (string, error) {
		pods, err := kube.CoreV1().Pods(metav1.NamespaceAll).List(ctx, opts)
		if err != nil {
			return "", err
		}
		for i := range pods.Items {
			u.add(&pods.Items[i])
		}
		return pods.Continue, nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing pods: %w", err)
	}
	return u, nil
}

// podRequests is what the scheduler reserves for a pod: the larger of the
// sum of its containers (with restartable init containers, "sidecars") and
// the largest init container (plus the sidecars started before it), plus
// the pod overhead.
func podRequests(pod *corev1.Pod) corev1.ResourceList {
	reqs := corev1.ResourceList{}
	for i := range pod.Spec.Containers {
		addResources(reqs, pod.Spec.Containers[i].Resources.Requests)
	}
	sidecars := corev1.ResourceList{}
	initMax := corev1.ResourceList{}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		r := c.Resources.Requests.DeepCopy()
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			addResources(reqs, r)
			addResources(sidecars, r)
			r = sidecars.DeepCopy()
		} else {
			addResources(r, sidecars)
		}
		maxResources(initMax, r)
	}
	maxResources(reqs, initMax)
	addResources(reqs, pod.Spec.Overhead)
	return reqs
}

func addResources(into, add corev1.ResourceList) {
	for name, q := range add {
		cur := into[name]
		cur.Add(q)
		into[name] = cur
	}
}

func maxResources(into, other corev1.ResourceList) {
	for name, q := range other {
		if cur, ok := into[name]; !ok || q.Cmp(cur) > 0 {
			into[name] = q.DeepCopy()
		}
	}
}

// collected is what a status collection found; nil fields failed and keep
// their previous values.
type collected struct {
	version      string
	apis         []clusterv1alpha1.APIEnablement
	apisComplete bool
	nodes        *clusterv1alpha1.NodeSummary
	resources    *clusterv1alpha1.ResourceSummary
}

// collect reads the member's version, APIs, nodes and pods. Parts that
// fail are left empty and reported together in the error.
func collect(ctx context.Context, kube kubernetes.Interface) (*collected, error) {
	c := &collected{}
	var errs []error
	if v, err := kube.Discovery().ServerVersionWithContext(ctx); err != nil {
		errs = append(errs, fmt.Errorf("reading version: %w", err))
	} else {
		c.version = v.GitVersion
	}
	apis, complete, err := apiEnablements(ctx, kube.Discovery())
	if err != nil && !complete && apis == nil {
		errs = append(errs, fmt.Errorf("discovering APIs: %w", err))
	} else {
		c.apis, c.apisComplete = apis, complete
	}
	nodes, allocatable, err := nodeSummary(ctx, kube)
	if err != nil {
		errs = append(errs, err)
	}
	usage, podErr := podUsageOf(ctx, kube)
	if podErr != nil {
		errs = append(errs, podErr)
	}
	if err == nil && podErr == nil {
		c.nodes = nodes
		c.resources = &clusterv1alpha1.ResourceSummary{
			Allocatable: allocatable,
			Allocated:   usage.allocated,
			Allocating:  usage.allocating,
		}
	}
	return c, errors.Join(errs...)
}
