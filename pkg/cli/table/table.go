// Package table prints aligned columns for the CLI's listings, as kubectl
// get does.
package table

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
)

// Table is a listing being printed.
type Table struct {
	tw *tabwriter.Writer
}

// New starts a table on w (standard output when nil) with the given
// column headers.
func New(w io.Writer, headers ...string) *Table {
	if w == nil {
		w = os.Stdout
	}
	t := &Table{tw: tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)}
	t.Row(headers...)
	return t
}

// Row adds one row; empty cells print as "-" so columns stay aligned.
func (t *Table) Row(cells ...string) {
	for i, c := range cells {
		if c == "" {
			cells[i] = "-"
		}
	}
	fmt.Fprintln(t.tw, strings.Join(cells, "\t"))
}

// Flush writes the table out.
func (t *Table) Flush() error { return t.tw.Flush() }
