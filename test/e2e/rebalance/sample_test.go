package rebalance

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/atoll-dev/atoll/test/framework"
)

// sample is one second's view of a workload in every member.
type sample struct {
	at       time.Time
	ready    map[string]int // Ready pods
	replicas map[string]int // the member Deployment's spec.replicas (-1: absent)
}

func (s sample) totalReady() int {
	n := 0
	for _, r := range s.ready {
		n += r
	}
	return n
}

func (s sample) String() string {
	var parts []string
	for _, m := range members {
		parts = append(parts, fmt.Sprintf("%s ready %d spec %d", m, s.ready[m], s.replicas[m]))
	}
	return s.at.Format("15:04:05") + " " + strings.Join(parts, ", ")
}

// sampler samples a workload's member state every second until stopped.
type sampler struct {
	mu      sync.Mutex
	samples []sample
	errs    int
	stop    chan struct{}
	done    chan struct{}
}

// startSampler begins sampling app in ns in every member.
func startSampler(ctx context.Context, t *testing.T, ns, app string) *sampler {
	t.Helper()
	clients := map[string]kubernetes.Interface{}
	for _, m := range members {
		clients[m] = world.MemberClientset(t, m)
	}
	s := &sampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			one := sample{at: time.Now(), ready: map[string]int{}, replicas: map[string]int{}}
			ok := true
			for _, m := range members {
				ready, err := framework.ReadyPods(ctx, clients[m], ns, app)
				if err != nil {
					ok = false
					break
				}
				one.ready[m] = ready
				one.replicas[m] = -1
				if d, err := clients[m].AppsV1().Deployments(ns).Get(ctx, app, metav1.GetOptions{}); err == nil && d.Spec.Replicas != nil {
					one.replicas[m] = int(*d.Spec.Replicas)
				}
			}
			s.mu.Lock()
			if ok {
				s.samples = append(s.samples, one)
			} else {
				s.errs++
			}
			s.mu.Unlock()
			select {
			case <-s.stop:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(s.end)
	return s
}

// end stops sampling (idempotent) and returns the samples.
func (s *sampler) end() {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	<-s.done
}

func (s *sampler) all() []sample {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]sample(nil), s.samples...)
}

// checkFloor fails when the total of Ready pods was ever below floor.
func checkFloor(t *testing.T, samples []sample, floor int) {
	t.Helper()
	for _, s := range samples {
		if s.totalReady() < floor {
			t.Errorf("capacity dipped: %d Ready pods in total, below %d, at %s", s.totalReady(), floor, s)
			return
		}
	}
}

// checkMonotonic fails when a member's spec.replicas moved against the
// move's direction: up for the clusters in grow, down for the others.
func checkMonotonic(t *testing.T, samples []sample, grow map[string]bool) {
	t.Helper()
	for _, m := range members {
		prev := -1
		for _, s := range samples {
			r := s.replicas[m]
			if r < 0 {
				continue
			}
			if prev >= 0 && ((grow[m] && r < prev) || (!grow[m] && r > prev)) {
				t.Errorf("%s reversed: spec.replicas %d -> %d at %s", m, prev, r, s)
				return
			}
			prev = r
		}
	}
}

// logSamples prints the samples where something changed.
func logSamples(t *testing.T, samples []sample) {
	t.Helper()
	last := ""
	for _, s := range samples {
		line := strings.SplitN(s.String(), " ", 2)[1]
		if line != last {
			t.Log(s.String())
			last = line
		}
	}
}

// finish stops sampling, logs the samples and checks the capacity floor
// and the direction of each member (grow: the members that only grow);
// it returns the samples.
func (s *sampler) finish(t *testing.T, floor int, grow map[string]bool) []sample {
	t.Helper()
	s.end()
	samples := s.all()
	logSamples(t, samples)
	checkFloor(t, samples, floor)
	checkMonotonic(t, samples, grow)
	return samples
}
