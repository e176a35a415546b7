package controlplane

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/atoll-dev/atoll/pkg/controlplane/pki"
)

// portState remembers the ports of the previous run so that a restart keeps
// the same addresses: copied kubeconfigs keep working and etcd's stored
// peer URL stays accurate.
type portState struct {
	APIServer  int `json:"apiServer,omitempty"`
	EtcdClient int `json:"etcdClient,omitempty"`
	EtcdPeer   int `json:"etcdPeer,omitempty"`
}

func loadPorts(path string) (*portState, error) {
	var ps portState
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return &ps, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if err := json.Unmarshal(data, &ps); err != nil {
		// A damaged hint is not worth failing the start for: pick new ports.
		return &portState{}, nil
	}
	return &ps, nil
}

func (ps *portState) save(path string) error {
	data, err := json.MarshalIndent(ps, "", "  ")
	if err != nil {
		return err
	}
	return pki.WriteFileAtomic(path, append(data, '\n'), 0o600)
}
