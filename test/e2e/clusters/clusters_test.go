package clusters

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	workv1alpha2 "github.com/atoll-dev/atoll/apis/work/v1alpha2"
	"github.com/atoll-dev/atoll/pkg/clustercache"
	clustercontroller "github.com/atoll-dev/atoll/pkg/controller/cluster"
	"github.com/atoll-dev/atoll/pkg/util/names"
	"github.com/atoll-dev/atoll/test/framework"
)

// startController runs a manager with the cluster controller and a
// clustercache in this process until the test ends, with short periods:
// probe every second, flip Ready after 2s.
func startController(t *testing.T) {
	t.Helper()
	framework.StartManager(t, world.RESTConfig(t), func(ctx context.Context, mgr ctrl.Manager) error {
		cc := clustercache.New(mgr.GetClient(), clustercache.Options{})
		if err := mgr.Add(cc); err != nil {
			return err
		}
		return clustercontroller.Setup(ctx, mgr, cc, clustercontroller.Options{
			StatusPeriod:     time.Second,
			SuccessThreshold: 2 * time.Second,
			FailureThreshold: 2 * time.Second,
			ProbeTimeout:     2 * time.Second,
		})
	})
}

func proxyKubeconfig(member string) string {
	return filepath.Join(world.DataDir, "members", member, "proxy-kubeconfig")
}

func join(t *testing.T, member, region, zone string) string {
	t.Helper()
	return world.Atoll(t, "join", member, "--cluster-kubeconfig", proxyKubeconfig(member),
		"--region", region, "--zone", zone, "--provider", "atoll-sim", "--labels", "env=test",
		"--kubeconfig", world.Kubeconfig)
}

func hasTaint(cl *clusterv1alpha1.Cluster, key string) bool {
	for _, t := range cl.Spec.Taints {
		if t.Key == key && t.Effect == corev1.TaintEffectNoSchedule {
			return true
		}
	}
	return false
}

func hasAPI(cl *clusterv1alpha1.Cluster, gv, resource string) bool {
	for _, e := range cl.Status.APIEnablements {
		if e.GroupVersion != gv {
			continue
		}
		for _, r := range e.Resources {
			if r.Name == resource {
				return true
			}
		}
	}
	return false
}

// waitReady waits until cluster's Ready is want, with the health taints
// that go with it.
func waitReady(t *testing.T, ctx context.Context, c client.Client, name string, want metav1.ConditionStatus, timeout time.Duration) {
	t.Helper()
	framework.Eventually(t, timeout, fmt.Sprintf("cluster %s Ready=%s with matching taints", name, want), func() (bool, string) {
		cl, err := framework.GetCluster(ctx, c, name)
		if err != nil {
			return false, err.Error()
		}
		unreachable, notReady := hasTaint(cl, clusterv1alpha1.TaintClusterUnreachable), hasTaint(cl, clusterv1alpha1.TaintClusterNotReady)
		ok := framework.ClusterReadyStatus(cl) == want && notReady == (want == metav1.ConditionFalse) && unreachable == (want == metav1.ConditionUnknown)
		return ok, fmt.Sprintf("Ready=%q unreachable taint=%t not-ready taint=%t", framework.ClusterReadyStatus(cl), unreachable, notReady)
	})
}

// readyGauge is the cluster controller's atoll_cluster_ready for cluster,
// and whether it exports one.
func readyGauge(t *testing.T, cluster string) (float64, bool) {
	t.Helper()
	labels := map[string]string{"cluster": cluster}
	return framework.MetricValue(t, "atoll_cluster_ready", labels), framework.HasMetric(t, "atoll_cluster_ready", labels)
}

// TestClusters walks a cluster's life: join, health and status, faults,
// `get clusters`, unjoin. The steps build on each other.
func TestClusters(t *testing.T) {
	ctx := framework.Context(t, 10*time.Minute)
	c := world.Client(t)
	startController(t)

	out := join(t, "member1", "cn-east", "cn-east-1a")
	t.Logf("atoll join member1:\n%s", out)
	for _, want := range []string{"cluster member1 reachable at", "ServiceAccount karmada-cluster/karmada-member1", "Cluster member1 created"} {
		if !strings.Contains(out, want) {
			t.Errorf("join output lacks %q", want)
		}
	}
	join(t, "member2", "cn-east", "cn-east-1b")

	t.Run("joined cluster becomes Ready with its status", func(t *testing.T) {
		framework.Eventually(t, time.Minute, "member1 Ready with version, APIs, nodes and resources", func() (bool, string) {
			cl, err := framework.GetCluster(ctx, c, "member1")
			if err != nil {
				return false, err.Error()
			}
			var cpu resource.Quantity
			var nodes string
			if rs := cl.Status.ResourceSummary; rs != nil {
				cpu = rs.Allocatable[corev1.ResourceCPU]
			}
			if ns := cl.Status.NodeSummary; ns != nil {
				nodes = fmt.Sprintf("%d/%d", ns.ReadyNum, ns.TotalNum)
			}
			ok := framework.ClusterReadyStatus(cl) == metav1.ConditionTrue && cl.Status.KubernetesVersion != "" &&
				hasAPI(cl, "apps/v1", "deployments") && nodes == "3/3" && cpu.Cmp(resource.MustParse("24")) == 0 &&
				meta.IsStatusConditionTrue(cl.Status.Conditions, clusterv1alpha1.ClusterConditionCompleteAPIEnablements)
			return ok, fmt.Sprintf("Ready=%q version=%q apps/v1 deployments=%t nodes=%s cpu=%s", framework.ClusterReadyStatus(cl),
				cl.Status.KubernetesVersion, hasAPI(cl, "apps/v1", "deployments"), nodes, cpu.String())
		})
		cl, err := framework.GetCluster(ctx, c, "member1")
		if err != nil {
			t.Fatal(err)
		}
		if cl.Spec.SyncMode != clusterv1alpha1.Push || cl.Spec.Region != "cn-east" || strings.Join(cl.Spec.Zones, ",") != "cn-east-1a" ||
			cl.Spec.Zone != "" || cl.Spec.Provider != "atoll-sim" || cl.Labels["env"] != "test" || cl.Spec.ID == "" {
			t.Errorf("spec: syncMode=%s region=%s zones=%v zone=%q provider=%s labels=%v id=%q", cl.Spec.SyncMode, cl.Spec.Region,
				cl.Spec.Zones, cl.Spec.Zone, cl.Spec.Provider, cl.Labels, cl.Spec.ID)
		}
		if len(cl.Spec.Taints) != 0 {
			t.Errorf("taints of a ready cluster: %v", cl.Spec.Taints)
		}
		secret := &corev1.Secret{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: names.ClusterSecretNamespace, Name: "member1"}, secret); err != nil {
			t.Fatalf("control-plane secret: %v", err)
		}
		if len(secret.Data["token"]) == 0 || len(secret.Data["caBundle"]) == 0 {
			t.Errorf("control-plane secret keys: %v", keys(secret.Data))
		}
		if v, ok := readyGauge(t, "member1"); !ok || v != 1 {
			t.Errorf("atoll_cluster_ready{cluster=member1} = %v (found %t), want 1", v, ok)
		}
		waitReady(t, ctx, c, "member2", metav1.ConditionTrue, time.Minute)
	})

	t.Run("a steady cluster is not rewritten", func(t *testing.T) {
		cl, err := framework.GetCluster(ctx, c, "member1")
		if err != nil {
			t.Fatal(err)
		}
		// Five probe periods with nothing changing in the member.
		time.Sleep(5 * time.Second)
		again, err := framework.GetCluster(ctx, c, "member1")
		if err != nil {
			t.Fatal(err)
		}
		if again.ResourceVersion != cl.ResourceVersion {
			t.Errorf("cluster rewritten while nothing changed: resourceVersion %s -> %s", cl.ResourceVersion, again.ResourceVersion)
		}
	})

	t.Run("re-join updates and is idempotent", func(t *testing.T) {
		out := world.Atoll(t, "join", "member1", "--cluster-kubeconfig", proxyKubeconfig("member1"),
			"--region", "cn-east", "--zone", "cn-east-1a", "--provider", "atoll-sim", "--labels", "env=staging",
			"--kubeconfig", world.Kubeconfig)
		if !strings.Contains(out, "Cluster member1 updated") {
			t.Errorf("re-join output:\n%s", out)
		}
		cl, err := framework.GetCluster(ctx, c, "member1")
		if err != nil {
			t.Fatal(err)
		}
		if cl.Labels["env"] != "staging" || framework.ClusterReadyStatus(cl) != metav1.ConditionTrue {
			t.Errorf("after re-join: labels=%v Ready=%s", cl.Labels, framework.ClusterReadyStatus(cl))
		}
	})

	t.Run("join of an unreachable cluster fails and creates nothing", func(t *testing.T) {
		kc, err := clientcmd.LoadFromFile(proxyKubeconfig("member1"))
		if err != nil {
			t.Fatal(err)
		}
		for _, cluster := range kc.Clusters {
			cluster.Server = "https://127.0.0.1:1"
		}
		path := filepath.Join(t.TempDir(), "unreachable-kubeconfig")
		if err := clientcmd.WriteToFile(*kc, path); err != nil {
			t.Fatal(err)
		}
		out, err := world.TryAtoll(t, "join", "ghost", "--cluster-kubeconfig", path, "--kubeconfig", world.Kubeconfig)
		if err == nil || !strings.Contains(out, "cannot reach cluster ghost at https://127.0.0.1:1") {
			t.Errorf("join of an unreachable cluster: err=%v\n%s", err, out)
		}
		if _, err := framework.GetCluster(ctx, c, "ghost"); !apierrors.IsNotFound(err) {
			t.Errorf("Cluster ghost: %v, want NotFound", err)
		}
		err = c.Get(ctx, client.ObjectKey{Namespace: names.ClusterSecretNamespace, Name: "ghost"}, &corev1.Secret{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("Secret ghost: %v, want NotFound", err)
		}
		if out, err := world.TryAtoll(t, "join", "Bad_Name", "--cluster-kubeconfig", path, "--kubeconfig", world.Kubeconfig); err == nil ||
			!strings.Contains(out, `cluster name "Bad_Name"`) {
			t.Errorf("join with an invalid name: err=%v\n%s", err, out)
		}
	})

	t.Run("a cluster is registered once, and only over verified TLS", func(t *testing.T) {
		out, err := world.TryAtoll(t, "join", "member1-again", "--cluster-kubeconfig", proxyKubeconfig("member1"), "--kubeconfig", world.Kubeconfig)
		if err == nil || !strings.Contains(out, "cluster member1-again is already joined as member1 (same kube-system UID") {
			t.Errorf("joining member1 under a second name: err=%v\n%s", err, out)
		}
		out, err = world.TryAtoll(t, "join", "member1", "--cluster-kubeconfig", proxyKubeconfig("member2"), "--kubeconfig", world.Kubeconfig)
		if err == nil || !strings.Contains(out, "cluster member1: the name is taken by another cluster") {
			t.Errorf("joining member2 under member1's name: err=%v\n%s", err, out)
		}
		kc, err := clientcmd.LoadFromFile(proxyKubeconfig("member1"))
		if err != nil {
			t.Fatal(err)
		}
		for _, cluster := range kc.Clusters {
			cluster.CertificateAuthorityData, cluster.CertificateAuthority, cluster.InsecureSkipTLSVerify = nil, "", true
		}
		insecure := filepath.Join(t.TempDir(), "insecure-kubeconfig")
		if err := clientcmd.WriteToFile(*kc, insecure); err != nil {
			t.Fatal(err)
		}
		out, err = world.TryAtoll(t, "join", "member1", "--cluster-kubeconfig", insecure, "--kubeconfig", world.Kubeconfig)
		if err == nil || !strings.Contains(out, "skips TLS verification") || !strings.Contains(out, "--allow-insecure-skip-tls-verify") {
			t.Errorf("join with an insecure kubeconfig: err=%v\n%s", err, out)
		}
		for _, name := range []string{"member1-again"} {
			if _, err := framework.GetCluster(ctx, c, name); !apierrors.IsNotFound(err) {
				t.Errorf("Cluster %s: %v, want NotFound", name, err)
			}
		}
		cl, err := framework.GetCluster(ctx, c, "member1")
		if err != nil || cl.Spec.InsecureSkipTLSVerification {
			t.Errorf("member1 after refused joins: insecure=%v err=%v", cl.Spec.InsecureSkipTLSVerification, err)
		}
	})

	t.Run("credentials go only to the endpoint they were issued for", func(t *testing.T) {
		// A server of someone else's: it must never see member1's token.
		var mu sync.Mutex
		var seen []string
		impostor := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			seen = append(seen, r.Header.Get("Authorization"))
			mu.Unlock()
			http.Error(w, "no", http.StatusForbidden)
		}))
		defer impostor.Close()
		cl, err := framework.GetCluster(ctx, c, "member1")
		if err != nil {
			t.Fatal(err)
		}
		endpoint := cl.Spec.APIEndpoint
		patch := func(to string) {
			t.Helper()
			body := fmt.Sprintf(`{"spec":{"apiEndpoint":%q}}`, to)
			if err := c.Patch(ctx, cl, client.RawPatch(types.MergePatchType, []byte(body))); err != nil {
				t.Fatal(err)
			}
		}
		patch(impostor.URL)
		t.Cleanup(func() { patch(endpoint) })
		framework.Eventually(t, 20*time.Second, "member1 not Ready, the condition naming the credential rule", func() (bool, string) {
			cl, err := framework.GetCluster(ctx, c, "member1")
			if err != nil {
				return false, err.Error()
			}
			cond := meta.FindStatusCondition(cl.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
			return cond != nil && cond.Status != metav1.ConditionTrue && strings.Contains(cond.Message, "not the endpoint the credentials"),
				fmt.Sprintf("Ready %v", cond)
		})
		mu.Lock()
		got := slices.Clone(seen)
		mu.Unlock()
		if len(got) > 0 {
			t.Errorf("the impostor endpoint received %d requests (Authorization %q)", len(got), got)
		}
		patch(endpoint)
		waitReady(t, ctx, c, "member1", metav1.ConditionTrue, 30*time.Second)
	})

	t.Run("stopped member becomes unreachable, then ready again", func(t *testing.T) {
		start := world.InjectFault(t, "member1", "stop --wait 2m", "start --wait 2m")
		waitReady(t, ctx, c, "member1", metav1.ConditionUnknown, 20*time.Second)
		framework.Eventually(t, 10*time.Second, "events on member1 for the transition and the taint", func() (bool, string) {
			reasons, err := eventReasons(t, ctx, "member1")
			return err == nil && reasons.Has(clustercontroller.ReasonClusterNotReachable) && reasons.Has("TaintsChanged"),
				fmt.Sprintf("reasons %v, err %v", sets.List(reasons), err)
		})
		if v, ok := readyGauge(t, "member1"); !ok || v != -1 {
			t.Errorf("atoll_cluster_ready{cluster=member1} = %v (found %t), want -1", v, ok)
		}
		// The other member is unaffected.
		if cl, err := framework.GetCluster(ctx, c, "member2"); err != nil || framework.ClusterReadyStatus(cl) != metav1.ConditionTrue {
			t.Errorf("member2 while member1 is down: %v %v", framework.ClusterReadyStatus(cl), err)
		}
		start()
		waitReady(t, ctx, c, "member1", metav1.ConditionTrue, 30*time.Second)
	})

	t.Run("partitioned member becomes unreachable, then ready on heal", func(t *testing.T) {
		heal := world.InjectFault(t, "member2", "partition --wait 2m", "heal --wait 2m")
		waitReady(t, ctx, c, "member2", metav1.ConditionUnknown, 20*time.Second)
		heal()
		waitReady(t, ctx, c, "member2", metav1.ConditionTrue, 30*time.Second)
	})

	t.Run("get clusters", func(t *testing.T) {
		out := world.Atoll(t, "get", "clusters", "--kubeconfig", world.Kubeconfig)
		t.Logf("atoll get clusters:\n%s", out)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 3 || !strings.HasPrefix(lines[0], "NAME") {
			t.Fatalf("want a header and two rows, got:\n%s", out)
		}
		for i, name := range []string{"member1", "member2"} {
			fields := strings.Fields(lines[i+1])
			if len(fields) != 10 || fields[0] != name || fields[1] != "True" || fields[3] != "Push" || fields[4] != "cn-east" ||
				fields[6] != "3/3" || !strings.HasSuffix(fields[7], "/24") || !strings.HasSuffix(fields[8], "/96Gi") {
				t.Errorf("row of %s: %q", name, lines[i+1])
			}
		}
		one := world.Atoll(t, "get", "clusters", "member2", "--kubeconfig", world.Kubeconfig)
		if strings.Count(strings.TrimSpace(one), "\n") != 1 || !strings.Contains(one, "member2") {
			t.Errorf("get clusters member2:\n%s", one)
		}
	})

	t.Run("unjoin removes the cluster and cleans the member", func(t *testing.T) {
		m2 := world.MemberClientset(t, "member2")
		// What atoll applies carries the ownership record of a binding in
		// the control plane (this world runs no executor: the test writes
		// both sides).
		const id = "6a3c1f7e-0000-4000-8000-000000000001"
		rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: "owned", Namespace: "default",
			Labels: map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: id}},
			Spec: workv1alpha2.ResourceBindingSpec{Resource: workv1alpha2.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Namespace: "default", Name: "owned"}}}
		framework.CreateAndCleanup(t, c, rb)
		record := func(obj metav1.Object, permanentID string, extra map[string]string) {
			obj.SetLabels(map[string]string{workv1alpha2.ManagedLabel: "true", workv1alpha2.ResourceBindingPermanentIDLabel: permanentID})
			a := map[string]string{workv1alpha2.ResourceBindingNamespaceAnnotation: "default", workv1alpha2.ResourceBindingNameAnnotation: "owned"}
			for k, v := range extra {
				a[k] = v
			}
			obj.SetAnnotations(a)
		}
		newConfigMap := func(ns, name string, set func(metav1.Object)) {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
			set(cm)
			if _, err := m2.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = m2.CoreV1().ConfigMaps(ns).Delete(context.Background(), name, metav1.DeleteOptions{}) })
		}
		newNamespace := func(name string) {
			n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
			record(n, id, nil)
			if _, err := m2.CoreV1().Namespaces().Create(ctx, n, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = m2.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{}) })
		}
		newConfigMap("default", "managed", func(o metav1.Object) { record(o, id, nil) })
		newConfigMap("default", "preserved", func(o metav1.Object) {
			record(o, id, map[string]string{workv1alpha2.PreserveOnDeleteAnnotation: "true"})
		})
		newConfigMap("default", "took-over", func(o metav1.Object) { record(o, id, map[string]string{workv1alpha2.TookOverAnnotation: "true"}) })
		newConfigMap("default", "labelled-only", func(o metav1.Object) { o.SetLabels(map[string]string{workv1alpha2.ManagedLabel: "true"}) })
		newConfigMap("default", "wrong-id", func(o metav1.Object) { record(o, "00000000-0000-0000-0000-000000000000", nil) })
		newNamespace("owned-empty")
		newNamespace("owned-shared")
		newConfigMap("owned-shared", "someone-elses", func(metav1.Object) {})

		out := world.Atoll(t, "unjoin", "member2", "--kubeconfig", world.Kubeconfig)
		t.Logf("atoll unjoin member2:\n%s", out)
		if _, err := framework.GetCluster(ctx, c, "member2"); !apierrors.IsNotFound(err) {
			t.Errorf("Cluster member2 after unjoin: %v", err)
		}
		if err := c.Get(ctx, client.ObjectKey{Namespace: names.ClusterSecretNamespace, Name: "member2"}, &corev1.Secret{}); !apierrors.IsNotFound(err) {
			t.Errorf("Secret member2 after unjoin: %v", err)
		}
		if _, err := m2.CoreV1().ConfigMaps("default").Get(ctx, "managed", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("owned ConfigMap after unjoin: %v", err)
		}
		for _, name := range []string{"preserved", "took-over"} {
			cm, err := m2.CoreV1().ConfigMaps("default").Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Errorf("%s ConfigMap after unjoin: %v", name, err)
				continue
			}
			if _, managed := cm.Labels[workv1alpha2.ManagedLabel]; managed || cm.Annotations[workv1alpha2.ResourceBindingNameAnnotation] != "" {
				t.Errorf("%s ConfigMap not handed back: labels %v annotations %v", name, cm.Labels, cm.Annotations)
			}
		}
		for _, name := range []string{"labelled-only", "wrong-id"} {
			cm, err := m2.CoreV1().ConfigMaps("default").Get(ctx, name, metav1.GetOptions{})
			if err != nil || cm.Labels[workv1alpha2.ManagedLabel] != "true" {
				t.Errorf("%s ConfigMap (not atoll's) touched by unjoin: %v %v", name, err, cm.Labels)
			}
		}
		if ns, err := m2.CoreV1().Namespaces().Get(ctx, "owned-shared", metav1.GetOptions{}); err != nil || ns.DeletionTimestamp != nil {
			t.Errorf("namespace holding someone else's ConfigMap deleted by unjoin: %v", err)
		} else if _, managed := ns.Labels[workv1alpha2.ManagedLabel]; managed {
			t.Errorf("namespace owned-shared not handed back: labels %v", ns.Labels)
		}
		if _, err := m2.CoreV1().ConfigMaps("owned-shared").Get(ctx, "someone-elses", metav1.GetOptions{}); err != nil {
			t.Errorf("someone else's ConfigMap after unjoin: %v", err)
		}
		if ns, err := m2.CoreV1().Namespaces().Get(ctx, "owned-empty", metav1.GetOptions{}); err == nil && ns.DeletionTimestamp == nil {
			t.Errorf("owned namespace with nothing else in it kept by unjoin")
		}
		framework.Eventually(t, time.Minute, "member2's karmada-cluster namespace and binding gone", func() (bool, string) {
			_, nsErr := m2.CoreV1().Namespaces().Get(ctx, "karmada-cluster", metav1.GetOptions{})
			_, crbErr := m2.RbacV1().ClusterRoleBindings().Get(ctx, "karmada-member2", metav1.GetOptions{})
			return apierrors.IsNotFound(nsErr) && apierrors.IsNotFound(crbErr), fmt.Sprintf("namespace: %v; binding: %v", nsErr, crbErr)
		})
		// member1 was not touched.
		m1 := world.MemberClientset(t, "member1")
		if _, err := m1.RbacV1().ClusterRoleBindings().Get(ctx, "karmada-member1", metav1.GetOptions{}); err != nil {
			t.Errorf("member1's binding: %v", err)
		}
		if _, ok := readyGauge(t, "member2"); ok {
			// Deleting the Cluster drops its series; give the controller a moment.
			framework.Eventually(t, 10*time.Second, "atoll_cluster_ready{cluster=member2} dropped", func() (bool, string) {
				_, ok := readyGauge(t, "member2")
				return !ok, "still exported"
			})
		}
		if out, err := world.TryAtoll(t, "unjoin", "member2", "--kubeconfig", world.Kubeconfig); err == nil || !strings.Contains(out, "not joined") {
			t.Errorf("second unjoin: err=%v\n%s", err, out)
		}
	})
}

// eventReasons are the reasons of the events about Cluster name.
func eventReasons(t *testing.T, ctx context.Context, name string) (sets.Set[string], error) {
	cs := kubernetes.NewForConfigOrDie(world.RESTConfig(t))
	list, err := cs.EventsV1().Events(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	reasons := sets.New[string]()
	for _, e := range list.Items {
		if e.Regarding.Kind == clusterv1alpha1.ResourceKindCluster && e.Regarding.Name == name {
			reasons.Insert(e.Reason)
		}
	}
	return reasons, nil
}

func keys(m map[string][]byte) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}
