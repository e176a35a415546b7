package integration

import (
	"bytes"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/atoll-dev/atoll/apis/policy/v1alpha1"
	"github.com/atoll-dev/atoll/pkg/controlplane/pki"
	"github.com/atoll-dev/atoll/test/framework"
)

// TestRestartKeepsObjects stops atoll (SIGTERM) and starts it again on the
// same data dir: objects, CA and API server address survive.
func TestRestartKeepsObjects(t *testing.T) {
	cp := framework.StartControlPlane(t, framework.Options{})
	ctx := framework.Context(t, 3*time.Minute)
	c := cp.Client(t)

	pp := &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "keep-me", Namespace: "default"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "nginx"}},
		},
	}
	if err := c.Create(ctx, pp); err != nil {
		t.Fatalf("creating PropagationPolicy: %v", err)
	}
	before, err := os.ReadFile(cp.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if err := cp.Stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	// Earlier versions gave the controllers a client certificate; a start
	// removes it (they authenticate with a token now).
	legacy := []string{filepath.Join(cp.DataDir, "pki", "client-atoll-controller-manager.crt"), filepath.Join(cp.DataDir, "pki", "client-atoll-controller-manager.key")}
	for _, p := range legacy {
		if err := os.WriteFile(p, []byte("left by an earlier version"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cp.Start(t)
	for _, p := range legacy {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s survived the restart (%v): an unused credential", p, err)
		}
	}

	after, err := os.ReadFile(cp.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Errorf("kubeconfig changed across restart; copied kubeconfigs would break")
	}
	var got policyv1alpha1.PropagationPolicy
	if err := cp.Client(t).Get(ctx, client.ObjectKeyFromObject(pp), &got); err != nil {
		t.Fatalf("PropagationPolicy lost across restart: %v", err)
	}
	if got.UID != pp.UID {
		t.Errorf("UID changed across restart: %s -> %s", pp.UID, got.UID)
	}
	// Schema defaults applied on create are stored, not recomputed.
	if got.Spec.ConflictResolution != policyv1alpha1.ConflictAbort {
		t.Errorf("conflictResolution default: got %q, want %q", got.Spec.ConflictResolution, policyv1alpha1.ConflictAbort)
	}
}

// TestSecondUpOnSameDataDirFails starts a second `atoll up` on a data dir
// in use: it must refuse clearly and leave the first one serving.
func TestSecondUpOnSameDataDirFails(t *testing.T) {
	ctx := framework.Context(t, time.Minute)
	cmd := exec.CommandContext(ctx, framework.Binary(t), "up", "--data-dir", shared.DataDir, "--members", "0", "--log-file", "")
	out, err := cmd.CombinedOutput()
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) {
		t.Fatalf("second atoll up: want a non-zero exit, got %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "in use") || !strings.Contains(string(out), shared.DataDir) {
		t.Errorf("message should say the data dir is in use and name it, got:\n%s", out)
	}
	if strings.Contains(string(out), framework.ReadyMarker) {
		t.Errorf("second atoll up claimed to be ready:\n%s", out)
	}
	cs := kubernetes.NewForConfigOrDie(shared.RESTConfig(t))
	if _, err := cs.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err != nil {
		t.Errorf("first control plane no longer serves: %v", err)
	}
}

// TestUpRefusesATokenFileOfItsOwn: the controllers' token is in the API
// server's token file, which atoll writes; a --token-auth-file passed
// through would replace it and lock the controllers out.
func TestUpRefusesATokenFileOfItsOwn(t *testing.T) {
	ctx := framework.Context(t, 2*time.Minute)
	dir := t.TempDir()
	cmd := exec.CommandContext(ctx, framework.Binary(t), "up", "--data-dir", dir, "--members", "0", "--log-file", "",
		"--kube-apiserver-arg=--token-auth-file="+filepath.Join(dir, "mine.csv"))
	out, err := cmd.CombinedOutput()
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) {
		t.Fatalf("atoll up with --token-auth-file: want a non-zero exit, got %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "--token-auth-file") || !strings.Contains(string(out), "token file, which atoll writes") {
		t.Errorf("the error should name the flag and why, got:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "pki", "tokens.csv")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("pki/tokens.csv left behind by the refused start (%v)", err)
	}
}

// TestKubeconfigVerifiesTLS checks that the kubeconfig pins the CA, that
// the server's certificate verifies against it, and that a client trusting
// another CA is refused.
func TestKubeconfigVerifiesTLS(t *testing.T) {
	ctx := framework.Context(t, time.Minute)
	raw, err := clientcmd.LoadFromFile(shared.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if raw.CurrentContext != "atoll" {
		t.Errorf("current context %q, want atoll", raw.CurrentContext)
	}
	cluster := raw.Clusters[raw.Contexts[raw.CurrentContext].Cluster]
	if cluster.InsecureSkipTLSVerify {
		t.Fatal("kubeconfig skips TLS verification")
	}
	if len(cluster.CertificateAuthorityData) == 0 {
		t.Fatal("kubeconfig has no CA data")
	}
	if !strings.HasPrefix(cluster.Server, "https://127.0.0.1:") {
		t.Errorf("server %q, want https on 127.0.0.1", cluster.Server)
	}

	good := shared.RESTConfig(t)
	if _, err := kubernetes.NewForConfigOrDie(good).Discovery().ServerVersion(); err != nil {
		t.Fatalf("verified TLS connection failed: %v", err)
	}

	otherCA, err := pki.LoadOrCreateCA(pki.Files{Dir: t.TempDir()}, "other-ca", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	bad := rest.CopyConfig(good)
	bad.CAData = otherCA.CertPEM
	_, err = kubernetes.NewForConfigOrDie(bad).CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	var unknown x509.UnknownAuthorityError
	if err == nil || (!errors.As(err, &unknown) && !strings.Contains(err.Error(), "certificate signed by unknown authority")) {
		t.Errorf("client trusting another CA: want unknown-authority error, got %v", err)
	}
}

// TestRBACIsEnforced signs a client certificate for an ordinary user with
// the control plane's CA: it authenticates, and RBAC forbids what no role
// grants.
func TestRBACIsEnforced(t *testing.T) {
	ctx := framework.Context(t, time.Minute)
	files := pki.Files{Dir: filepath.Join(shared.DataDir, "pki")}
	ca, err := pki.LoadOrCreateCA(files, "unused", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cert, key, err := pki.EnsureLeaf(ca, filepath.Join(dir, "alice.crt"), filepath.Join(dir, "alice.key"),
		pki.LeafSpec{CommonName: "alice", Organization: []string{"team-a"}, Client: true}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	alice := rest.CopyConfig(shared.RESTConfig(t))
	alice.CertData, alice.KeyData = cert, key
	_, err = kubernetes.NewForConfigOrDie(alice).CoreV1().Secrets("default").List(ctx, metav1.ListOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("alice listing secrets: want Forbidden, got %v", err)
	}
	if !strings.Contains(err.Error(), `"alice"`) {
		t.Errorf("forbidden message should name the user: %v", err)
	}
}

// TestControllerManagerAgainstExistingAPIServer runs the distributed mode
// against the shared control plane: it serves health, takes the leader
// Lease, and releases it on SIGTERM.
func TestControllerManagerAgainstExistingAPIServer(t *testing.T) {
	ctx := framework.Context(t, 2*time.Minute)
	healthAddr, metricsAddr := framework.FreeLoopbackAddr(t), framework.FreeLoopbackAddr(t)
	// Every controller's workers are set by their flags (not the
	// defaults), as the metrics say once ready.
	workers := map[string]string{
		"concurrent-resource-template-syncs":      "atoll_detector_workers",
		"concurrent-resourcebinding-syncs":        `controller_runtime_max_concurrent_reconciles{controller="executor-resourcebinding"}`,
		"concurrent-clusterresourcebinding-syncs": `controller_runtime_max_concurrent_reconciles{controller="executor-clusterresourcebinding"}`,
		"concurrent-scheduler-syncs":              `controller_runtime_max_concurrent_reconciles{controller="scheduler-clusterresourcebinding"}`,
		"concurrent-cluster-syncs":                `controller_runtime_max_concurrent_reconciles{controller="cluster"}`,
		"concurrent-dependent-resource-syncs":     `controller_runtime_max_concurrent_reconciles{controller="dependencies"}`,
	}
	args := []string{"controller-manager",
		"--kubeconfig", shared.Kubeconfig,
		"--metrics-bind-address", metricsAddr,
		"--health-probe-bind-address", healthAddr}
	want := map[string]float64{}
	n := 20
	for flag, metric := range workers {
		n++ // a count no controller has by default
		args = append(args, fmt.Sprintf("--%s=%d", flag, n))
		want[metric] = float64(n)
	}
	cmd := exec.Command(framework.Binary(t), args...)
	out := &framework.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
		}
	})

	cs := kubernetes.NewForConfigOrDie(shared.RESTConfig(t))
	var lease *coordinationv1.Lease
	framework.Eventually(t, 60*time.Second, "healthz ok and leader lease held", func() (bool, string) {
		resp, err := http.Get("http://" + healthAddr + "/healthz")
		if err != nil {
			return false, err.Error()
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return false, "healthz: " + resp.Status
		}
		lease, err = cs.CoordinationV1().Leases("atoll-system").Get(ctx, "atoll-controller-manager", metav1.GetOptions{})
		return err == nil && lease.Spec.HolderIdentity != nil && *lease.Spec.HolderIdentity != "", fmt.Sprintf("lease: %v", err)
	})
	// The process itself knows it leads: a signal while it is still
	// acquiring the lease (its write done, its answer not yet read) would
	// leave the lease held until it expires, which is client-go's to
	// handle, not what this test is about.
	framework.Eventually(t, 60*time.Second, "the controller-manager leads", func() (bool, string) {
		n := framework.ScrapeMetrics(t, metricsAddr).Sum("leader_election_master_status", `name="atoll-controller-manager"`)
		return n == 1, fmt.Sprint("leader_election_master_status ", n)
	})
	// Ready once every controller's caches have synced.
	framework.Eventually(t, 60*time.Second, "readyz ok", func() (bool, string) {
		resp, err := http.Get("http://" + healthAddr + "/readyz")
		if err != nil {
			return false, err.Error()
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, "readyz: " + resp.Status
	})
	metrics := framework.ScrapeMetrics(t, metricsAddr)
	for sample, n := range want {
		if got, err := metrics.Value(sample); err != nil || got != n {
			t.Errorf("%s = %v (%v), want %v (set by its flag)", sample, got, err, n)
		}
	}

	_ = cmd.Process.Signal(os.Interrupt)
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("controller-manager exit: %v\n%s", err, out.String())
		}
	case <-time.After(45 * time.Second):
		t.Fatalf("controller-manager did not stop on SIGINT\n%s", out.String())
	}
	lease, err := cs.CoordinationV1().Leases("atoll-system").Get(ctx, "atoll-controller-manager", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if lease.Spec.HolderIdentity != nil && *lease.Spec.HolderIdentity != "" {
		t.Errorf("leader lease still held by %q after a clean stop; its output:\n%s", *lease.Spec.HolderIdentity, out.String())
	}
}

// TestCRDsCommandMatchesServedCRDs checks `atoll crds` prints the CRDs and
// admission policies, and `atoll rbac` the RBAC objects, that `atoll up`
// installed, so piping them into `kubectl apply -f -` sets up an existing
// cluster the same way.
func TestCRDsCommandMatchesServedCRDs(t *testing.T) {
	paths := map[string]string{
		"CustomResourceDefinition":         "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/",
		"ValidatingAdmissionPolicy":        "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/",
		"ValidatingAdmissionPolicyBinding": "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings/",
		"MutatingAdmissionPolicy":          "/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicies/",
		"MutatingAdmissionPolicyBinding":   "/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicybindings/",
		"Namespace":                        "/api/v1/namespaces/",
		"ClusterRole":                      "/apis/rbac.authorization.k8s.io/v1/clusterroles/",
		"ClusterRoleBinding":               "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/",
		"Role":                             "/apis/rbac.authorization.k8s.io/v1/namespaces/atoll-system/roles/",
		"RoleBinding":                      "/apis/rbac.authorization.k8s.io/v1/namespaces/atoll-system/rolebindings/",
	}
	ctx := framework.Context(t, time.Minute)
	cs := kubernetes.NewForConfigOrDie(shared.RESTConfig(t))
	for _, verb := range []string{"crds", "rbac"} {
		out, err := exec.Command(framework.Binary(t), verb).Output()
		if err != nil {
			t.Fatalf("atoll %s: %v", verb, err)
		}
		objs, err := framework.DecodeYAML(out)
		if err != nil {
			t.Fatal(err)
		}
		if verb == "crds" && len(objs) < 9 {
			t.Fatalf("atoll crds printed %d objects, want at least 7 CRDs and 2 admission objects", len(objs))
		}
		for _, o := range objs {
			prefix, ok := paths[o.GetKind()]
			if !ok {
				t.Errorf("atoll %s: unexpected kind %s", verb, o.GetKind())
				continue
			}
			if err := cs.Discovery().RESTClient().Get().AbsPath(prefix + o.GetName()).Do(ctx).Error(); err != nil {
				t.Errorf("atoll %s: %s %s printed but not installed: %v", verb, o.GetKind(), o.GetName(), err)
			}
		}
	}
}

// TestControllerManagerHasLeastPrivilege: the embedded controller-manager's
// identity may do what its controllers need and nothing else.
func TestControllerManagerHasLeastPrivilege(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Fatalf("kubectl is needed: %v", err)
	}
	cases := map[string]bool{
		"patch deployments.apps":                               true,
		"watch secrets":                                        true,
		"create resourcebindings.work.karmada.io":              true,
		"delete resourcebindings.work.karmada.io":              true,
		"update clusters.cluster.karmada.io":                   true,
		"create events":                                        true,
		"watch tenants.policy.atoll.dev":                       true,
		"patch tenants.policy.atoll.dev --subresource=status":  true,
		"update tenants.policy.atoll.dev":                      false,
		"delete tenants.policy.atoll.dev":                      false,
		"delete deployments.apps":                              false,
		"create secrets":                                       false,
		"update secrets":                                       false,
		"create clusterrolebindings.rbac.authorization.k8s.io": false,
		"create pods --subresource=exec":                       false,
		"create serviceaccounts --subresource=token":           false,
		"impersonate users":                                    false,
		"delete namespaces":                                    false,
	}
	for action, want := range cases {
		args := append([]string{"--kubeconfig", shared.Kubeconfig, "auth", "can-i", "--as", "atoll-controller-manager", "-A"}, strings.Fields(action)...)
		out, _ := exec.Command(kubectl, args...).CombinedOutput()
		got := strings.TrimSpace(string(out)) == "yes"
		if got != want {
			t.Errorf("atoll-controller-manager can %s: %v, want %v (%s)", action, got, want, strings.TrimSpace(string(out)))
		}
	}
}

// TestControllersAuthenticateAsTheirOwnUser: the embedded controllers'
// requests reach the API server as atoll-controller-manager (whose rights
// TestControllerManagerHasLeastPrivilege checks), not as the admin, and
// the data dir keeps no credential of theirs: the token lives in the
// process only (design 0013, decision 48). The API server's priority and
// fairness counts requests per flow schema, and a schema that matches only
// that user name sees the controllers' requests.
func TestControllersAuthenticateAsTheirOwnUser(t *testing.T) {
	ctx := framework.Context(t, 2*time.Minute)
	for _, leftover := range []string{"tokens.csv", "client-atoll-controller-manager.crt", "client-atoll-controller-manager.key"} {
		if _, err := os.Stat(filepath.Join(shared.DataDir, "pki", leftover)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("pki/%s is in the data dir (%v); the controllers' credential must live in the process only", leftover, err)
		}
	}
	cs := kubernetes.NewForConfigOrDie(shared.RESTConfig(t))
	const schema = "integration-atoll-controllers"
	fs := &flowcontrolv1.FlowSchema{
		ObjectMeta: metav1.ObjectMeta{Name: schema},
		Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "global-default"},
			MatchingPrecedence:         500,
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
				Subjects: []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser,
					User: &flowcontrolv1.UserSubject{Name: "atoll-controller-manager"}}},
				ResourceRules: []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"*"}, APIGroups: []string{"*"},
					Resources: []string{"*"}, ClusterScope: true, Namespaces: []string{"*"}}},
			}},
		},
	}
	if _, err := cs.FlowcontrolV1().FlowSchemas().Create(ctx, fs, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating FlowSchema %s: %v", schema, err)
	}
	t.Cleanup(func() {
		_ = cs.FlowcontrolV1().FlowSchemas().Delete(framework.Context(t, time.Minute), schema, metav1.DeleteOptions{})
	})
	// Once priority and fairness has taken the schema in (it reports on
	// it in its status), the controllers are given work: the detector
	// labels a new policy with its permanent id.
	framework.Eventually(t, time.Minute, "FlowSchema "+schema+" taken in", func() (bool, string) {
		got, err := cs.FlowcontrolV1().FlowSchemas().Get(ctx, schema, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return len(got.Status.Conditions) > 0, fmt.Sprintf("conditions %v", got.Status.Conditions)
	})
	c := shared.Client(t)
	pp := &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "whose-requests", Namespace: "default"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "whose-requests"}},
		},
	}
	if err := c.Create(ctx, pp); err != nil {
		t.Fatalf("creating PropagationPolicy: %v", err)
	}
	t.Cleanup(func() { _ = c.Delete(framework.Context(t, time.Minute), pp) })
	framework.Eventually(t, time.Minute, "requests authenticated as atoll-controller-manager", func() (bool, string) {
		n := framework.ScrapeAPIServerMetrics(t, shared.RESTConfig(t)).Sum("apiserver_flowcontrol_dispatched_requests_total", `flow_schema="`+schema+`"`)
		return n > 0, fmt.Sprintf("%v requests matched the controllers' user", n)
	})
}

// TestControllerManagerWatchesEachTemplateResourceOnce: the detector, the
// dependencies distributor and the manager cache's metadata entries
// (hpa-marker, the replicas syncer) share one metadata informer per
// template resource, so a controller-manager opens one Deployment watch and
// one ConfigMap watch on the control plane, not two of each.
func TestControllerManagerWatchesEachTemplateResourceOnce(t *testing.T) {
	cp := framework.StartControlPlane(t, framework.Options{Args: []string{"--controllers="}})
	cfg := cp.RESTConfig(t)
	before := map[string]float64{"deployments": framework.Watches(t, cfg, "deployments"), "configmaps": framework.Watches(t, cfg, "configmaps")}
	healthAddr := framework.FreeLoopbackAddr(t)
	cmd := exec.Command(framework.Binary(t), "controller-manager", "--kubeconfig", cp.Kubeconfig,
		"--leader-elect=false", "--metrics-bind-address", "0", "--health-probe-bind-address", healthAddr)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	framework.Eventually(t, time.Minute, "controller-manager ready", func() (bool, string) {
		resp, err := http.Get("http://" + healthAddr + "/readyz") //nolint:noctx // loopback, test-bounded
		if err != nil {
			return false, err.Error()
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, "readyz: " + resp.Status
	})
	framework.Consistently(t, 3*time.Second, "one watch per template resource", func() (bool, string) {
		var parts []string
		ok := true
		for resource, n := range before {
			now := framework.Watches(t, cfg, resource)
			ok = ok && now == n+1
			parts = append(parts, fmt.Sprintf("%s: %v watches, %v before", resource, now, n))
		}
		return ok, strings.Join(parts, "; ")
	})
}
