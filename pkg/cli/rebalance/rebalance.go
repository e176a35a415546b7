// Package rebalance is `atoll rebalance`: it lists and shows gradual moves
// (Rebalances) and sets their pause, abort and rollback fields.
package rebalance

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/atoll-dev/atoll/apis/apps/v1alpha1"
	"github.com/atoll-dev/atoll/pkg/cli/cmds"
	"github.com/atoll-dev/atoll/pkg/cli/kubeconfig"
	"github.com/atoll-dev/atoll/pkg/cli/table"
	"github.com/atoll-dev/atoll/pkg/util/names"
)

// Run dispatches `atoll rebalance ACTION`.
func Run(ctx context.Context, cfg *cmds.Rebalance) error {
	c, err := newClient(cfg.Kubeconfig)
	if err != nil {
		return err
	}
	out := cfg.Out
	if out == nil {
		out = os.Stdout
	}
	if cfg.Action == "list" {
		return list(ctx, c, cfg, out)
	}
	key, err := target(cfg)
	if err != nil {
		return err
	}
	var rb appsv1alpha1.Rebalance
	if err := c.Get(ctx, key, &rb); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("rebalance %s not found (atoll rebalance list -A shows them)", key)
		}
		return fmt.Errorf("reading rebalance %s: %w", key, err)
	}
	switch cfg.Action {
	case "status":
		return status(out, &rb, time.Now())
	case "pause":
		return patch(ctx, c, &rb, out, map[string]any{"paused": true}, "paused (at the next half-step)")
	case "resume":
		return patch(ctx, c, &rb, out, map[string]any{"paused": false}, "resumed")
	case "abort":
		if rb.Spec.Abort {
			return fmt.Errorf("rebalance %s: already aborted", key)
		}
		return patch(ctx, c, &rb, out, map[string]any{"abort": true, "rollback": false}, "aborted: the workload stays where it runs now")
	case "rollback":
		if rb.Spec.Abort {
			return fmt.Errorf("rebalance %s: aborted moves cannot be rolled back; create a new Rebalance or change the policy", key)
		}
		return patch(ctx, c, &rb, out, map[string]any{"rollback": true, "paused": false}, "rolling back to "+dist(rb.Status.From))
	}
	return fmt.Errorf("unknown action %q: use list, status, pause, resume, abort or rollback", cfg.Action)
}

func newClient(path string) (client.Client, error) {
	return kubeconfig.Client(path, appsv1alpha1.AddToScheme)
}

// target reads NS/NAME or NAME (in -n or the kubeconfig's namespace).
func target(cfg *cmds.Rebalance) (types.NamespacedName, error) {
	if ns, name, ok := strings.Cut(cfg.Target, "/"); ok {
		if ns == "" || name == "" {
			return types.NamespacedName{}, fmt.Errorf("%q: give NAMESPACE/NAME or NAME", cfg.Target)
		}
		return types.NamespacedName{Namespace: ns, Name: name}, nil
	}
	return types.NamespacedName{Namespace: namespace(cfg), Name: cfg.Target}, nil
}

func namespace(cfg *cmds.Rebalance) string {
	if cfg.Namespace != "" {
		return cfg.Namespace
	}
	if ns, err := kubeconfig.Namespace(cfg.Kubeconfig, ""); err == nil && ns != "" {
		return ns
	}
	return metav1.NamespaceDefault
}

func list(ctx context.Context, c client.Client, cfg *cmds.Rebalance, out io.Writer) error {
	var l appsv1alpha1.RebalanceList
	var opts []client.ListOption
	if !cfg.AllNamespaces {
		opts = append(opts, client.InNamespace(namespace(cfg)))
	}
	if err := c.List(ctx, &l, opts...); err != nil {
		return fmt.Errorf("listing rebalances: %w", err)
	}
	if len(l.Items) == 0 {
		fmt.Fprintln(out, "No rebalances: no workload is moving between clusters.")
		return nil
	}
	slices.SortFunc(l.Items, func(a, b appsv1alpha1.Rebalance) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	t := table.New(out, "NAMESPACE", "NAME", "WORKLOAD", "PHASE", "STEP", "PROGRESS", "FROM", "TO")
	for i := range l.Items {
		rb := &l.Items[i]
		t.Row(rb.Namespace, rb.Name, rb.Status.Summary.Workload, phase(rb), rb.Status.Summary.Step,
			bar(rb.Status.Summary.Progress), rb.Status.Summary.From, rb.Status.Summary.To)
	}
	return t.Flush()
}

// phase is the phase, with the reason a move waits when it is queued.
func phase(rb *appsv1alpha1.Rebalance) string {
	p := string(rb.Status.Phase)
	for _, c := range rb.Status.Conditions {
		if c.Type == appsv1alpha1.ConditionProgressing && c.Status == metav1.ConditionFalse &&
			(c.Reason == "Queued" || c.Reason == "ClusterNotReady" || c.Reason == "ProgressDeadlineExceeded") {
			p += " (" + c.Reason + ")"
		}
	}
	return p
}

// bar draws "55%" as a ten-cell bar with the number.
func bar(progress string) string {
	n, err := strconv.Atoi(strings.TrimSuffix(progress, "%"))
	if err != nil {
		return progress
	}
	n = min(max(n, 0), 100)
	return strings.Repeat("█", n/10) + strings.Repeat("░", 10-n/10) + fmt.Sprintf(" %3d%%", n)
}

func status(out io.Writer, rb *appsv1alpha1.Rebalance, now time.Time) error {
	st := &rb.Status
	fmt.Fprintf(out, "Rebalance:  %s/%s\n", rb.Namespace, rb.Name)
	fmt.Fprintf(out, "Workload:   %s (binding %s)\n", st.Summary.Workload, st.Binding)
	fmt.Fprintf(out, "Phase:      %s\n", phase(rb))
	fmt.Fprintf(out, "Step:       %s %s\n", st.Summary.Step, stepPhase(st))
	fmt.Fprintf(out, "Progress:   %s\n", bar(st.Summary.Progress))
	fmt.Fprintf(out, "From:       %s\n", dist(st.From))
	fmt.Fprintf(out, "To:         %s\n", dist(st.To))
	if len(st.PolicyTarget) > 0 {
		fmt.Fprintf(out, "Policy:     %s\n", dist(st.PolicyTarget))
	}
	mode := "replicas (spec.clusters)"
	if st.HPA {
		mode = "member HPAs (minReplicas floors, maxReplicas caps)"
	}
	fmt.Fprintf(out, "Steering:   %s\n", mode)
	if st.HPAEffectiveMin != nil {
		fmt.Fprintf(out, "HPA min:    %d in total over the members\n", *st.HPAEffectiveMin)
	}
	if st.EstimatedCompletionTime != nil {
		fmt.Fprintf(out, "ETA:        %s (in %s)\n", st.EstimatedCompletionTime.UTC().Format(time.RFC3339),
			duration.HumanDuration(max(0, st.EstimatedCompletionTime.Sub(now))))
	}
	fmt.Fprintln(out)
	t := table.New(out, "CLUSTER", "PLANNED", "SPEC", "READY", "HPA-MIN", "HPA-MAX", "HPA-DESIRED", "SCALE-DOWN-WINDOW")
	for _, c := range st.Clusters {
		window := ""
		if c.ScaleDownWindowSeconds != nil {
			window = strconv.Itoa(int(*c.ScaleDownWindowSeconds)) + "s"
		}
		t.Row(c.Name, strconv.Itoa(int(c.Planned)), strconv.Itoa(int(c.Spec)), strconv.Itoa(int(c.Ready)),
			opt(c.HPAMin), opt(c.HPAMax), opt(c.HPADesired), window)
	}
	if err := t.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(out, "\nConditions:")
	t = table.New(out, "  TYPE", "STATUS", "REASON", "AGE", "MESSAGE")
	for _, c := range st.Conditions {
		t.Row("  "+c.Type, string(c.Status), c.Reason, duration.HumanDuration(now.Sub(c.LastTransitionTime.Time)), c.Message)
	}
	if err := t.Flush(); err != nil {
		return err
	}
	if len(st.History) > 0 {
		fmt.Fprintln(out, "\nRecent steps:")
		t = table.New(out, "  STEP", "STARTED", "TOOK", "PLANNED")
		for _, h := range st.History {
			took := "running"
			if h.EndTime != nil {
				took = h.EndTime.Sub(h.StartTime.Time).Round(time.Second).String()
			}
			t.Row("  "+strconv.Itoa(int(h.Step)), h.StartTime.UTC().Format(time.TimeOnly), took, dist(h.Planned))
		}
		return t.Flush()
	}
	return nil
}

func stepPhase(st *appsv1alpha1.RebalanceStatus) string {
	if st.StepPhase == "" {
		return ""
	}
	return "(" + string(st.StepPhase) + ")"
}

func dist(rs []appsv1alpha1.ClusterReplicas) string {
	if len(rs) == 0 {
		return "-"
	}
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = fmt.Sprintf("%s=%d", r.Name, r.Replicas)
	}
	return strings.Join(parts, " ")
}

func opt(p *int32) string {
	if p == nil {
		return ""
	}
	return strconv.Itoa(int(*p))
}

// patch merges fields into the spec.
func patch(ctx context.Context, c client.Client, rb *appsv1alpha1.Rebalance, out io.Writer, fields map[string]any, what string) error {
	body, err := json.Marshal(map[string]any{"spec": fields})
	if err != nil {
		return err
	}
	if err := c.Patch(ctx, rb, client.RawPatch(types.MergePatchType, body), client.FieldOwner(names.FieldManager+"-cli")); err != nil {
		return fmt.Errorf("updating rebalance %s/%s: %w", rb.Namespace, rb.Name, err)
	}
	fmt.Fprintf(out, "rebalance %s/%s %s\n", rb.Namespace, rb.Name, what)
	return nil
}
