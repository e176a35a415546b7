// Package bench measures atoll on purpose (make bench); nothing here runs
// in make test. Budgets for this machine (2 cores) are in docs/benchmarks.md.
package bench

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/atoll-dev/atoll/pkg/sim/simdir"
	"github.com/atoll-dev/atoll/test/framework"
)

// BenchmarkUpReady measures the time from starting `atoll up` to its ready
// line, on a fresh data dir ("cold": CA, keys and etcd created) and on a
// restart of the same data dir ("warm"), and the resident memory of the
// idle control plane after it settles.
func BenchmarkUpReady(b *testing.B) {
	for _, mode := range []string{"fresh", "restart"} {
		b.Run(mode, func(b *testing.B) {
			var total time.Duration
			var rssMB float64
			for i := 0; i < b.N; i++ {
				dir := b.TempDir()
				if mode == "restart" {
					first := framework.StartControlPlane(b, framework.Options{DataDir: dir})
					if err := first.Stop(); err != nil {
						b.Fatal(err)
					}
				}
				cp := framework.StartControlPlane(b, framework.Options{DataDir: dir})
				total += cp.ReadyAfter
				time.Sleep(idleSettle)
				rss, err := upResidentMB(cp)
				if err != nil {
					b.Fatal(err)
				}
				rssMB += rss
				if err := cp.Stop(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(total.Seconds()/float64(b.N), "s-to-ready")
			b.ReportMetric(rssMB/float64(b.N), "MB-idle-rss")
		})
	}
}

// idleSettle lets start-up garbage be collected before RSS is read.
const idleSettle = 20 * time.Second

// upResidentMB is the resident memory of `atoll up` as a whole minus its
// members: the supervising `atoll up` process plus its control-plane
// process (etcd, kube-apiserver and the controllers), which is where almost
// all of it is.
func upResidentMB(cp *framework.ControlPlane) (float64, error) {
	up, err := residentMB(cp.PID())
	if err != nil {
		return 0, err
	}
	pid := cp.ControlPlanePID()
	if pid == 0 {
		return 0, fmt.Errorf("no control-plane process in %s", cp.DataDir)
	}
	child, err := residentMB(pid)
	if err != nil {
		return 0, fmt.Errorf("control-plane process: %w", err)
	}
	return up + child, nil
}

func residentMB(pid int) (float64, error) { return procStatusMB(pid, "VmRSS") }

// procStatusMB reads a memory field (VmRSS, VmHWM, …) of /proc/PID/status.
func procStatusMB(pid int, field string) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseFloat(strings.Fields(rest)[0], 64)
			return kb / 1024, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

// BenchmarkUpWithMembers measures `atoll up` with three simulated members:
// time to the ready line (all members serving), and the idle RSS of each
// member process.
func BenchmarkUpWithMembers(b *testing.B) {
	var total time.Duration
	var memberMB, cpMB float64
	for i := 0; i < b.N; i++ {
		cp := framework.StartControlPlane(b, framework.Options{Members: 3})
		total += cp.ReadyAfter
		time.Sleep(idleSettle)
		rss, err := upResidentMB(cp)
		if err != nil {
			b.Fatal(err)
		}
		cpMB += rss
		for _, name := range []string{"member1", "member2", "member3"} {
			var st simdir.MemberStatus
			if _, err := simdir.ReadJSON(simdir.StatusFile(cp.DataDir, name), &st); err != nil || st.PID == 0 {
				b.Fatalf("status of %s: %v", name, err)
			}
			rss, err := residentMB(st.PID)
			if err != nil {
				b.Fatal(err)
			}
			memberMB += rss / 3
		}
		if err := cp.Stop(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(total.Seconds()/float64(b.N), "s-to-ready")
	b.ReportMetric(cpMB/float64(b.N), "MB-control-plane-rss")
	b.ReportMetric(memberMB/float64(b.N), "MB-rss-per-member")
}
