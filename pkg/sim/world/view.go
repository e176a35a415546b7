package world

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/atoll-dev/atoll/pkg/sim/simdir"
)

const (
	// DefaultStaleAfter is how old a member's ReadyReport may be before the
	// world considers the member down and sends it no traffic.
	DefaultStaleAfter = 3 * time.Second
	// DefaultCacheTTL is how long a View reuses what it read from the files.
	DefaultCacheTTL = 500 * time.Millisecond
)

// View is one member's view of the world: the CPU share of its pods. It is
// safe for concurrent use.
type View struct {
	// StaleAfter and CacheTTL default to DefaultStaleAfter and
	// DefaultCacheTTL; change them before the first use only.
	StaleAfter time.Duration
	CacheTTL   time.Duration

	dataDir string
	self    string
	clock   clock.PassiveClock

	mu   sync.Mutex
	snap *snapshot
}

// snapshot is what a View read from the files at one time.
type snapshot struct {
	read            time.Time
	loads           simdir.Loads
	selfPartitioned bool
	// selfApps is self's own report, whatever its age: self is running.
	selfApps map[string]int
	// others is, per app, the Ready pods of the other members that are
	// reachable: fresh report and not partitioned.
	others map[string]int
	// partitioned remembers each member's last known fault state so a file
	// that cannot be read does not flip it.
	partitioned map[string]bool
}

// NewView returns the view of member self in the world under dataDir.
func NewView(dataDir, self string, clk clock.PassiveClock) *View {
	return &View{
		StaleAfter: DefaultStaleAfter,
		CacheTTL:   DefaultCacheTTL,
		dataDir:    dataDir,
		self:       self,
		clock:      clk,
	}
}

// PodCPU returns the millicores one pod of app in member self uses now,
// uncapped (see CapCPU): zero when the pod is not Ready, when self is
// partitioned or when app has no load; otherwise the app's load divided by
// the Ready pods of app in all reachable members.
func (v *View) PodCPU(app string, podReady bool) int64 {
	if !podReady || app == "" {
		return 0
	}
	s := v.snapshot()
	load := s.loads[app]
	if s.selfPartitioned || load <= 0 {
		return 0
	}
	// This pod is Ready, so self has at least one even when its report is
	// missing or lags behind.
	pods := int64(max(s.selfApps[app], 1)) + int64(s.others[app])
	return load / pods
}

// snapshot returns the cached snapshot, re-reading the files when it is
// older than CacheTTL.
func (v *View) snapshot() *snapshot {
	v.mu.Lock()
	defer v.mu.Unlock()
	now := v.clock.Now()
	if v.snap != nil && now.Sub(v.snap.read) < v.CacheTTL && !now.Before(v.snap.read) {
		return v.snap
	}
	v.snap = v.readSnapshot(now, v.snap)
	return v.snap
}

func (v *View) readSnapshot(now time.Time, prev *snapshot) *snapshot {
	logger := klog.Background().WithValues("member", v.self)
	s := &snapshot{
		read:        now,
		selfApps:    map[string]int{},
		others:      map[string]int{},
		partitioned: map[string]bool{},
	}

	loads, err := ReadLoads(v.dataDir)
	switch {
	case err == nil:
		s.loads = loads
	case prev != nil:
		logger.V(2).Info("Keeping the previous loads", "err", err)
		s.loads = prev.loads
	default:
		logger.V(2).Info("No loads", "err", err)
	}

	s.selfPartitioned = v.partitioned(v.self, prev, s)

	readyDir := filepath.Dir(simdir.ReadyFile(v.dataDir, v.self))
	entries, err := os.ReadDir(readyDir)
	if err != nil && !os.IsNotExist(err) {
		logger.V(2).Info("Cannot list ready reports", "dir", readyDir, "err", err)
	}
	for _, e := range entries {
		member, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || e.IsDir() || member == "" || strings.HasPrefix(member, ".") {
			continue
		}
		var report simdir.ReadyReport
		if found, err := simdir.ReadJSON(simdir.ReadyFile(v.dataDir, member), &report); err != nil || !found {
			if err != nil {
				logger.V(2).Info("Ignoring an unreadable ready report", "otherMember", member, "err", err)
			}
			continue
		}
		if member == v.self {
			for app, n := range report.Apps {
				s.selfApps[app] = max(n, 0)
			}
			continue
		}
		if age := now.Sub(report.Time); age > v.StaleAfter {
			continue
		}
		if v.partitioned(member, prev, s) {
			continue
		}
		for app, n := range report.Apps {
			s.others[app] += max(n, 0)
		}
	}
	return s
}

// partitioned reads member's fault state into s, falling back on what prev
// knew when the file cannot be read.
func (v *View) partitioned(member string, prev, s *snapshot) bool {
	var fault simdir.Fault
	_, err := simdir.ReadJSON(simdir.FaultFile(v.dataDir, member), &fault)
	p := fault.Partitioned
	if err != nil {
		klog.Background().V(2).Info("Cannot read the fault state, keeping the last known one", "member", member, "err", err)
		p = prev != nil && prev.partitioned[member]
	}
	s.partitioned[member] = p
	return p
}
