package harness

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Stop stops every process, newest first, and removes the directory Start
// created unless KeepDir was called. It is safe to call more than once.
func (cp *ControlPlane) Stop() error {
	cp.mu.Lock()
	if cp.stopped {
		cp.mu.Unlock()
		return nil
	}
	cp.stopped = true
	cp.mu.Unlock()
	var errs []string
	stop := func(ps ...*process) {
		for _, p := range ps {
			if p == nil {
				continue
			}
			if err := p.stop(20 * time.Second); err != nil {
				errs = append(errs, err.Error())
			}
		}
	}
	// Nothing makes pods once Crossplane and the controllers are gone; the
	// node then drains through the API server before it stops.
	stop(cp.crossplane, cp.function, cp.kcm)
	if cp.kueue != nil {
		errs = append(errs, cp.kueue.stop()...)
	}
	if cp.node != nil {
		errs = append(errs, cp.node.stop()...)
	}
	stop(cp.apiserver, cp.etcd)
	if cp.nodeTurn != nil {
		_ = cp.nodeTurn.Close() // the next run's node may start
	}
	if cp.tmpDir && !cp.keepDir {
		if err := os.RemoveAll(cp.Dir); err != nil {
			errs = append(errs, err.Error())
		}
	} else if cp.Dir != "" {
		cp.logf("stopped; logs kept in %s", cp.LogDir)
	}
	if len(errs) > 0 {
		return fmt.Errorf("stopping the control plane: %s", strings.Join(errs, "; "))
	}
	return nil
}

// KeepDir keeps the control plane's directory (and its logs) after Stop;
// tests call it when they fail.
func (cp *ControlPlane) KeepDir() { cp.mu.Lock(); cp.keepDir = true; cp.mu.Unlock() }

// LogFiles returns the log file of every process.
func (cp *ControlPlane) LogFiles() []string {
	files, _ := filepath.Glob(filepath.Join(cp.LogDir, "*.log"))
	sort.Strings(files)
	return files
}

// DumpLogs writes the path and the last lines of every log to w.
func (cp *ControlPlane) DumpLogs(w io.Writer, lines int) {
	for _, f := range cp.LogFiles() {
		_, _ = fmt.Fprintf(w, "---- %s (last %d lines)\n%s\n", f, lines, tail(f, lines))
	}
}
