// Package kubelet plays the part of the kubelets of a simulated member
// cluster: it registers Ready nodes with capacity, renews their leases, takes
// the pods the scheduler binds to them to Running and Ready after a delay,
// gives them IPs, and finishes their deletion. It runs no containers.
package kubelet

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// KubeletVersion is what simulated nodes report as their kubelet version.
const KubeletVersion = "v1.37.2"

// NodeSpec describes the simulated nodes of a member.
type NodeSpec struct {
	// Prefix names nodes Prefix-0, Prefix-1, …
	Prefix   string
	Count    int
	CPU      resource.Quantity
	Memory   resource.Quantity
	MaxPods  int
	Region   string
	Zone     string
	Provider string
}

// NodeName is the name of node i.
func (s NodeSpec) NodeName(i int) string { return fmt.Sprintf("%s-%d", s.Prefix, i) }

// leaseDuration is the node lease length; leases renew at a quarter of it
// like the real kubelet.
const leaseDuration = 40 * time.Second

func (s NodeSpec) node(i int) *corev1.Node {
	name := s.NodeName(i)
	labels := map[string]string{
		corev1.LabelHostname:           name,
		corev1.LabelOSStable:           "linux",
		corev1.LabelArchStable:         "amd64",
		corev1.LabelInstanceTypeStable: "atoll-sim",
	}
	if s.Region != "" {
		labels[corev1.LabelTopologyRegion] = s.Region
	}
	if s.Zone != "" {
		labels[corev1.LabelTopologyZone] = s.Zone
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: corev1.NodeSpec{
			PodCIDR:    podCIDR(i),
			PodCIDRs:   []string{podCIDR(i)},
			ProviderID: fmt.Sprintf("%s://%s", providerOr(s.Provider), name),
		},
	}
}

func (s NodeSpec) status(i int, now metav1.Time) corev1.NodeStatus {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    s.CPU,
		corev1.ResourceMemory: s.Memory,
		corev1.ResourcePods:   *resource.NewQuantity(int64(s.MaxPods), resource.DecimalSI),
	}
	cond := func(t corev1.NodeConditionType, st corev1.ConditionStatus, reason, msg string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: st, Reason: reason, Message: msg, LastHeartbeatTime: now, LastTransitionTime: now}
	}
	return corev1.NodeStatus{
		Capacity:    capacity,
		Allocatable: capacity,
		Phase:       corev1.NodeRunning,
		Conditions: []corev1.NodeCondition{
			cond(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "simulated kubelet is posting ready status"),
			cond(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
			cond(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
			cond(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
		},
		Addresses: []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: nodeIP(i)},
			{Type: corev1.NodeHostName, Address: s.NodeName(i)},
		},
		NodeInfo: corev1.NodeSystemInfo{
			KubeletVersion:          KubeletVersion,
			OperatingSystem:         "linux",
			Architecture:            "amd64",
			ContainerRuntimeVersion: "atoll-sim://1.0",
			OSImage:                 "atoll simulated node",
		},
	}
}

func providerOr(p string) string {
	if p == "" {
		return "atoll-sim"
	}
	return p
}

// podCIDR gives node i the /24 10.244.i.0 (i < 250 in practice; larger
// counts wrap into the next octet).
func podCIDR(i int) string { return fmt.Sprintf("10.%d.%d.0/24", 244+i/250, i%250) }

func nodeIP(i int) string { return fmt.Sprintf("172.18.%d.%d", i/250, i%250+2) }

// ensureNodes registers every node (creating or updating it) and posts its
// Ready status. The TaintNodesByCondition admission plugin puts
// node.kubernetes.io/not-ready on new nodes; the node lifecycle controller
// would lift it, and since the simulator does not run that controller
// (there are no real kubelets whose heartbeats could be judged) the
// simulated kubelet lifts it itself once it reports Ready.
func ensureNodes(ctx context.Context, client kubernetes.Interface, spec NodeSpec) error {
	now := metav1.Now()
	for i := 0; i < spec.Count; i++ {
		want := spec.node(i)
		got, err := client.CoreV1().Nodes().Get(ctx, want.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			got, err = client.CoreV1().Nodes().Create(ctx, want, metav1.CreateOptions{})
		}
		if err != nil {
			return fmt.Errorf("registering node %s: %w", want.Name, err)
		}
		got = got.DeepCopy()
		got.Status = spec.status(i, now)
		if _, err := client.CoreV1().Nodes().UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("posting status of node %s: %w", want.Name, err)
		}
		if err := removeNotReadyTaint(ctx, client, want.Name); err != nil {
			return err
		}
	}
	return nil
}

func removeNotReadyTaint(ctx context.Context, client kubernetes.Interface, name string) error {
	node, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading node %s: %w", name, err)
	}
	var keep []corev1.Taint
	for _, t := range node.Spec.Taints {
		if t.Key != corev1.TaintNodeNotReady && t.Key != corev1.TaintNodeUnreachable {
			keep = append(keep, t)
		}
	}
	if len(keep) == len(node.Spec.Taints) {
		return nil
	}
	patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"taints": keep}})
	if _, err := client.CoreV1().Nodes().Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("removing not-ready taint from node %s: %w", name, err)
	}
	return nil
}

// heartbeat renews each node's Lease and refreshes the Ready condition's
// heartbeat, as a kubelet does, until ctx ends.
func heartbeat(ctx context.Context, client kubernetes.Interface, spec NodeSpec) {
	logger := klog.FromContext(ctx)
	tick := time.NewTicker(leaseDuration / 4)
	defer tick.Stop()
	for {
		for i := 0; i < spec.Count; i++ {
			if err := renewLease(ctx, client, spec.NodeName(i)); err != nil && ctx.Err() == nil {
				logger.V(1).Info("Renewing node lease failed", "node", spec.NodeName(i), "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func renewLease(ctx context.Context, client kubernetes.Interface, node string) error {
	leases := client.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	now := metav1.NewMicroTime(time.Now())
	lease, err := leases.Get(ctx, node, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = leases.Create(ctx, &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: node, Namespace: corev1.NamespaceNodeLease},
			Spec: coordinationv1.LeaseSpec{
				HolderIdentity:       ptr.To(node),
				LeaseDurationSeconds: ptr.To(int32(leaseDuration.Seconds())),
				RenewTime:            &now,
			},
		}, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	lease = lease.DeepCopy()
	lease.Spec.RenewTime = &now
	_, err = leases.Update(ctx, lease, metav1.UpdateOptions{})
	return err
}

var everything = labels.Everything()
