package harness

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cleanStaleNode puts the host back after a node whose process died
// without stopping it; a node whose process still runs is left alone.
func cleanStaleNode(logf func(string, ...any)) error {
	b, err := os.ReadFile(hostStateFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var h hostState
	if err := json.Unmarshal(b, &h); err != nil {
		return fmt.Errorf("%s: %w (remove it if no real node runs here)", hostStateFile, err)
	}
	if h.Owner != 0 && syscall.Kill(h.Owner, 0) == nil {
		return fmt.Errorf("a real node already runs on this machine (process %d, %s): one at a time", h.Owner, h.NodeDir)
	}
	logf("cleaning up after a real node that was not stopped (process %d, %s)", h.Owner, h.NodeDir)
	for _, pid := range processesWithArg("--config") {
		cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if strings.Contains(string(cmd), h.NodeDir+"/") {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	h.killPods()
	if errs := h.restore(); len(errs) > 0 {
		return fmt.Errorf("cannot clean up after the last real node: %s", strings.Join(errs, "; "))
	}
	return nil
}

// killPods kills every process left in the pods' cgroups, so that no
// container outlives the node.
func (h *hostState) killPods() []string {
	var errs []string
	for range 20 {
		pids := podPids()
		if len(pids) == 0 {
			return nil
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(250 * time.Millisecond)
	}
	if pids := podPids(); len(pids) > 0 {
		errs = append(errs, fmt.Sprintf("processes still in the pods' cgroups: %v", pids))
	}
	return errs
}

func podPids() []int {
	seen := map[int]bool{}
	var pids []int
	for _, d := range kubepodsDirs() {
		_ = filepath.WalkDir(d, func(p string, e os.DirEntry, err error) error {
			if err != nil || e.IsDir() || e.Name() != "cgroup.procs" {
				return nil
			}
			b, _ := os.ReadFile(p) //nolint:gosec // G122: cgroupfs, where nothing makes symlinks
			for _, f := range strings.Fields(string(b)) {
				if pid, err := strconv.Atoi(f); err == nil && !seen[pid] {
					seen[pid] = true
					pids = append(pids, pid)
				}
			}
			return nil
		})
	}
	return pids
}

// restore undoes everything prepareHost and the node's processes changed.
// It is best effort and reports what it could not undo.
func (h *hostState) restore() []string {
	var errs []string
	nodeDir, containerdAddress := h.NodeDir, h.ContainerdAddress
	// Shims outlive containerd by design; the node's are found by the
	// socket they were given.
	for _, pid := range processesWithArg(containerdAddress) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	if err := unmountUnder(nodeDir); err != nil {
		errs = append(errs, err.Error())
	}
	// The cgroups go deepest first: a cgroup with children cannot be
	// removed.
	for _, d := range kubepodsDirs() {
		var sub []string
		_ = filepath.WalkDir(d, func(p string, e os.DirEntry, err error) error {
			if err == nil && e.IsDir() {
				sub = append(sub, p)
			}
			return nil
		})
		sort.Slice(sub, func(i, j int) bool { return len(sub[i]) > len(sub[j]) })
		for _, s := range sub {
			if err := os.Remove(s); err != nil && !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, fmt.Sprintf("cannot remove cgroup %s: %v", s, err))
				break
			}
		}
	}
	if out, err := exec.Command("ip", "link", "del", h.Bridge).CombinedOutput(); err != nil && !strings.Contains(string(out), "Cannot find device") {
		errs = append(errs, fmt.Sprintf("ip link del %s: %v: %s", h.Bridge, err, out))
	}
	for k, v := range h.Sysctls {
		cur, _ := os.ReadFile(filepath.Join("/proc/sys", k))
		if strings.TrimSpace(string(cur)) == v {
			continue
		}
		if err := os.WriteFile(filepath.Join("/proc/sys", k), []byte(v), 0o644); err != nil {
			errs = append(errs, fmt.Sprintf("cannot restore sysctl %s=%s: %v", k, v, err))
		}
	}
	errs = append(errs, removeLogLinks(nodeDir, h.LogDirMade)...)
	for _, d := range h.FixedDirsMade {
		if err := os.RemoveAll(d); err != nil {
			errs = append(errs, err.Error())
		}
	}
	// Where the CNI cache was there before, only the node network's
	// entries go.
	results, _ := filepath.Glob(filepath.Join(cniCacheDir, "results", cniNetworkName+"-*"))
	for _, r := range results {
		_ = os.Remove(r)
	}
	for i := len(h.RunDirsMade) - 1; i >= 0; i-- {
		if left, _ := os.ReadDir(h.RunDirsMade[i]); len(left) == 0 {
			_ = os.Remove(h.RunDirsMade[i])
		}
	}
	if len(errs) == 0 {
		_ = os.Remove(hostStateFile)
	}
	return errs
}

// removeLogLinks removes the kubelet's links to the node's container logs
// from /var/log/containers, and the directory if the node made it.
func removeLogLinks(nodeDir string, dirMade bool) []string {
	var errs []string
	entries, _ := os.ReadDir(containerLogDir)
	for _, e := range entries {
		p := filepath.Join(containerLogDir, e.Name())
		if t, err := os.Readlink(p); err == nil && strings.HasPrefix(t, nodeDir+"/") {
			if err := os.Remove(p); err != nil {
				errs = append(errs, err.Error())
			}
		}
	}
	if dirMade {
		if left, _ := os.ReadDir(containerLogDir); len(left) == 0 {
			_ = os.Remove(containerLogDir)
		}
	}
	return errs
}

// unmountUnder detaches every mount point below dir, deepest first
// (container roots, the kubelet's secret and projected volumes, sandbox
// shm).
func unmountUnder(dir string) error {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return err
	}
	defer f.Close() //nolint:errcheck // read-only
	var points []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		mp := unescapeMountPath(fields[4])
		if mp == dir || strings.HasPrefix(mp, dir+"/") {
			points = append(points, mp)
		}
	}
	sort.Slice(points, func(i, j int) bool { return len(points[i]) > len(points[j]) })
	var errs []string
	for _, p := range points {
		if err := syscall.Unmount(p, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
			errs = append(errs, fmt.Sprintf("umount %s: %v", p, err))
		}
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

// unescapeMountPath undoes mountinfo's octal escapes (\040 for a space).
func unescapeMountPath(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// processesWithArg finds processes whose command line has arg as one of its
// arguments.
func processesWithArg(arg string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		for _, a := range strings.Split(string(b), "\x00") {
			if a == arg {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}
