package harness

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// Process is a process a test runs next to a control plane, e.g. a
// provider: its output goes to <LogDir>/<name>.log (so DumpLogs shows it),
// it dies with the test binary, and the test stops it (Stop does not).
type Process struct{ p *process }

// StartProcess starts a binary with extra environment (e.g. KUBECONFIG)
// and returns once it is running; Alive tells whether it still is.
func (cp *ControlPlane) StartProcess(name, path string, args, env []string) (*Process, error) {
	p := newProcess(name, path, args, env, cp.Dir, cp.LogDir)
	if err := p.start(); err != nil {
		return nil, err
	}
	cp.logf("started %s (pid %d), log %s", name, p.pid(), p.logPath)
	return &Process{p: p}, nil
}

// StartProvider starts the provider (a binary of cmd/provider) with
// kubeconfig and extra flags, its metrics and health endpoints on free
// ports, and returns once it answers /healthz (within a minute). The test
// stops it.
func (cp *ControlPlane) StartProvider(ctx context.Context, bin, kubeconfig string, flags ...string) (*Process, error) {
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	health := "127.0.0.1:" + strconv.Itoa(ports[1])
	args := append(append([]string{}, flags...),
		"--metrics-bind-address=127.0.0.1:"+strconv.Itoa(ports[0]),
		"--health-probe-bind-address="+health)
	p, err := cp.StartProcess("provider", bin, args, []string{"KUBECONFIG=" + kubeconfig})
	if err != nil {
		return nil, err
	}
	hc := &http.Client{Timeout: 2 * time.Second}
	if err := cp.waitFor(ctx, p.p, time.Minute, "the provider's /healthz", healthz(hc, "http://"+health+"/healthz")); err != nil {
		_ = p.Stop(10 * time.Second)
		return nil, err
	}
	return p, nil
}

// Alive returns an error, with the end of the log, if the process ended.
func (p *Process) Alive() error { return p.p.alive() }

// Stop sends SIGTERM, then SIGKILL after grace. Safe to call again.
func (p *Process) Stop(grace time.Duration) error { return p.p.stop(grace) }

// LogPath is the process's log file.
func (p *Process) LogPath() string { return p.p.logPath }

// Pid is the process id (0 before start).
func (p *Process) Pid() int { return p.p.pid() }

// BuildBinary builds a main package of repoRoot (e.g. "./cmd/provider")
// into dir/name, statically, and returns the binary's path.
func BuildBinary(ctx context.Context, repoRoot, pkg, dir, name string) (string, error) {
	out := filepath.Join(dir, name)
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", pkg, err, b)
	}
	return out, nil
}

// FreePorts reserves n distinct free TCP ports on 127.0.0.1, for processes
// a test starts itself.
func FreePorts(n int) ([]int, error) { return freePorts(n) }

// freePorts reserves n distinct free TCP ports on 127.0.0.1. The listeners
// are held until all ports are chosen, so the ports are distinct; another
// process could still take one before its user binds it, which is rare
// enough on a test machine.
func freePorts(n int) ([]int, error) {
	ls := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("cannot find a free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
