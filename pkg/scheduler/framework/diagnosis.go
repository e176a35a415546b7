package framework

import (
	"fmt"
	"sort"
	"strings"
)

// Diagnosis says why an attempt found no result.
type Diagnosis struct {
	// ClusterToStatus holds, per rejected cluster, the status of the first
	// filter that rejected it.
	ClusterToStatus map[string]*Status
	// PostFilterStatus is the Unschedulable status of the select or assign
	// plugin when clusters passed the filters but no result was possible.
	PostFilterStatus *Status
}

// FitError is an attempt that found no cluster for the binding
// (Scheduled=False with reason NoClusterFit).
type FitError struct {
	NumAllClusters int
	Feasible       int
	Diagnosis      Diagnosis
}

// Error is the user-facing message, Kubernetes style:
//
//	0/3 clusters are available: 2 cluster(s) did not match clusterAffinity, 1 cluster(s) had untolerated taint {cluster.karmada.io/unreachable: NoSchedule}.
//
// Reasons are counted over the rejected clusters and listed by count
// (largest first), then alphabetically, so the message is stable.
func (e *FitError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d/%d clusters are available", e.Feasible, e.NumAllClusters)
	if e.NumAllClusters == 0 {
		b.WriteString(": no clusters are registered.")
		return b.String()
	}
	counts := map[string]int{}
	for _, st := range e.Diagnosis.ClusterToStatus {
		for _, r := range st.Reasons() {
			counts[r]++
		}
	}
	reasons := make([]string, 0, len(counts))
	for r := range counts {
		reasons = append(reasons, r)
	}
	sort.Slice(reasons, func(i, j int) bool {
		if counts[reasons[i]] != counts[reasons[j]] {
			return counts[reasons[i]] > counts[reasons[j]]
		}
		return reasons[i] < reasons[j]
	})
	parts := make([]string, len(reasons))
	for i, r := range reasons {
		parts[i] = fmt.Sprintf("%d %s", counts[r], r)
	}
	sep := ": "
	if len(parts) > 0 {
		b.WriteString(sep)
		b.WriteString(strings.Join(parts, ", "))
		sep = "; "
	}
	if st := e.Diagnosis.PostFilterStatus; st != nil {
		b.WriteString(sep)
		if st.Plugin() != "" {
			b.WriteString(st.Plugin() + ": ")
		}
		b.WriteString(st.Message())
	}
	b.WriteString(".")
	return b.String()
}

// UnschedulablePlugins lists the plugins that rejected clusters or the
// result, sorted.
func (e *FitError) UnschedulablePlugins() []string {
	set := map[string]bool{}
	for _, st := range e.Diagnosis.ClusterToStatus {
		set[st.Plugin()] = true
	}
	if st := e.Diagnosis.PostFilterStatus; st != nil {
		set[st.Plugin()] = true
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Reason is the Scheduled=False condition reason: NoClusterFit when no
// cluster passed the filters, Unschedulable when clusters passed but the
// result could not be built from them (spread constraints, not enough
// available replicas), as Karmada tells a FitError from an
// UnschedulableError.
func (e *FitError) Reason() string {
	if e.Feasible > 0 && e.Diagnosis.PostFilterStatus != nil {
		return "Unschedulable"
	}
	return "NoClusterFit"
}

// TermsFitError is an attempt in which no clusterAffinities term fits: the
// FitError of every term tried, in order.
type TermsFitError struct {
	Terms  []string
	Errors []*FitError
}

// Error lists each term's message:
//
//	no clusterAffinities term fits: term "a": 0/3 clusters are available: …; term "b": ….
func (e *TermsFitError) Error() string {
	var b strings.Builder
	b.WriteString("no clusterAffinities term fits")
	sep := ": "
	for i, fe := range e.Errors {
		fmt.Fprintf(&b, "%sterm %q: %s", sep, e.Terms[i], strings.TrimSuffix(fe.Error(), "."))
		sep = "; "
	}
	b.WriteString(".")
	return b.String()
}

// Unwrap returns the first term's FitError, so errors.As finds a
// *FitError (whose Reason is the condition reason).
func (e *TermsFitError) Unwrap() error {
	if len(e.Errors) == 0 {
		return nil
	}
	return e.Errors[0]
}
