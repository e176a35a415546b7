package bindingkind

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/util/semantic"
)

// Handoff carries the scheduler's part of a binding status to the
// executor's next write of that status, so that a new placement costs one
// status write instead of two (the Scheduled condition, then the applied
// status a few milliseconds later). Both controllers must run in the same
// process; the scheduler writes the status itself when the executor has
// not within the handoff's timeout (see Pending). A nil *Handoff hands nothing
// over: every method is a no-op.
type Handoff struct {
	mu        sync.Mutex
	pending   map[types.UID]Scheduled
	lastSweep time.Time
	timeout   time.Duration
}

// DefaultHandoffTimeout is how long the scheduler leaves its status part
// to the executor before writing it itself: longer than the executor takes
// for a binding in a burst, short enough that a binding the executor cannot
// sync (its template gone, an API error) still shows its Scheduled
// condition soon.
const DefaultHandoffTimeout = 15 * time.Second

// Scheduled is the scheduler's part of a binding status for one
// generation of the binding.
type Scheduled struct {
	// Generation is the binding generation the part describes; an
	// executor seeing another generation leaves it alone.
	Generation        int64
	AffinityName      string
	LastScheduledTime *metav1.Time
	Condition         metav1.Condition
	// Since is when the scheduler handed it over.
	Since time.Time
}

// NewHandoff returns an empty Handoff whose parts the scheduler writes
// itself after timeout (DefaultHandoffTimeout when 0).
func NewHandoff(timeout time.Duration) *Handoff {
	if timeout <= 0 {
		timeout = DefaultHandoffTimeout
	}
	return &Handoff{pending: map[types.UID]Scheduled{}, timeout: timeout}
}

// Timeout is how long a part waits for the executor.
func (h *Handoff) Timeout() time.Duration {
	if h == nil {
		return 0
	}
	return h.timeout
}

// Put hands s over for the binding uid, replacing what was pending.
func (h *Handoff) Put(uid types.UID, s Scheduled) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.pending[uid] = s
	// Parts of bindings deleted before the executor wrote them would stay
	// forever; dropping a part is always safe (the scheduler then writes
	// the status itself at its timeout), so old ones go.
	if s.Since.Sub(h.lastSweep) > h.timeout {
		h.lastSweep = s.Since
		for k, p := range h.pending {
			if s.Since.Sub(p.Since) > 2*h.timeout {
				delete(h.pending, k)
			}
		}
	}
}

// Pending returns what is pending for uid at generation.
func (h *Handoff) Pending(uid types.UID, generation int64) (Scheduled, bool) {
	if h == nil {
		return Scheduled{}, false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.pending[uid]
	return s, ok && s.Generation == generation
}

// Apply merges what is pending for uid at generation into status and
// reports whether there was something.
func (h *Handoff) Apply(uid types.UID, generation int64, status *workv1alpha2.ResourceBindingStatus) bool {
	s, ok := h.Pending(uid, generation)
	if !ok {
		return false
	}
	s.ApplyTo(status)
	return true
}

// Done drops what is pending for uid up to generation: a status with it
// has been written (or the binding is gone, generation 0 meaning any).
func (h *Handoff) Done(uid types.UID, generation int64) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if s, ok := h.pending[uid]; ok && (generation == 0 || s.Generation <= generation) {
		delete(h.pending, uid)
	}
}

// Len is the number of pending parts.
func (h *Handoff) Len() int {
	if h == nil {
		return 0
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.pending)
}

// Same reports whether s and o are the same part, whenever handed over.
func (s Scheduled) Same(o Scheduled) bool {
	return s.Generation == o.Generation && s.AffinityName == o.AffinityName &&
		semantic.Equal(s.LastScheduledTime, o.LastScheduledTime) &&
		semantic.Equal(s.Condition, o.Condition)
}

// ApplyTo sets the scheduler's fields of status to s.
func (s Scheduled) ApplyTo(status *workv1alpha2.ResourceBindingStatus) {
	status.SchedulerObservedGeneration = s.Generation
	status.SchedulerObservedAffinityName = s.AffinityName
	if s.LastScheduledTime != nil {
		status.LastScheduledTime = s.LastScheduledTime.DeepCopy()
	}
	meta.SetStatusCondition(&status.Conditions, s.Condition)
}

// ScheduledOf reads the scheduler's part of status, at generation.
func ScheduledOf(status *workv1alpha2.ResourceBindingStatus, generation int64) Scheduled {
	s := Scheduled{Generation: generation, AffinityName: status.SchedulerObservedAffinityName}
	if status.LastScheduledTime != nil {
		s.LastScheduledTime = status.LastScheduledTime.DeepCopy()
	}
	if c := meta.FindStatusCondition(status.Conditions, workv1alpha2.Scheduled); c != nil {
		s.Condition = *c
	}
	return s
}
