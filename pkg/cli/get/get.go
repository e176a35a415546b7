// Package get shows control-plane state (`atoll get`): member clusters and,
// for resource templates, where they run.
package get

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/atoll-dev/atoll/pkg/cli/cmds"
)

// Run dispatches `atoll get RESOURCE`.
func Run(ctx context.Context, cfg *cmds.Get) error {
	switch strings.ToLower(cfg.Resource) {
	case "clusters", "cluster", "clusters.cluster.karmada.io":
		return Clusters(ctx, cfg)
	default:
		return Resources(ctx, cfg)
	}
}

// table prints aligned columns, as kubectl get does.
type table struct {
	tw *tabwriter.Writer
}

// newTable starts a table on w (standard output when nil) with the given
// column headers.
func newTable(w io.Writer, headers ...string) *table {
	if w == nil {
		w = os.Stdout
	}
	t := &table{tw: tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)}
	t.row(headers...)
	return t
}

// row adds one row; empty cells print as "-" so columns stay aligned.
func (t *table) row(cells ...string) {
	for i, c := range cells {
		if c == "" {
			cells[i] = "-"
		}
	}
	fmt.Fprintln(t.tw, strings.Join(cells, "\t"))
}

// flush writes the table out.
func (t *table) flush() error { return t.tw.Flush() }
