package framework

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Kubectl runs kubectl against the federation control plane with stdin
// (may be empty) and returns its combined output and error, so a test can
// act exactly as a user does, including being refused.
func (cp *ControlPlane) Kubectl(t testing.TB, stdin string, args ...string) (string, error) {
	t.Helper()
	return kubectl(t, cp.Kubeconfig, stdin, args...)
}

// MemberKubectl runs kubectl straight against member name's API server.
func (cp *ControlPlane) MemberKubectl(t testing.TB, name, stdin string, args ...string) (string, error) {
	t.Helper()
	return kubectl(t, filepath.Join(cp.DataDir, "members", name, "kubeconfig"), stdin, args...)
}

// MustKubectl is Kubectl that fails the test on an error.
func (cp *ControlPlane) MustKubectl(t testing.TB, stdin string, args ...string) string {
	t.Helper()
	out, err := cp.Kubectl(t, stdin, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func kubectl(t testing.TB, kubeconfig, stdin string, args ...string) (string, error) {
	t.Helper()
	bin, err := exec.LookPath("kubectl")
	if err != nil {
		t.Fatalf("kubectl is needed by the e2e tests (the README's prerequisites): %v", err)
	}
	cmd := exec.Command(bin, append([]string{"--kubeconfig", kubeconfig}, args...)...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	return out.String(), err
}

// Consistently checks cond every half second for d and fails the test, with
// what and cond's message, the first time it is false.
func Consistently(t testing.TB, d time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		if ok, msg := cond(); !ok {
			t.Fatalf("%s stopped holding: %s", what, msg)
		}
		if time.Now().After(deadline) {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
}
