package sim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/atoll-dev/atoll/pkg/cli/cmds"
	"github.com/atoll-dev/atoll/pkg/sim/simdir"
)

// controlPlaneFault records cfg.Action (stop or start) in the control
// plane's fault.json, which atoll up acts on, and waits until it shows:
// stop, the control-plane process is gone and its API server port refuses
// connections; start, a new process is Ready and the API server's /readyz
// is ok.
func controlPlaneFault(ctx context.Context, cfg *cmds.SimFault) error {
	if !slices.Contains(ControlPlaneActions, cfg.Action) {
		return fmt.Errorf("TARGET %q: ACTION %q is not supported on the federation control plane; supported actions: %s",
			ControlPlaneTarget, cfg.Action, strings.Join(ControlPlaneActions, ", "))
	}
	if info, err := os.Stat(simdir.ControlPlaneDir(cfg.DataDir)); err != nil || !info.IsDir() {
		return fmt.Errorf("TARGET %q: no control plane in %s: is --data-dir the data dir of a running atoll up?", ControlPlaneTarget, cfg.DataDir)
	}
	change, err := faultChange(cfg.Action, 0)
	if err != nil {
		return err
	}
	statusFile := simdir.ControlPlaneStatusFile(cfg.DataDir)
	var before simdir.MemberStatus
	if _, err := simdir.ReadJSON(statusFile, &before); err != nil {
		return err
	}
	prev, next, err := UpdateControlPlaneFault(cfg.DataDir, change)
	if err != nil {
		return err
	}
	out := cfg.Out
	if out == nil {
		out = os.Stdout
	}
	if cfg.Wait <= 0 {
		_, err := fmt.Fprintf(out, "%s: %s recorded (fault generation %d); not waiting for it to take effect\n", ControlPlaneTarget, cfg.Action, next.Generation)
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Wait)
	defer cancel()
	w := &waiter{dataDir: cfg.DataDir, member: ControlPlaneTarget, action: cfg.Action, fault: next, wait: cfg.Wait, statusFile: statusFile}
	var msg string
	if cfg.Action == ActionStop {
		msg, err = w.controlPlaneStopped(ctx)
	} else {
		msg, err = w.controlPlaneStarted(ctx, before, prev)
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(out, msg)
	return err
}

func (w *waiter) controlPlaneStopped(ctx context.Context) (string, error) {
	var still string
	st, err := w.until(ctx,
		func(st simdir.MemberStatus) bool {
			switch {
			case alive(st.PID):
				still = fmt.Sprintf("its process %d still runs: is atoll up running with --data-dir %s?", st.PID, w.dataDir)
			case !refusesConnections(st.APIServer):
				still = fmt.Sprintf("%s still accepts connections", st.APIServer)
			default:
				return true
			}
			return false
		},
		func(simdir.MemberStatus) string { return still })
	if err != nil {
		return "", err
	}
	keep := fmt.Sprintf("atoll up keeps it down until `atoll sim fault %s start`", ControlPlaneTarget)
	switch {
	case st.PID == 0:
		return fmt.Sprintf("%s stopped: it is not running; %s", ControlPlaneTarget, keep), nil
	case st.APIServer == "":
		return fmt.Sprintf("%s stopped: process %d is gone; %s", ControlPlaneTarget, st.PID, keep), nil
	}
	return fmt.Sprintf("%s stopped: process %d is gone and %s refuses connections; %s", ControlPlaneTarget, st.PID, st.APIServer, keep), nil
}

func (w *waiter) controlPlaneStarted(ctx context.Context, before simdir.MemberStatus, prev simdir.Fault) (string, error) {
	if !prev.Stopped && before.Ready && alive(before.PID) {
		return fmt.Sprintf("%s is already running: process %d is Ready", ControlPlaneTarget, before.PID), nil
	}
	kubeconfig := filepath.Join(w.dataDir, "kubeconfig")
	still := fmt.Sprintf("no new Ready process yet: is atoll up running with --data-dir %s? (see %s)", w.dataDir, filepath.Join(w.dataDir, "logs", "control-plane.log"))
	st, err := w.until(ctx,
		func(st simdir.MemberStatus) bool {
			if !st.Ready || st.PID == before.PID || !alive(st.PID) {
				return false
			}
			if err := readyz(ctx, kubeconfig); err != nil {
				still = fmt.Sprintf("process %d says Ready but /readyz is not ok: %v", st.PID, err)
				return false
			}
			return true
		},
		func(simdir.MemberStatus) string { return still })
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s started: process %d is Ready and %s/readyz is ok", ControlPlaneTarget, st.PID, st.APIServer), nil
}

// refusesConnections reports whether nothing listens at server's address
// (an https:// URL). Without an address there is nothing to check.
func refusesConnections(server string) bool {
	if server == "" {
		return true
	}
	u, err := url.Parse(server)
	if err != nil || u.Host == "" {
		return true
	}
	conn, err := net.DialTimeout("tcp", u.Host, time.Second)
	if err == nil {
		_ = conn.Close()
		return false
	}
	return errors.Is(err, syscall.ECONNREFUSED)
}

// readyz asks the API server of kubeconfig for /readyz and returns an error
// unless it answers 200 ok.
func readyz(ctx context.Context, kubeconfig string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(cfg.Host, "/")+"/readyz", nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}
