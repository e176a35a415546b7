// Package shards tests, end to end, that several `atoll controller-manager
// --shards N` processes split the templates between them (issue 14, item
// 5): every template and binding is written by exactly one process, the one
// holding its shard's Lease, as the control plane's own audit log shows; and
// when one process is killed, another takes its shard over and carries on.
package shards

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/atoll-dev/atoll/pkg/shard"
	"github.com/atoll-dev/atoll/pkg/util/names"
	utiltesting "github.com/atoll-dev/atoll/pkg/util/testing"
	"github.com/atoll-dev/atoll/test/framework"
)

const (
	ns     = "shards"
	group  = "atoll-controller-manager"
	system = "atoll-system"
	shards = 2
)

// auditPolicy records every write to bindings and Deployments.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  verbs: ["create", "update", "patch", "delete"]
  resources:
  - group: work.karmada.io
    resources: ["resourcebindings", "resourcebindings/status"]
  - group: apps
    resources: ["deployments", "deployments/status"]
- level: None
`

// process is one `atoll controller-manager` of the test.
type process struct {
	name     string
	cmd      *exec.Cmd
	logFile  string
	identity string
}

func startControllerManager(t *testing.T, cp *framework.ControlPlane, name string) *process {
	t.Helper()
	p := &process{name: name, logFile: filepath.Join(t.TempDir(), name+".log")}
	args := append([]string{"controller-manager", "--kubeconfig", cp.Kubeconfig,
		"--shards", fmt.Sprint(shards), "--leader-elect",
		"--metrics-bind-address", framework.FreeLoopbackAddr(t),
		"--health-probe-bind-address", framework.FreeLoopbackAddr(t),
		"--log-file", p.logFile}, framework.FastClusterHealthArgs()...)
	p.cmd = exec.Command(framework.Binary(t), args...)
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Kill()
			_ = p.cmd.Wait()
		}
		if t.Failed() {
			data, _ := os.ReadFile(p.logFile)
			lines := strings.Split(string(data), "\n")
			t.Logf("%s log (tail):\n%s", name, strings.Join(lines[max(0, len(lines)-40):], "\n"))
		}
	})
	identityLine := regexp.MustCompile(`"Holding shards".* identity="([^"]+)"`)
	framework.Eventually(t, time.Minute, name+" announces its shard identity", func() (bool, string) {
		data, _ := os.ReadFile(p.logFile)
		if m := identityLine.FindSubmatch(data); m != nil {
			p.identity = string(m[1])
			return true, ""
		}
		return false, "no \"Holding shards\" line yet"
	})
	return p
}

// holders maps each shard to the identity holding its Lease.
func holders(t *testing.T, c client.Client) map[int]string {
	t.Helper()
	out := map[int]string{}
	for s := range shards {
		var le coordinationv1.Lease
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: system, Name: shard.ShardLeaseName(group, s)}, &le); err == nil && le.Spec.HolderIdentity != nil {
			out[s] = *le.Spec.HolderIdentity
		}
	}
	return out
}

// write is one audited write by a controller-manager.
type write struct {
	object   string // resource/name
	shard    int
	identity string
	verb     string
	at       time.Time
}

var replicaAgent = regexp.MustCompile(`replica/(\S+)`)

// audited reads the writes of controller-managers (their user agent names
// their identity) to objects of the test namespace.
func audited(t *testing.T, path string) []write {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("audit log: %v", err)
	}
	defer func() { _ = f.Close() }()
	var out []write
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev struct {
			Verb      string `json:"verb"`
			UserAgent string `json:"userAgent"`
			ObjectRef struct {
				Resource, Namespace, Name string
			} `json:"objectRef"`
			ResponseStatus struct {
				Code int `json:"code"`
			} `json:"responseStatus"`
			StageTimestamp metav1.MicroTime `json:"stageTimestamp"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		m := replicaAgent.FindStringSubmatch(ev.UserAgent)
		if m == nil || ev.ObjectRef.Namespace != ns || ev.ResponseStatus.Code >= 300 {
			continue
		}
		binding := ev.ObjectRef.Name
		if ev.ObjectRef.Resource == "deployments" {
			binding = names.BindingName("Deployment", ev.ObjectRef.Name)
		}
		out = append(out, write{object: ev.ObjectRef.Resource + "/" + ev.ObjectRef.Name,
			shard: shard.Of(ns, binding, shards), identity: m[1], verb: ev.Verb, at: ev.StageTimestamp.Time})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func waitForDeployments(t *testing.T, members []kubernetes.Interface, count int, replicas int32) {
	t.Helper()
	for i, m := range members {
		framework.Eventually(t, 3*time.Minute, fmt.Sprintf("member%d has %d Deployments with %d replicas", i+1, count, replicas), func() (bool, string) {
			list, err := m.AppsV1().Deployments(ns).List(t.Context(), metav1.ListOptions{})
			if err != nil {
				return false, err.Error()
			}
			ok := 0
			for _, d := range list.Items {
				if d.Spec.Replicas != nil && *d.Spec.Replicas == replicas {
					ok++
				}
			}
			return ok == count, fmt.Sprintf("%d of %d", ok, count)
		})
	}
}

func TestTwoShardsSplitAndTakeOver(t *testing.T) {
	dir := t.TempDir()
	policyFile, auditLog := filepath.Join(dir, "audit-policy.yaml"), filepath.Join(dir, "audit.log")
	if err := os.WriteFile(policyFile, []byte(auditPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	// The control plane runs no controllers: the two processes do.
	cp := framework.StartControlPlane(t, framework.Options{Members: 2, Args: []string{
		"--controllers=", "--member-args=--api-only",
		"--kube-apiserver-arg=--audit-policy-file=" + policyFile,
		"--kube-apiserver-arg=--audit-log-path=" + auditLog,
	}})
	c := cp.Client(t)
	members := []kubernetes.Interface{cp.MemberClientset(t, "member1"), cp.MemberClientset(t, "member2")}

	a := startControllerManager(t, cp, "a")
	b := startControllerManager(t, cp, "b")
	framework.Eventually(t, 2*time.Minute, "each process holds one shard", func() (bool, string) {
		h := holders(t, c)
		return len(h) == shards && h[0] != h[1] && slices.Contains([]string{a.identity, b.identity}, h[0]) &&
			slices.Contains([]string{a.identity, b.identity}, h[1]), fmt.Sprint(h)
	})

	framework.Create(t, c, utiltesting.MakeNamespace(ns).Obj(),
		utiltesting.MakePropagationPolicy("all", ns).ClusterNames("member1", "member2").Select("apps/v1", "Deployment", "").Obj())
	for i := range 20 {
		framework.Create(t, c, framework.Deployment(fmt.Sprintf("web-%d", i), ns).Replicas(2).Obj())
	}
	waitForDeployments(t, members, 20, 2)

	// Every object was written by the holder of its shard, and by nobody
	// else; each binding was created once.
	held := holders(t, c)
	writers := map[string]map[string]bool{}
	creates := map[string]int{}
	byShard := map[int]int{}
	for _, w := range audited(t, auditLog) {
		if writers[w.object] == nil {
			writers[w.object] = map[string]bool{}
		}
		writers[w.object][w.identity] = true
		if w.identity != held[w.shard] {
			t.Errorf("%s (shard %d) written (%s) by %s; shard %d is held by %s", w.object, w.shard, w.verb, w.identity, w.shard, held[w.shard])
		}
		if w.verb == "create" && strings.HasPrefix(w.object, "resourcebindings/") {
			creates[w.object]++
		}
		byShard[w.shard]++
	}
	for obj, ids := range writers {
		if len(ids) != 1 {
			t.Errorf("%s written by %d processes: %v", obj, len(ids), ids)
		}
	}
	for obj, n := range creates {
		if n != 1 {
			t.Errorf("%s created %d times", obj, n)
		}
	}
	if len(creates) != 20 {
		t.Errorf("%d bindings created, want 20", len(creates))
	}
	t.Logf("audited writes per shard %v, shard holders %v", byShard, held)
	if byShard[0] == 0 || byShard[1] == 0 {
		t.Errorf("writes per shard %v: the work was not split", byShard)
	}
	if t.Failed() {
		t.FailNow()
	}

	// Kill a, which holds one shard: b takes it over and handles both
	// new templates and changes of a's old ones.
	lost := 0
	if held[1] == a.identity {
		lost = 1
	}
	if err := a.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = a.cmd.Wait()
	killed := time.Now()
	for i := 20; i < 30; i++ {
		framework.Create(t, c, framework.Deployment(fmt.Sprintf("web-%d", i), ns).Replicas(3).Obj())
	}
	for i := range 20 {
		d := framework.Deployment(fmt.Sprintf("web-%d", i), ns).Obj()
		framework.Update(t, c, d, func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To(int32(3)) })
	}
	waitForDeployments(t, members, 30, 3)
	framework.Eventually(t, time.Minute, fmt.Sprintf("b holds shard %d", lost), func() (bool, string) {
		h := holders(t, c)
		return h[lost] == b.identity, fmt.Sprint(h)
	})
	t.Logf("b holds shard %d %s after a was killed; 30 templates in both members", lost, time.Since(killed).Round(time.Second))
	after := 0
	for _, w := range audited(t, auditLog) {
		if w.at.Before(killed) {
			continue
		}
		after++
		if w.identity != b.identity {
			t.Errorf("%s (shard %d) written by %s after a (%s) was killed; only b (%s) runs", w.object, w.shard, w.identity, a.identity, b.identity)
		}
	}
	if after == 0 {
		t.Error("no writes audited after the kill")
	}
}
