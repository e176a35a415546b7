package framework

import (
	"context"
	"errors"
	"strings"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
)

// Code is the outcome of a plugin call.
type Code int

const (
	// Success: the cluster passes, or the step worked.
	Success Code = iota
	// Unschedulable: the cluster does not fit (filters), or no acceptable
	// result exists (select, assign). The reasons say why, for users.
	Unschedulable
	// Error: the step could not be computed, e.g. an invalid selector or a
	// placement this version does not support. Retrying with the same
	// binding and clusters gives the same error.
	Error
)

func (c Code) String() string {
	switch c {
	case Success:
		return "Success"
	case Unschedulable:
		return "Unschedulable"
	case Error:
		return "Error"
	}
	return "Unknown"
}

// Status is the result of a plugin call. A nil *Status means Success.
type Status struct {
	code    Code
	reasons []string
	err     error
	plugin  string
}

// NewStatus returns a status with the given code and reasons. Reasons of
// an Unschedulable filter status are counted across clusters in the
// diagnosis, so they must not name the cluster: "cluster(s) did not match
// clusterAffinity", not "cluster m1 did not match".
func NewStatus(code Code, reasons ...string) *Status {
	s := &Status{code: code, reasons: reasons}
	if code == Error {
		s.err = errors.New(s.Message())
	}
	return s
}

// AsStatus wraps err in an Error status; nil gives nil (Success).
func AsStatus(err error) *Status {
	if err == nil {
		return nil
	}
	return &Status{code: Error, reasons: []string{err.Error()}, err: err}
}

// Code returns the status code; Success for nil.
func (s *Status) Code() Code {
	if s == nil {
		return Success
	}
	return s.code
}

// IsSuccess reports whether s is nil or Success.
func (s *Status) IsSuccess() bool { return s.Code() == Success }

// Reasons are the user-facing reasons of the status.
func (s *Status) Reasons() []string {
	if s == nil {
		return nil
	}
	return s.reasons
}

// Message joins the reasons.
func (s *Status) Message() string {
	if s == nil {
		return ""
	}
	return strings.Join(s.reasons, ", ")
}

// AsError returns the error of an Error status, nil otherwise.
func (s *Status) AsError() error {
	if s.Code() != Error {
		return nil
	}
	return s.err
}

// Plugin is the name of the plugin that returned the status (set by the
// Framework).
func (s *Status) Plugin() string {
	if s == nil {
		return ""
	}
	return s.plugin
}

// WithPlugin records the plugin that returned s and returns s.
func (s *Status) WithPlugin(name string) *Status {
	if s != nil {
		s.plugin = name
	}
	return s
}

// Plugin is the base of every scheduling plugin. Name is unique and stable:
// it appears in diagnoses, logs and the plugin selection.
type Plugin interface {
	Name() string
}

// FilterPlugin removes clusters that cannot run the binding. Filter is
// called once per cluster and attempt; it must be cheap, free of I/O and
// must not modify sc or cluster.
type FilterPlugin interface {
	Plugin
	Filter(ctx context.Context, sc *SchedulingContext, cluster *clusterv1alpha1.Cluster) *Status
}

// MaxClusterScore is the highest score a ScorePlugin returns.
const MaxClusterScore int64 = 100

// ScorePlugin ranks the clusters that passed the filters, from 0 to
// MaxClusterScore. The Framework sums the scores of all score plugins.
type ScorePlugin interface {
	Plugin
	Score(ctx context.Context, sc *SchedulingContext, cluster *clusterv1alpha1.Cluster) (int64, *Status)
}

// ClusterScore is a feasible cluster with its total score.
type ClusterScore struct {
	Cluster *clusterv1alpha1.Cluster
	Score   int64
}

// SelectPlugin chooses the clusters to use from the feasible ones, which
// come ordered by score (descending), then name. Spread constraints are
// such a plugin. It returns Unschedulable when no acceptable set exists.
type SelectPlugin interface {
	Plugin
	Select(ctx context.Context, sc *SchedulingContext, candidates []ClusterScore) ([]*clusterv1alpha1.Cluster, *Status)
}

// AssignPlugin divides the binding's replicas over the selected clusters.
// The result may be in any order and may contain clusters with zero
// replicas; the Framework sorts it by cluster name.
type AssignPlugin interface {
	Plugin
	Assign(ctx context.Context, sc *SchedulingContext, selected []*clusterv1alpha1.Cluster) ([]workv1alpha2.TargetCluster, *Status)
}
