package get

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/atoll-dev/atoll/apis/cluster/v1alpha1"
	"github.com/atoll-dev/atoll/pkg/cli/cmds"
	"github.com/atoll-dev/atoll/pkg/cli/kubeconfig"
	"github.com/atoll-dev/atoll/pkg/cli/table"
)

// Clusters prints the member clusters as a table: NAME READY VERSION MODE
// REGION ZONE NODES (ready/total) CPU and MEMORY (allocated/allocatable)
// AGE.
func Clusters(ctx context.Context, cfg *cmds.Get) error {
	c, err := controlPlaneClient(cfg.Kubeconfig)
	if err != nil {
		return err
	}
	var clusters []clusterv1alpha1.Cluster
	if cfg.Name != "" {
		one := clusterv1alpha1.Cluster{}
		if err := c.Get(ctx, client.ObjectKey{Name: cfg.Name}, &one); err != nil {
			if apierrors.IsNotFound(err) {
				return fmt.Errorf("cluster %s not found", cfg.Name)
			}
			return fmt.Errorf("getting cluster %s: %w", cfg.Name, err)
		}
		clusters = append(clusters, one)
	} else {
		var list clusterv1alpha1.ClusterList
		if err := c.List(ctx, &list); err != nil {
			return fmt.Errorf("listing clusters: %w", err)
		}
		clusters = list.Items
		if len(clusters) == 0 {
			fmt.Fprintln(out(cfg), "No clusters joined (see atoll join --help).")
			return nil
		}
	}
	sort.Slice(clusters, func(i, j int) bool { return clusters[i].Name < clusters[j].Name })
	t := table.New(out(cfg), "NAME", "READY", "VERSION", "MODE", "REGION", "ZONE", "NODES", "CPU", "MEMORY", "AGE")
	now := time.Now()
	for i := range clusters {
		t.Row(clusterRow(&clusters[i], now)...)
	}
	return t.Flush()
}

func out(cfg *cmds.Get) io.Writer {
	if cfg.Out == nil {
		return os.Stdout
	}
	return cfg.Out
}

// clusterRow is one line of the clusters table.
func clusterRow(c *clusterv1alpha1.Cluster, now time.Time) []string {
	ready := "" // not probed yet
	if cond := meta.FindStatusCondition(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady); cond != nil {
		ready = string(cond.Status)
	}
	zone := strings.Join(c.Spec.Zones, ",")
	if zone == "" {
		zone = c.Spec.Zone
	}
	nodes := ""
	if n := c.Status.NodeSummary; n != nil {
		nodes = fmt.Sprintf("%d/%d", n.ReadyNum, n.TotalNum)
	}
	cpu, mem := "", ""
	if rs := c.Status.ResourceSummary; rs != nil {
		cpu = usage(rs, corev1.ResourceCPU, formatCPU)
		mem = usage(rs, corev1.ResourceMemory, formatMemory)
	}
	age := ""
	if !c.CreationTimestamp.IsZero() {
		age = duration.HumanDuration(now.Sub(c.CreationTimestamp.Time))
	}
	return []string{c.Name, ready, c.Status.KubernetesVersion, string(c.Spec.SyncMode), c.Spec.Region, zone, nodes, cpu, mem, age}
}

func usage(rs *clusterv1alpha1.ResourceSummary, name corev1.ResourceName, format func(resource.Quantity) string) string {
	alloc, ok := rs.Allocatable[name]
	if !ok {
		return ""
	}
	return format(rs.Allocated[name]) + "/" + format(alloc)
}

// formatCPU prints cores with at most two decimals: 24, 1.5, 0.25.
func formatCPU(q resource.Quantity) string {
	return strconv.FormatFloat(math.Round(float64(q.MilliValue())/10)/100, 'f', -1, 64)
}

// formatMemory prints binary units with at most one decimal: 96Gi, 1.5Gi,
// 512Mi.
func formatMemory(q resource.Quantity) string {
	v := float64(q.Value())
	units := []string{"", "Ki", "Mi", "Gi", "Ti", "Pi"}
	i := 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) + units[i]
}

// controlPlaneClient is a client of the control plane that knows atoll's
// kinds.
func controlPlaneClient(path string) (client.Client, error) {
	return kubeconfig.Client(path, clusterv1alpha1.AddToScheme)
}
