package baseline

import (
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/atoll-dev/atoll/apis/apps/v1alpha1"
	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	"github.com/atoll-dev/atoll/pkg/baseline"
	"github.com/atoll-dev/atoll/pkg/util/text"
)

// This file is the per-cluster decision, free of clients: from what the
// bindings say about each component on each cluster, which clusters each
// component is placed on, which template version each may run, and the
// status matrix.

// observed is one component on one cluster, from its bindings.
type observed struct {
	// placed: a binding of the component places the cluster.
	placed bool
	// present: placed, or a member copy the executor still reports.
	present bool
	// ready: every binding is ready there at its current version.
	ready bool
	// held: a binding holds a new version there for its prerequisites.
	held bool
	// failed says why the component failed there (kstatus Failed, or an
	// apply error), "" otherwise.
	failed string
	// message is the first not-ready explanation.
	message string
}

// component is what the plan knows of one component.
type component struct {
	name string
	// active: in the spec (and the baseline is not being deleted); else the
	// component is withdrawn everywhere.
	active  bool
	gates   bool
	timeout time.Duration
	// keepsData: a template of the component holds data (a
	// PersistentVolumeClaim): withdrawing leaves its copies in the
	// clusters; the component is released, not withdrawn.
	keepsData bool
	// bindings is how many bindings the component has.
	bindings int
	// blocked says why the component cannot be delivered anywhere (its
	// templates are claimed by another policy, or none is selected yet).
	blocked string
	on      map[string]observed // by cluster
	// objects are the component's bindings (written after the plan).
	objects []client.Object
}

// input is everything one plan reads.
type input struct {
	// graph has every component, active and withdrawing, with their
	// dependsOn.
	graph      *baseline.Graph
	components map[string]*component
	// matching are the clusters the baseline selects (not deleting).
	matching map[string]bool
	// clusters are every cluster to decide for: matching ones and those
	// any binding still reaches, sorted.
	clusters []string
	previous map[string]appsv1alpha1.BaselineClusterStatus
	// clusterObjects are the Clusters by name (for the gate).
	clusterObjects map[string]*clusterv1alpha1.Cluster
	now            time.Time
}

// decision is where one component goes on one cluster.
type decision struct {
	// place: the component's bindings place the cluster.
	place bool
	// allow: the component's current versions may be applied there (its
	// prerequisites are ready); otherwise the version already allowed
	// stays.
	allow bool
}

// output is the plan.
type output struct {
	decisions map[string]map[string]decision // component → cluster
	status    []appsv1alpha1.BaselineClusterStatus
	// requeue is when a timeout runs out, 0 for none.
	requeue time.Duration
}

func plan(in input) output {
	out := output{decisions: map[string]map[string]decision{}}
	order := in.graph.Order()
	for _, name := range order {
		out.decisions[name] = map[string]decision{}
	}
	for _, cluster := range in.clusters {
		prev := in.previous[cluster]
		prevState := map[string]appsv1alpha1.ComponentStatus{}
		for _, c := range prev.Components {
			prevState[c.Name] = c
		}
		cs := appsv1alpha1.BaselineClusterStatus{Name: cluster, MatchedTime: prev.MatchedTime, BaselineReadyTime: prev.BaselineReadyTime}
		matching := in.matching[cluster]
		if matching && cs.MatchedTime == nil {
			cs.MatchedTime = &metav1.Time{Time: in.now}
		}
		ready, total, gatingReady := 0, 0, true
		for _, name := range order {
			c := in.components[name]
			o := c.on[cluster]
			var d decision
			var st appsv1alpha1.ComponentStatus
			if c.active && matching {
				waiting := notReady(in, in.graph.Deps(name), cluster)
				d.allow = len(waiting) == 0 && c.blocked == ""
				d.place = c.bindings > 0 && (o.placed || d.allow)
				st = deliveryState(c, o, d, waiting)
				total++
			} else {
				staying := present(in, in.graph.Dependents(name), cluster)
				d.place = o.placed && (len(staying) > 0 || c.keepsData)
				if !o.present {
					continue // gone from this cluster: nothing to show
				}
				st = appsv1alpha1.ComponentStatus{State: appsv1alpha1.ComponentWithdrawing, Message: "withdrawing"}
				switch {
				case len(staying) > 0:
					st.Message = "Waiting for " + strings.Join(staying, ", ") + " to be withdrawn first"
				case c.keepsData:
					st.Message = "kept: it holds data; released (left in the cluster) once its dependents are withdrawn everywhere"
				}
			}
			out.decisions[name][cluster] = d
			st.Name = name
			pst := prevState[name]
			if st.State == appsv1alpha1.ComponentApplying && c.timeout > 0 {
				// Still not ready after its timeout: Failed, until it is
				// ready (a late component still unblocks its dependents).
				since := in.now
				if pst.State == appsv1alpha1.ComponentApplying && pst.Since != nil {
					since = pst.Since.Time
				}
				left := since.Add(c.timeout).Sub(in.now)
				switch {
				case timedOut(pst) || left <= 0:
					st.State, st.Message = appsv1alpha1.ComponentFailed, timeoutMessage(c.timeout, st.Message)
				case out.requeue == 0 || left < out.requeue:
					out.requeue = left
				}
			}
			st = carry(st, pst, in.now)
			if st.State == appsv1alpha1.ComponentReady {
				ready++
			} else if c.active && c.gates {
				gatingReady = false
			}
			cs.Components = append(cs.Components, st)
		}
		if !matching && len(cs.Components) == 0 {
			continue // withdrawn from a cluster the baseline no longer selects
		}
		if matching {
			cs.Ready = fmt.Sprintf("%d/%d", ready, total)
			if gatingReady && cs.BaselineReadyTime == nil {
				cs.BaselineReadyTime = &metav1.Time{Time: in.now}
			}
		}
		out.status = append(out.status, cs)
	}
	return out
}

// deliveryState is the state of an active component on a matching cluster.
func deliveryState(c *component, o observed, d decision, waiting []string) appsv1alpha1.ComponentStatus {
	switch {
	case c.blocked != "" && !o.placed:
		return appsv1alpha1.ComponentStatus{State: appsv1alpha1.ComponentFailed, Message: c.blocked}
	case c.bindings == 0:
		return appsv1alpha1.ComponentStatus{State: appsv1alpha1.ComponentWaiting, Message: "Waiting for its resource templates: none is selected and claimed yet"}
	case !d.place:
		return appsv1alpha1.ComponentStatus{State: appsv1alpha1.ComponentWaiting, Message: "Waiting for " + strings.Join(waiting, ", ")}
	case o.ready:
		return appsv1alpha1.ComponentStatus{State: appsv1alpha1.ComponentReady}
	case o.failed != "":
		return appsv1alpha1.ComponentStatus{State: appsv1alpha1.ComponentFailed, Message: o.failed}
	case o.held && len(waiting) > 0:
		return appsv1alpha1.ComponentStatus{State: appsv1alpha1.ComponentWaiting, Message: "Waiting for " + strings.Join(waiting, ", ") + " before the new version rolls out"}
	case c.blocked != "":
		return appsv1alpha1.ComponentStatus{State: appsv1alpha1.ComponentFailed, Message: c.blocked}
	default:
		return appsv1alpha1.ComponentStatus{State: appsv1alpha1.ComponentApplying, Message: o.message}
	}
}

const timeoutPrefix = "not ready within "

func timeoutMessage(timeout time.Duration, msg string) string {
	return fmt.Sprintf("%s%s: %s", timeoutPrefix, timeout, msg)
}

// timedOut: the previous state is a timeout's Failed.
func timedOut(prev appsv1alpha1.ComponentStatus) bool {
	return prev.State == appsv1alpha1.ComponentFailed && strings.HasPrefix(prev.Message, timeoutPrefix)
}

// notReady are the components of names not ready on cluster.
func notReady(in input, names []string, cluster string) []string {
	var out []string
	for _, n := range names {
		if !in.components[n].on[cluster].ready {
			out = append(out, n)
		}
	}
	return out
}

// present are the components of names still on cluster.
func present(in input, names []string, cluster string) []string {
	var out []string
	for _, n := range names {
		if in.components[n].on[cluster].present {
			out = append(out, n)
		}
	}
	return out
}

// carry keeps the previous since (and readyTime) while the state stays, so
// an unchanged matrix causes no write.
func carry(st, prev appsv1alpha1.ComponentStatus, now time.Time) appsv1alpha1.ComponentStatus {
	st.Message = text.Truncate(st.Message, 1024)
	st.ReadyTime = prev.ReadyTime
	if prev.State == st.State && prev.Since != nil {
		st.Since = prev.Since
		return st
	}
	st.Since = &metav1.Time{Time: now}
	if st.State == appsv1alpha1.ComponentReady {
		st.ReadyTime = st.Since
	}
	return st
}
