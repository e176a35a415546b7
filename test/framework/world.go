package framework

import (
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// FastClusterHealthArgs are `atoll up` flags that make the cluster
// controller probe every second and flip a member's Ready condition after
// 2s of success or 3s of failure, so faults show within seconds.
func FastClusterHealthArgs() []string {
	return []string{"--cluster-status-period=1s", "--cluster-success-threshold=2s", "--cluster-failure-threshold=3s"}
}

// MemberClientset is a clientset straight to member name's API server.
func (cp *ControlPlane) MemberClientset(t testing.TB, name string) kubernetes.Interface {
	t.Helper()
	return kubernetes.NewForConfigOrDie(cp.MemberConfig(t, name))
}

// MemberDynamic is a dynamic client of member name's own API server.
func (cp *ControlPlane) MemberDynamic(t testing.TB, name string) dynamic.Interface {
	t.Helper()
	return dynamic.NewForConfigOrDie(cp.MemberConfig(t, name))
}

// Fault runs `atoll sim fault TARGET ACTION` on this world and returns its
// output; action is the action word and its flags, separated by spaces
// ("stop", "slow --latency 700ms", "start --wait 2m").
func (cp *ControlPlane) Fault(t testing.TB, target, action string) string {
	t.Helper()
	return cp.Atoll(t, append([]string{"sim", "fault", "--data-dir", cp.DataDir, target}, strings.Fields(action)...)...)
}

// InjectFault runs Fault(target, fault) and returns undo, which runs
// Fault(target, undoAction) the first time it is called. A test that fails
// or returns before calling undo has it called when it ends, so the world is
// whole again for the next test.
func (cp *ControlPlane) InjectFault(t testing.TB, target, fault, undoAction string) (undo func()) {
	t.Helper()
	cp.Fault(t, target, fault)
	var once sync.Once
	undo = func() {
		t.Helper()
		once.Do(func() { cp.Fault(t, target, undoAction) })
	}
	t.Cleanup(undo)
	return undo
}

// Load sets the CPU the simulated world offers app (pods labelled app=APP)
// to cpu, e.g. "600m"; "0" takes the load away.
func (cp *ControlPlane) Load(t testing.TB, app, cpu string) {
	t.Helper()
	cp.Atoll(t, "sim", "load", "--data-dir", cp.DataDir, app, cpu)
}
