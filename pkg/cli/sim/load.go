package sim

import (
	"context"
	"fmt"
	"os"

	"github.com/atoll-dev/atoll/pkg/cli/cmds"
	"github.com/atoll-dev/atoll/pkg/sim/world"
)

// Load sets the CPU load offered to cfg.App across the simulated world
// (DATA-DIR/world/loads.json) and prints what it set.
func Load(_ context.Context, cfg *cmds.SimLoad) error {
	if cfg.CPU.Sign() < 0 {
		return fmt.Errorf("CPU %s: must not be negative", cfg.CPU.String())
	}
	if _, err := os.Stat(cfg.DataDir); err != nil {
		return fmt.Errorf("--data-dir %s: %w (is it the data dir of atoll up?)", cfg.DataDir, err)
	}
	milli := cfg.CPU.MilliValue()
	if err := world.SetLoad(cfg.DataDir, cfg.App, milli); err != nil {
		return fmt.Errorf("setting the load of %s: %w", cfg.App, err)
	}
	out := cfg.Out
	if out == nil {
		out = os.Stdout
	}
	if milli == 0 {
		_, err := fmt.Fprintf(out, "%s: no offered load\n", cfg.App)
		return err
	}
	_, err := fmt.Fprintf(out, "%s: offered load %dm CPU\n", cfg.App, milli)
	return err
}
