package get

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/atoll-dev/atoll/apis/apps/v1alpha1"
	"github.com/atoll-dev/atoll/pkg/cli/cmds"
	"github.com/atoll-dev/atoll/pkg/cli/kubeconfig"
	"github.com/atoll-dev/atoll/pkg/cli/table"
)

// Baselines lists the ClusterBaselines, or shows one as its delivery
// matrix: a line per cluster (components ready, gated, what is in progress
// or failed, time to baseline), then a line per cluster and component in
// dependency order with its state, since when, and what it waits for.
func Baselines(ctx context.Context, cfg *cmds.Get) error {
	c, err := kubeconfig.Client(cfg.Kubeconfig, appsv1alpha1.AddToScheme)
	if err != nil {
		return err
	}
	now := time.Now()
	if cfg.Name == "" {
		var list appsv1alpha1.ClusterBaselineList
		if err := c.List(ctx, &list); err != nil {
			return fmt.Errorf("listing ClusterBaselines: %w", err)
		}
		if len(list.Items) == 0 {
			fmt.Fprintln(out(cfg), "No ClusterBaselines.")
			return nil
		}
		sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
		t := table.New(out(cfg), "NAME", "READY-CLUSTERS", "COMPONENTS", "STATUS", "AGE")
		for i := range list.Items {
			cb := &list.Items[i]
			t.Row(cb.Name, cb.Status.ReadyClusters, fmt.Sprint(len(cb.Spec.Components)), readyReason(cb), duration.HumanDuration(now.Sub(cb.CreationTimestamp.Time)))
		}
		return t.Flush()
	}
	var cb appsv1alpha1.ClusterBaseline
	if err := c.Get(ctx, client.ObjectKey{Name: cfg.Name}, &cb); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("ClusterBaseline %s not found", cfg.Name)
		}
		return fmt.Errorf("getting ClusterBaseline %s: %w", cfg.Name, err)
	}
	return printMatrix(cfg, &cb, now)
}

func readyReason(cb *appsv1alpha1.ClusterBaseline) string {
	cond := apimeta.FindStatusCondition(cb.Status.Conditions, "Ready")
	if cond == nil {
		return "Pending"
	}
	return cond.Reason
}

func printMatrix(cfg *cmds.Get, cb *appsv1alpha1.ClusterBaseline, now time.Time) error {
	w := out(cfg)
	fmt.Fprintf(w, "ClusterBaseline %s: %s clusters ready, %d components", cb.Name, orDash(cb.Status.ReadyClusters), len(cb.Spec.Components))
	if cond := apimeta.FindStatusCondition(cb.Status.Conditions, "Ready"); cond != nil {
		fmt.Fprintf(w, " (%s: %s)", cond.Reason, cond.Message)
	}
	fmt.Fprintln(w)
	if len(cb.Status.Clusters) == 0 {
		fmt.Fprintln(w, "No cluster matches yet.")
		return nil
	}
	fmt.Fprintln(w)
	t := table.New(w, "CLUSTER", "READY", "GATED", "IN PROGRESS / FAILED", "TIME TO BASELINE")
	for _, cs := range cb.Status.Clusters {
		var active []string
		for _, c := range cs.Components {
			if c.State == appsv1alpha1.ComponentApplying || c.State == appsv1alpha1.ComponentFailed || c.State == appsv1alpha1.ComponentWithdrawing {
				active = append(active, c.Name+"("+string(c.State)+")")
			}
		}
		ttb := "-"
		if cs.BaselineReadyTime != nil && cs.MatchedTime != nil {
			ttb = cs.BaselineReadyTime.Sub(cs.MatchedTime.Time).String()
		}
		t.Row(cs.Name, orDash(cs.Ready), yesNo(cs.Gated), orDash(strings.Join(active, ", ")), ttb)
	}
	if err := t.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	t = table.New(w, "CLUSTER", "COMPONENT", "STATE", "SINCE", "DETAIL")
	for _, cs := range cb.Status.Clusters {
		for _, c := range cs.Components {
			since := "-"
			if c.Since != nil {
				since = duration.HumanDuration(now.Sub(c.Since.Time))
			}
			t.Row(cs.Name, c.Name, string(c.State), since, c.Message)
		}
	}
	return t.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
