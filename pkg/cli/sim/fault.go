// Package sim is the behaviour of `atoll sim load` and `atoll sim fault`:
// they change the simulated world through the files of package simdir and,
// for faults, wait until the member shows the effect.
package sim

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/atoll-dev/atoll/pkg/cli/cmds"
	"github.com/atoll-dev/atoll/pkg/sim/simdir"
)

// Actions of `atoll sim fault`.
const (
	ActionStop      = "stop"
	ActionStart     = "start"
	ActionPartition = "partition"
	ActionHeal      = "heal"
	ActionSlow      = "slow"
	ActionFast      = "fast"
)

// Actions lists the valid actions in the order help and errors show them.
var Actions = []string{ActionStop, ActionStart, ActionPartition, ActionHeal, ActionSlow, ActionFast}

// ControlPlaneTarget is the federation control plane as a fault target.
const ControlPlaneTarget = simdir.ControlPlaneTarget

// ControlPlaneActions are the actions the control plane takes.
var ControlPlaneActions = []string{ActionStop, ActionStart}

// pollInterval is how often the member's status is read while waiting.
const pollInterval = 100 * time.Millisecond

// Fault records cfg.Action on member cfg.Target in its fault.json and waits
// (up to cfg.Wait) until the member shows the effect, then prints one line
// saying what happened.
func Fault(ctx context.Context, cfg *cmds.SimFault) error {
	if cfg.Target == ControlPlaneTarget {
		return controlPlaneFault(ctx, cfg)
	}
	if err := validateTarget(cfg.DataDir, cfg.Target); err != nil {
		return err
	}
	change, err := faultChange(cfg.Action, cfg.Latency)
	if err != nil {
		return err
	}
	var before simdir.MemberStatus
	if _, err := simdir.ReadJSON(simdir.StatusFile(cfg.DataDir, cfg.Target), &before); err != nil {
		return err
	}
	prev, next, err := UpdateFault(cfg.DataDir, cfg.Target, change)
	if err != nil {
		return err
	}
	out := cfg.Out
	if out == nil {
		out = os.Stdout
	}
	w := &waiter{dataDir: cfg.DataDir, member: cfg.Target, action: cfg.Action, fault: next, wait: cfg.Wait,
		statusFile: simdir.StatusFile(cfg.DataDir, cfg.Target)}
	if cfg.Wait <= 0 {
		_, err := fmt.Fprintf(out, "%s: %s recorded (fault generation %d); not waiting for it to take effect\n", cfg.Target, cfg.Action, next.Generation)
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Wait)
	defer cancel()

	var msg string
	switch cfg.Action {
	case ActionStop:
		msg, err = w.stopped(ctx)
	case ActionStart:
		msg, err = w.started(ctx, before, prev)
	default:
		if next.Stopped {
			msg = fmt.Sprintf("%s is stopped: %s recorded (fault generation %d); it applies when the member starts again", cfg.Target, cfg.Action, next.Generation)
			break
		}
		msg, err = w.observed(ctx, cfg.Action)
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(out, msg)
	return err
}

// faultChange validates action and returns how it changes a Fault.
func faultChange(action string, latency time.Duration) (func(*simdir.Fault), error) {
	switch action {
	case ActionStop:
		return func(f *simdir.Fault) { f.Stopped = true }, nil
	case ActionStart:
		return func(f *simdir.Fault) { f.Stopped = false }, nil
	case ActionPartition:
		return func(f *simdir.Fault) { f.Partitioned = true }, nil
	case ActionHeal:
		return func(f *simdir.Fault) { f.Partitioned = false }, nil
	case ActionSlow:
		if latency <= 0 {
			return nil, fmt.Errorf("--latency %v: slow needs a positive latency", latency)
		}
		return func(f *simdir.Fault) { f.Latency = latency.String() }, nil
	case ActionFast:
		return func(f *simdir.Fault) { f.Latency = "" }, nil
	}
	return nil, fmt.Errorf("ACTION %q: unknown action; valid actions are %s", action, strings.Join(Actions, ", "))
}

// validateTarget checks that target names an existing member of dataDir.
func validateTarget(dataDir, target string) error {
	known, err := Members(dataDir)
	if err != nil {
		return err
	}
	knownText := "no members yet: is --data-dir the data dir of a running atoll up?"
	if len(known) > 0 {
		knownText = "known members: " + strings.Join(known, ", ")
	}
	if !slices.Contains(known, target) {
		return fmt.Errorf("TARGET %q: no such member in %s (%s, or %s)", target, dataDir, knownText, ControlPlaneTarget)
	}
	return nil
}

// Members lists the members of dataDir: the directories under
// DATA-DIR/members, sorted.
func Members(dataDir string) ([]string, error) {
	root := simdir.MemberDir(dataDir, "")
	entries, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing members: %w", err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names, nil // os.ReadDir sorts by name
}

// UpdateFault changes member's fault.json under an exclusive lock on
// fault.json.lock beside it: change is applied to the current Fault and the
// Generation is incremented. It returns the Fault before and after.
func UpdateFault(dataDir, member string, change func(*simdir.Fault)) (before, after simdir.Fault, err error) {
	return updateFaultFile(simdir.FaultFile(dataDir, member), change)
}

// UpdateControlPlaneFault is UpdateFault for the control plane's fault.json.
func UpdateControlPlaneFault(dataDir string, change func(*simdir.Fault)) (before, after simdir.Fault, err error) {
	return updateFaultFile(simdir.ControlPlaneFaultFile(dataDir), change)
}

func updateFaultFile(path string, change func(*simdir.Fault)) (before, after simdir.Fault, err error) {
	unlock, err := simdir.LockFile(path + ".lock")
	if err != nil {
		return before, after, err
	}
	defer unlock()
	if _, err := simdir.ReadJSON(path, &before); err != nil {
		return before, after, err
	}
	after = before
	change(&after)
	after.Generation = before.Generation + 1
	if err := simdir.WriteJSON(path, after); err != nil {
		return before, after, err
	}
	return before, after, nil
}

// waiter waits until a member (or the control plane: member is then
// ControlPlaneTarget) shows the effect of fault in its status file.
type waiter struct {
	dataDir, member, action string
	statusFile              string
	fault                   simdir.Fault
	wait                    time.Duration
}

// until polls the member's status until done says it shows the effect or
// ctx ends; notYet explains what is still missing for the error then.
func (w *waiter) until(ctx context.Context, done func(simdir.MemberStatus) bool, notYet func(simdir.MemberStatus) string) (simdir.MemberStatus, error) {
	ticker := time.NewTicker(pollInterval)
	defer ticker.Stop()
	var st simdir.MemberStatus
	var readErr error
	for {
		st = simdir.MemberStatus{}
		_, readErr = simdir.ReadJSON(w.statusFile, &st)
		if readErr == nil && done(st) {
			return st, nil
		}
		select {
		case <-ctx.Done():
			why := notYet(st)
			if readErr != nil {
				why = readErr.Error()
			}
			waited := fmt.Sprintf("after %v", w.wait)
			if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
				waited = "when interrupted"
			}
			return st, fmt.Errorf("%s: %s recorded (fault generation %d), but %s %s; the fault stays recorded and takes effect as soon as atoll up can apply it", w.member, w.action, w.fault.Generation, waited, why)
		case <-ticker.C:
		}
	}
}

func (w *waiter) stopped(ctx context.Context) (string, error) {
	st, err := w.until(ctx,
		func(st simdir.MemberStatus) bool { return !alive(st.PID) },
		func(st simdir.MemberStatus) string {
			return fmt.Sprintf("its process %d still runs: is atoll up running with --data-dir %s?", st.PID, w.dataDir)
		})
	if err != nil {
		return "", err
	}
	if st.PID == 0 {
		return fmt.Sprintf("%s stopped: it is not running; atoll up keeps it down until `atoll sim fault %s start`", w.member, w.member), nil
	}
	return fmt.Sprintf("%s stopped: process %d is gone; atoll up keeps it down until `atoll sim fault %s start`", w.member, st.PID, w.member), nil
}

func (w *waiter) started(ctx context.Context, before simdir.MemberStatus, prev simdir.Fault) (string, error) {
	if !prev.Stopped && before.Ready && alive(before.PID) {
		return fmt.Sprintf("%s is already running: process %d is Ready", w.member, before.PID), nil
	}
	st, err := w.until(ctx,
		func(st simdir.MemberStatus) bool { return st.Ready && st.PID != before.PID && alive(st.PID) },
		func(simdir.MemberStatus) string {
			return fmt.Sprintf("no new Ready process yet: is atoll up running with --data-dir %s? (see %s/logs/process.log)", w.dataDir, simdir.MemberDir(w.dataDir, w.member))
		})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s started: process %d is Ready", w.member, st.PID), nil
}

func (w *waiter) observed(ctx context.Context, action string) (string, error) {
	_, err := w.until(ctx,
		func(st simdir.MemberStatus) bool { return st.ObservedFaultGeneration >= w.fault.Generation },
		func(st simdir.MemberStatus) string {
			running := "its process is not running"
			if alive(st.PID) {
				running = fmt.Sprintf("process %d runs", st.PID)
			}
			return fmt.Sprintf("the member has observed only generation %d (%s)", st.ObservedFaultGeneration, running)
		})
	if err != nil {
		return "", err
	}
	gen := fmt.Sprintf("(fault generation %d)", w.fault.Generation)
	switch action {
	case ActionPartition:
		return fmt.Sprintf("%s partitioned: its fault proxy blackholes connections and the world sends it no traffic %s", w.member, gen), nil
	case ActionHeal:
		return fmt.Sprintf("%s healed: its fault proxy forwards connections again %s", w.member, gen), nil
	case ActionSlow:
		return fmt.Sprintf("%s slowed: its fault proxy adds %s to every request %s", w.member, w.fault.Latency, gen), nil
	default:
		return fmt.Sprintf("%s fast again: no added latency %s", w.member, gen), nil
	}
}

// alive reports whether process pid exists.
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
