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
// not in time (see Left). A nil *Handoff hands nothing over: every method
// is a no-op.
type Handoff struct {
	mu        sync.Mutex
	pending   map[types.UID]Scheduled
	lastSweep time.Time
	timeout   time.Duration
	queued    time.Duration
}

// DefaultHandoffTimeout is how long the scheduler leaves its status part
// to the executor once the executor has taken the binding up (or has
// written this generation's status without the part) before writing it
// itself: a binding the executor cannot sync (its template gone, an API
// error) still shows its Scheduled condition soon.
const DefaultHandoffTimeout = 15 * time.Second

// DefaultQueuedTimeout bounds the wait for an executor that has not taken
// the binding up at all: in a burst its queue holds a binding for longer
// than DefaultHandoffTimeout (25–50 s at 100,000 templates), and writing
// the part then costs a second status write that races the executor's
// (issue 14). The bound is for an executor that never comes (a lost
// event): the Scheduled condition still shows within it.
const DefaultQueuedTimeout = 5 * time.Minute

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
	// Seen is when the executor last took the binding up at Generation
	// with the part pending (zero: not yet).
	Seen time.Time
}

// NewHandoff returns an empty Handoff whose parts wait timeout for an
// executor that has taken their binding up, and queued for one that has
// not (DefaultHandoffTimeout and DefaultQueuedTimeout when 0; queued is at
// least timeout).
func NewHandoff(timeout, queued time.Duration) *Handoff {
	if timeout <= 0 {
		timeout = DefaultHandoffTimeout
	}
	if queued <= 0 {
		queued = DefaultQueuedTimeout
	}
	return &Handoff{pending: map[types.UID]Scheduled{}, timeout: timeout, queued: max(queued, timeout)}
}

// Timeout is how long a part waits for an executor that has taken the
// binding up, and how often the scheduler looks again while it waits.
func (h *Handoff) Timeout() time.Duration {
	if h == nil {
		return 0
	}
	return h.timeout
}

// Left is how much longer the scheduler leaves s to the executor at now (0
// or less: write it itself). executorWrote says the binding's status shows
// the executor's write of s's generation: it took the binding up before the
// part was handed over, so Seen was never set, and its own write does not
// bring the binding back to it.
func (h *Handoff) Left(s Scheduled, executorWrote bool, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	switch {
	case !s.Seen.IsZero():
		return s.Seen.Add(h.timeout).Sub(now)
	case executorWrote:
		return s.Since.Add(h.timeout).Sub(now)
	default: // still queued in the executor
		return s.Since.Add(h.queued).Sub(now)
	}
}

// Seen records that the executor takes up the binding uid at generation
// now; a part pending for that generation then waits Timeout from now.
func (h *Handoff) Seen(uid types.UID, generation int64, now time.Time) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if s, ok := h.pending[uid]; ok && s.Generation == generation {
		s.Seen = now
		h.pending[uid] = s
	}
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
	// the status itself when it next looks), so those older than any wait go.
	if s.Since.Sub(h.lastSweep) > h.timeout {
		h.lastSweep = s.Since
		for k, p := range h.pending {
			if s.Since.Sub(p.Since) > 2*h.queued {
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

// Same reports whether s and o are the same part, whenever handed over
// and seen.
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
