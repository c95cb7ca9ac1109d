package harness

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// process is one control-plane binary run as a child process, with its
// output appended to a log file that outlives it (so a restart keeps the
// history, and a failed test can point at it).
type process struct {
	name    string
	path    string
	args    []string
	env     []string
	dir     string
	logPath string

	mu      sync.Mutex
	cmd     *exec.Cmd
	done    chan struct{}
	exitErr error
}

func newProcess(name, path string, args, env []string, dir, logDir string) *process {
	return &process{name: name, path: path, args: args, env: env, dir: dir, logPath: filepath.Join(logDir, name+".log")}
}

// start runs the process. It dies with the test binary (Pdeathsig), so an
// interrupted test leaves nothing behind, and runs in its own process group
// so stop reaches anything it forked.
func (p *process) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil && !p.exited() {
		return fmt.Errorf("%s is already running (pid %d)", p.name, p.cmd.Process.Pid)
	}
	logf, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	_, _ = fmt.Fprintf(logf, "\n==== %s: %s %s\n", time.Now().Format(time.RFC3339), p.path, strings.Join(p.args, " "))
	cmd := exec.Command(p.path, p.args...)
	cmd.Dir = p.dir
	cmd.Env = append(os.Environ(), p.env...)
	cmd.Stdout = logf
	cmd.Stderr = logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = logf.Close()
		return fmt.Errorf("cannot start %s: %w", p.name, err)
	}
	p.cmd = cmd
	p.done = make(chan struct{})
	p.exitErr = nil
	go func(cmd *exec.Cmd, done chan struct{}) {
		err := cmd.Wait()
		_ = logf.Close()
		p.mu.Lock()
		p.exitErr = err
		p.mu.Unlock()
		close(done)
	}(cmd, p.done)
	return nil
}

// exited tells whether a started process has ended. Callers hold p.mu or
// know the process does not change concurrently.
func (p *process) exited() bool {
	if p.done == nil {
		return true
	}
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// alive returns an error if the process has ended, with the tail of its log.
func (p *process) alive() error {
	p.mu.Lock()
	done, cmd := p.done, p.cmd
	p.mu.Unlock()
	if done == nil || cmd == nil {
		return fmt.Errorf("%s is not running", p.name)
	}
	select {
	case <-done:
		p.mu.Lock()
		err := p.exitErr
		p.mu.Unlock()
		return fmt.Errorf("%s exited (%v); last lines of %s:\n%s", p.name, err, p.logPath, tail(p.logPath, 30))
	default:
		return nil
	}
}

// pid returns the process id, or 0.
func (p *process) pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// stop sends SIGTERM to the process group and SIGKILL after grace.
func (p *process) stop(grace time.Duration) error {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil || done == nil {
		return nil
	}
	select {
	case <-done:
		return nil
	default:
	}
	pgid := cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-done:
		return nil
	case <-time.After(grace):
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	select {
	case <-done:
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("%s (pid %d) did not exit after SIGKILL", p.name, pgid)
	}
}

// run runs a one-shot command of a tool (e.g. crossplane core init) to
// completion, appending its output to the tool's log.
func run(ctx context.Context, name, path string, args, env []string, logPath string) error {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close() //nolint:errcheck // best effort log
	_, _ = fmt.Fprintf(logf, "\n==== %s: %s %s\n", time.Now().Format(time.RFC3339), path, strings.Join(args, " "))
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout = io.MultiWriter(logf, &out)
	cmd.Stderr = io.MultiWriter(logf, &out)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s failed: %w\n%s", name, err, lastLines(out.String(), 20))
	}
	return nil
}

// tail returns the last n lines of a file.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", path, err)
	}
	return lastLines(string(b), n)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
