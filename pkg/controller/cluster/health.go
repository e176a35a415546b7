package cluster

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
)

// Reasons of the Ready condition (Karmada's).
const (
	ReasonClusterReady        = "ClusterReady"
	ReasonClusterNotReady     = "ClusterNotReady"
	ReasonClusterNotReachable = "ClusterNotReachable"
)

// probeResult is what one health probe saw.
type probeResult struct {
	status  metav1.ConditionStatus
	reason  string
	message string
}

func (p probeResult) condition(generation int64) metav1.Condition {
	return metav1.Condition{
		Type:               clusterv1alpha1.ClusterConditionReady,
		Status:             p.status,
		Reason:             p.reason,
		Message:            p.message,
		ObservedGeneration: generation,
	}
}

// probe asks the member's /readyz (falling back to /healthz on servers
// without it) within timeout. An HTTP 200 is Ready=True; any other answer
// is False; no answer (refused, timed out, TLS failure) is Unknown.
func probe(ctx context.Context, rc rest.Interface, timeout time.Duration) probeResult {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	code, body, err := get(ctx, rc, "/readyz")
	if code == http.StatusNotFound {
		code, body, err = get(ctx, rc, "/healthz")
	}
	switch {
	case code == http.StatusOK:
		return probeResult{metav1.ConditionTrue, ReasonClusterReady, "cluster is healthy and ready to accept workloads"}
	case code != 0:
		return probeResult{metav1.ConditionFalse, ReasonClusterNotReady,
			fmt.Sprintf("cluster is not healthy: /readyz answered %d %s", code, firstLine(body))}
	default:
		return probeResult{metav1.ConditionUnknown, ReasonClusterNotReachable,
			fmt.Sprintf("cluster is not reachable: %v", err)}
	}
}

func get(ctx context.Context, rc rest.Interface, path string) (int, []byte, error) {
	var code int
	res := rc.Get().AbsPath(path).Do(ctx)
	res.StatusCode(&code)
	body, err := res.Raw()
	return code, body, err
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// thresholds say how long a new Ready state must last before it is
// recorded: success for a change to True, failure for a change to False or
// Unknown.
type thresholds struct {
	success, failure time.Duration
}

// pending is a Ready state observed, but not yet recorded, since a time.
type pending struct {
	status metav1.ConditionStatus
	since  time.Time
}

// decideReady returns the Ready status to record given the recorded one
// (current, "" when there is none), this probe's (observed) and the
// pending state, with the new pending state and, while pending, how long
// until the threshold passes. A cluster without a Ready condition takes
// the observed state at once. Moving between False and Unknown keeps the
// pending time: both are failures, and a member flapping between "answers
// not ok" and "does not answer" must still become not ready.
func decideReady(current, observed metav1.ConditionStatus, p *pending, now time.Time, th thresholds) (metav1.ConditionStatus, *pending, time.Duration) {
	if current == "" || observed == current {
		return observed, nil, 0
	}
	threshold := th.failure
	if observed == metav1.ConditionTrue {
		threshold = th.success
	}
	switch {
	case p == nil, p.status != observed && (p.status == metav1.ConditionTrue || observed == metav1.ConditionTrue):
		p = &pending{status: observed, since: now}
	default:
		p = &pending{status: observed, since: p.since}
	}
	elapsed := now.Sub(p.since)
	if elapsed >= threshold {
		return observed, nil, 0
	}
	return current, p, threshold - elapsed
}

// tracker holds the pending Ready state per cluster.
type tracker struct {
	mu      sync.Mutex
	pending map[string]*pending
}

func newTracker() *tracker { return &tracker{pending: map[string]*pending{}} }

func (t *tracker) decide(cluster string, current, observed metav1.ConditionStatus, now time.Time, th thresholds) (metav1.ConditionStatus, time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	status, p, wait := decideReady(current, observed, t.pending[cluster], now, th)
	if p == nil {
		delete(t.pending, cluster)
	} else {
		t.pending[cluster] = p
	}
	return status, wait
}

func (t *tracker) forget(cluster string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.pending, cluster)
}
