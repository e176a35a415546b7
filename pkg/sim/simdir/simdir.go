// Package simdir is the contract between the processes of the simulated
// world: `atoll up` (the supervisor), each `atoll sim cluster` member process,
// and the `atoll sim load` / `atoll sim fault` commands. They share nothing
// but files under the data directory, so each can restart independently and
// the world keeps running while the federation control plane is down.
//
// Layout of DIR (the `atoll up` data dir):
//
//	DIR/members/NAME/                  the member's own data dir (etcd, pki, logs)
//	DIR/members/NAME/kubeconfig        admin kubeconfig, straight to the member's API server
//	DIR/members/NAME/proxy-kubeconfig  admin kubeconfig through the member's fault proxy
//	                                   (what the federation control plane uses)
//	DIR/members/NAME/fault.json        desired fault state (Fault), written by `atoll sim fault`
//	DIR/members/NAME/status.json       observed state (MemberStatus), written by the member
//	DIR/control-plane/fault.json       desired fault state of the federation control plane
//	                                   (Fault; only Stopped applies), written by `atoll sim fault`
//	DIR/control-plane/status.json      observed state of the control-plane process (MemberStatus),
//	                                   written by that process
//	DIR/world/loads.json               offered CPU load per app (Loads), written by `atoll sim load`
//	DIR/world/ready/NAME.json          Ready pods per app in member NAME (ReadyReport), written by NAME
package simdir

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/atoll-dev/atoll/pkg/controlplane/pki"
)

// MemberDir is the data directory of member name.
func MemberDir(dataDir, name string) string { return filepath.Join(dataDir, "members", name) }

// MemberKubeconfig reaches the member's API server directly.
func MemberKubeconfig(dataDir, name string) string {
	return filepath.Join(MemberDir(dataDir, name), "kubeconfig")
}

// ProxyKubeconfig reaches the member's API server through its fault proxy.
func ProxyKubeconfig(dataDir, name string) string {
	return filepath.Join(MemberDir(dataDir, name), "proxy-kubeconfig")
}

// FaultFile holds member name's desired Fault.
func FaultFile(dataDir, name string) string {
	return filepath.Join(MemberDir(dataDir, name), "fault.json")
}

// StatusFile holds member name's MemberStatus.
func StatusFile(dataDir, name string) string {
	return filepath.Join(MemberDir(dataDir, name), "status.json")
}

// ControlPlaneTarget names the federation control plane where a command
// takes a member name or the control plane (`atoll sim fault`).
const ControlPlaneTarget = "control-plane"

// ControlPlaneDir holds the fault, status and process log of the federation
// control-plane process that `atoll up` supervises.
func ControlPlaneDir(dataDir string) string { return filepath.Join(dataDir, ControlPlaneTarget) }

// ControlPlaneFaultFile holds the control plane's desired Fault.
func ControlPlaneFaultFile(dataDir string) string {
	return filepath.Join(ControlPlaneDir(dataDir), "fault.json")
}

// ControlPlaneStatusFile holds the control-plane process's MemberStatus:
// PID, Ready (API server ready, CRDs established, controllers running) and
// APIServer (its URL).
func ControlPlaneStatusFile(dataDir string) string {
	return filepath.Join(ControlPlaneDir(dataDir), "status.json")
}

// LoadsFile holds the offered loads of all apps.
func LoadsFile(dataDir string) string { return filepath.Join(dataDir, "world", "loads.json") }

// ReadyFile holds member name's ReadyReport.
func ReadyFile(dataDir, name string) string {
	return filepath.Join(dataDir, "world", "ready", name+".json")
}

// Fault is the fault state a member should be in. Generation grows with
// every change so writers can wait until it is observed.
type Fault struct {
	Generation int64 `json:"generation"`
	// Stopped: the supervisor keeps the member process down.
	Stopped bool `json:"stopped,omitempty"`
	// Partitioned: the proxy blackholes the control plane's connections and
	// the world sends the member no traffic.
	Partitioned bool `json:"partitioned,omitempty"`
	// Latency is added by the proxy to every request (a duration string).
	Latency string `json:"latency,omitempty"`
}

// MemberStatus is what a running member reports about itself.
type MemberStatus struct {
	PID int `json:"pid"`
	// Ready: API server, controllers, scheduler and nodes are up.
	Ready bool `json:"ready"`
	// APIServer is the member API server URL; Proxy is the fault proxy URL.
	APIServer string `json:"apiServer"`
	Proxy     string `json:"proxy"`
	// ObservedFaultGeneration is the Fault generation the member applies.
	ObservedFaultGeneration int64     `json:"observedFaultGeneration"`
	Updated                 time.Time `json:"updated"`
}

// Loads maps an app (pods labelled app=NAME) to its offered CPU load in
// millicores.
type Loads map[string]int64

// ReadyReport is a member's count of Ready pods per app, refreshed about
// every second while the member runs.
type ReadyReport struct {
	Time time.Time      `json:"time"`
	Apps map[string]int `json:"apps"`
}

// ReadJSON reads path into v. A missing file leaves v untouched and returns
// false with no error.
func ReadJSON(path string, v any) (bool, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading %s: %w", path, err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return false, fmt.Errorf("decoding %s: %w", path, err)
	}
	return true, nil
}

// WriteJSON writes v to path atomically, creating its directory.
func WriteJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", filepath.Dir(path), err)
	}
	return pki.WriteFileAtomic(path, append(data, '\n'), 0o600)
}

// LockFile takes an exclusive flock on path, creating it, and returns the
// function that releases it; writers use it around read-modify-write of a
// shared file (loads.json, fault.json).
func LockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening lock file %s: %w", path, err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	// Closing the descriptor releases the lock.
	return func() { _ = f.Close() }, nil
}
