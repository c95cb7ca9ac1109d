package harness

import (
	"context"
	"fmt"
	"syscall"
	"time"
)

// Faults: ways to break a running control plane the way production breaks,
// for tests that check nothing is lost.

// KillFunction kills the function process with SIGKILL (no graceful
// shutdown: in-flight RunFunction calls are cut off, as when a node dies or
// the OOM killer strikes) and waits until it is gone. StartFunction starts
// it again on the same address.
func (cp *ControlPlane) KillFunction() error {
	if err := cp.function.kill(); err != nil {
		return err
	}
	cp.logf("killed the function (SIGKILL)")
	return nil
}

// FunctionPid is the process id of the running function, or 0.
func (cp *ControlPlane) FunctionPid() int {
	if cp.function == nil || cp.function.alive() != nil {
		return 0
	}
	return cp.function.pid()
}

// RestartAPIServer makes the API unavailable for downtime and brings it
// back with the same flags: the same port, certificates and etcd, so every
// client (Crossplane, the controller manager, the test) reconnects to the
// same address. It sends SIGTERM (kube-apiserver stops listening at once),
// SIGKILL if the process has not exited when downtime is up (with watch
// clients connected, kube-apiserver 1.34 keeps running for tens of seconds
// after it stopped listening, as a kubelet would end it after the pod's
// grace period), and starts it again downtime after the SIGTERM. It
// returns when /readyz answers again.
func (cp *ControlPlane) RestartAPIServer(ctx context.Context, downtime time.Duration) error {
	t := time.Now()
	if err := cp.apiserver.stop(downtime); err != nil {
		return err
	}
	cp.logf("kube-apiserver stopped in %s; starting it again %s after the SIGTERM", time.Since(t).Round(10*time.Millisecond), downtime)
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Until(t.Add(downtime))):
	}
	if err := cp.runAPIServer(ctx, "kube-apiserver /readyz after a restart"); err != nil {
		return err
	}
	cp.logf("restarted kube-apiserver: %s from SIGTERM to ready", time.Since(t).Round(10*time.Millisecond))
	return nil
}

// kill sends SIGKILL to the process group and waits for the process to
// exit.
func (p *process) kill() error {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil || done == nil {
		return fmt.Errorf("%s is not running", p.name)
	}
	select {
	case <-done:
		return fmt.Errorf("%s is not running", p.name)
	default:
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-done:
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("%s (pid %d) did not exit after SIGKILL", p.name, cmd.Process.Pid)
	}
}
