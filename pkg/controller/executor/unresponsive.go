package executor

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"syscall"
	"time"

	"k8s.io/utils/clock"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// unresponsiveWindow is how long a member that did not answer is skipped
// before one binding tries it again.
const unresponsiveWindow = 15 * time.Second

// unresponsive remembers members whose last call timed out or could not
// connect. Until the cluster controller has marked such a member not Ready
// (which takes --cluster-failure-threshold), every binding placed there
// would otherwise wait out a request timeout, holding a worker that the
// bindings of healthy members need: one dead member must delay only its
// own work (DESIGN.md section 9, rule 7).
type unresponsive struct {
	mu    sync.Mutex
	until map[string]time.Time
	clock clock.PassiveClock
}

func newUnresponsive(c clock.PassiveClock) *unresponsive {
	return &unresponsive{until: map[string]time.Time{}, clock: c}
}

// observe marks cluster unresponsive when err says it did not answer.
func (u *unresponsive) observe(cluster string, err error) {
	if !didNotAnswer(err) {
		return
	}
	u.mu.Lock()
	u.until[cluster] = u.clock.Now().Add(unresponsiveWindow)
	u.mu.Unlock()
}

// clear forgets cluster (it answered, or turned Ready).
func (u *unresponsive) clear(cluster string) {
	u.mu.Lock()
	delete(u.until, cluster)
	u.mu.Unlock()
}

// skip says why cluster is skipped now ("" when it is not) and how long
// until it is tried again.
func (u *unresponsive) skip(cluster string) (string, time.Duration) {
	u.mu.Lock()
	defer u.mu.Unlock()
	left := u.until[cluster].Sub(u.clock.Now())
	if left <= 0 {
		return "", 0
	}
	return fmt.Sprintf("cluster %s did not answer; trying again in %v", cluster, left.Round(time.Second)), left
}

// didNotAnswer reports whether err is a timeout or a refused, reset or
// unroutable connection, rather than an answer from the member.
func didNotAnswer(err error) bool {
	if err == nil {
		return false
	}
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout(),
		errors.Is(err, errNotSynced),
		apierrors.IsTimeout(err),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return true
	}
	return false
}

// errNotSynced: a member informer did not list within the wait, which a
// member that answers does in well under a second.
var errNotSynced = errors.New("cache not synced yet")
