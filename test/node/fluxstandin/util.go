package main

import (
	"errors"
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

// errnoText is strerror(3) of err's errno where it has one, which is how
// Flux words the errors of system calls.
func errnoText(err error) string {
	var en syscall.Errno
	if errors.As(err, &en) {
		s := en.Error()
		return strings.ToUpper(s[:1]) + s[1:]
	}
	return err.Error()
}

// Syslog levels, as log-stderr-level counts them.
const (
	logErr     = 3
	logWarning = 4
	logNotice  = 5
	logInfo    = 6
	logDebug   = 7
)

var levelNames = []string{"emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"}

// logger writes the broker's log to stderr as log-stderr-mode=local does,
// each line naming the double.
type logger struct {
	mu    sync.Mutex
	w     io.Writer
	level int
	rank  int
}

func (l *logger) logf(level int, format string, args ...any) {
	if l == nil || level > l.level {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = fmt.Fprintf(l.w, "%s flux-standin broker.%s[%d]: %s\n",
		time.Now().UTC().Format("Jan 02 15:04:05.000000"), levelNames[level], l.rank, fmt.Sprintf(format, args...))
}

// lookPathIn finds file as execvp would with the PATH of env, which is the
// job's, not the broker's.
func lookPathIn(file string, env []string) (string, error) {
	if strings.Contains(file, "/") {
		if _, err := os.Stat(file); err != nil {
			return "", err
		}
		return file, nil
	}
	p := "/usr/local/bin:/usr/bin:/bin"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			p = v
		}
	}
	for _, dir := range filepath.SplitList(p) {
		if dir == "" {
			dir = "."
		}
		path := filepath.Join(dir, file)
		if st, err := os.Stat(path); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return path, nil
		}
	}
	return "", exec.ErrNotFound
}

// exitCode is a process's exit status as a shell reports it: its code, or
// 128 plus the signal that killed it.
func exitCode(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// strsignal is strsignal(3) for the signals jobs die of.
func strsignal(sig int) string {
	names := map[int]string{1: "Hangup", 2: "Interrupt", 3: "Quit", 6: "Aborted", 9: "Killed",
		11: "Segmentation fault", 13: "Broken pipe", 14: "Alarm clock", 15: "Terminated"}
	if n, ok := names[sig]; ok {
		return n
	}
	return fmt.Sprintf("Real-time signal or unknown signal %d", sig)
}

// setEnv returns env with name set to value, replacing any earlier value.
func setEnv(env []string, name, value string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return append(out, name+"="+value)
}

// unsetEnv returns env without name.
func unsetEnv(env []string, name string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// mailbox is an unbounded FIFO drained by one goroutine, so that whoever
// posts never blocks and what is posted is handled in order.
type mailbox struct {
	mu   sync.Mutex
	q    []*msg
	busy bool
	wake chan struct{}
}

func newMailbox(fn func(*msg)) *mailbox {
	mb := &mailbox{wake: make(chan struct{}, 1)}
	go func() {
		for range mb.wake {
			for {
				mb.mu.Lock()
				if len(mb.q) == 0 {
					mb.busy = false
					mb.mu.Unlock()
					break
				}
				m := mb.q[0]
				mb.q = mb.q[1:]
				mb.busy = true
				mb.mu.Unlock()
				fn(m)
			}
		}
	}()
	return mb
}

func (mb *mailbox) post(m *msg) {
	mb.mu.Lock()
	mb.q = append(mb.q, m)
	mb.mu.Unlock()
	select {
	case mb.wake <- struct{}{}:
	default:
	}
}

// drain waits, at most d, until everything posted has been handled.
func (mb *mailbox) drain(d time.Duration) {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		mb.mu.Lock()
		idle := len(mb.q) == 0 && !mb.busy
		mb.mu.Unlock()
		if idle {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}
