package world

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/atoll-dev/atoll/pkg/sim/simdir"
)

// loadsLockFile guards the read-modify-write of simdir.LoadsFile. Every
// writer of that file goes through SetLoad, which holds an exclusive flock on
// it; readers need no lock because the file is replaced atomically.
func loadsLockFile(dataDir string) string { return simdir.LoadsFile(dataDir) + ".lock" }

// SetLoad sets the offered CPU load of app to milliCPU millicores. Zero
// removes the app. Concurrent calls, also from other processes, do not lose
// each other's updates.
func SetLoad(dataDir, app string, milliCPU int64) error {
	if err := validateApp(app); err != nil {
		return err
	}
	if milliCPU < 0 {
		return fmt.Errorf("invalid load %dm for app %q: must not be negative", milliCPU, app)
	}
	path := simdir.LoadsFile(dataDir)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", filepath.Dir(path), err)
	}
	unlock, err := simdir.LockFile(loadsLockFile(dataDir))
	if err != nil {
		return err
	}
	defer unlock()

	loads := simdir.Loads{}
	if _, err := simdir.ReadJSON(path, &loads); err != nil {
		return err
	}
	if loads == nil { // the file held "null"
		loads = simdir.Loads{}
	}
	if milliCPU == 0 {
		delete(loads, app)
	} else {
		loads[app] = milliCPU
	}
	return simdir.WriteJSON(path, loads)
}

// ReadLoads returns the offered loads of all apps; none when the file does
// not exist yet.
func ReadLoads(dataDir string) (simdir.Loads, error) {
	loads := simdir.Loads{}
	if _, err := simdir.ReadJSON(simdir.LoadsFile(dataDir), &loads); err != nil {
		return nil, err
	}
	if loads == nil {
		loads = simdir.Loads{}
	}
	return loads, nil
}

// PublishReady writes member's ReadyReport: the number of Ready pods per app
// (see CountReady) at now. The timestamp is the member's liveness signal for
// the world, so it is written every time; members call this about once a
// second.
func PublishReady(dataDir, member string, apps map[string]int, now time.Time) error {
	if member == "" || strings.ContainsAny(member, `/\`) || member == "." || member == ".." {
		return fmt.Errorf("invalid member name %q", member)
	}
	if apps == nil {
		apps = map[string]int{}
	}
	return simdir.WriteJSON(simdir.ReadyFile(dataDir, member), simdir.ReadyReport{Time: now, Apps: apps})
}

func validateApp(app string) error {
	if app == "" {
		return errors.New("invalid app name: must not be empty")
	}
	if errs := validation.IsValidLabelValue(app); len(errs) > 0 {
		return fmt.Errorf("invalid app name %q: it is the value of the pod label %q: %s", app, AppLabel, strings.Join(errs, "; "))
	}
	return nil
}
