package harness

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// CleanStaleNode puts the host back after a real node under dir whose
// process died without stopping it (killed, or stopped before its Stop was
// done): it kills the node's processes, every container and shim it
// started, unmounts everything under its directory and restores the host.
// A node whose process still runs is left alone, with an error; a node
// elsewhere, or none, is left to the next node to start. `make dev-down`
// calls it after killing a control plane that did not stop in time, and
// `make dev-up` before it starts.
func CleanStaleNode(dir string, logf func(string, ...any)) error {
	h, err := readHostState()
	if err != nil || h == nil {
		return err
	}
	if d := filepath.Clean(dir); h.NodeDir != d && !strings.HasPrefix(h.NodeDir, d+"/") {
		return nil
	}
	return cleanStaleNode(logf)
}

// readHostState reads the recorded node's state, nil when there is none.
func readHostState() (*hostState, error) {
	b, err := os.ReadFile(hostStateFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var h hostState
	if err := json.Unmarshal(b, &h); err != nil {
		return nil, fmt.Errorf("%s: %w (remove it if no real node runs here)", hostStateFile, err)
	}
	return &h, nil
}

// cleanStaleNode puts the host back after a node whose process died
// without stopping it; a node whose process still runs is left alone.
func cleanStaleNode(logf func(string, ...any)) error {
	h, err := readHostState()
	if err != nil || h == nil {
		return err
	}
	if h.Owner != 0 && alive(h.Owner) {
		return fmt.Errorf("a real node already runs on this machine (process %d, %s): one at a time", h.Owner, h.NodeDir)
	}
	logf("cleaning up after a real node that was not stopped (process %d, %s)", h.Owner, h.NodeDir)
	// The kubelet and containerd go first, so that nothing restarts a
	// container while the containers are killed; every one of them names
	// a file of the node's directory on its command line (the shims its
	// containerd socket, which restore kills after the containers).
	for _, pid := range processesMentioning(h.NodeDir + "/") {
		if !slices.Contains(processArgs(pid), "-address") {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	errs := h.killPods()
	if errs = append(errs, h.restore()...); len(errs) > 0 {
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
	// socket they were given. Each holds its container's root and the
	// mounts of its namespace, so they go before the unmounting, and are
	// waited for: a shim still exiting keeps its mounts busy.
	shims := processesWithArg(containerdAddress)
	for _, pid := range shims {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	if left := waitGone(shims, 10*time.Second); len(left) > 0 {
		errs = append(errs, fmt.Sprintf("shims of the node still running after SIGKILL: %v", left))
	}
	if err := UnmountUnder(nodeDir); err != nil {
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
	// A directory the node made holds only its own shims' sockets, which
	// a killed shim leaves behind.
	for i := len(h.RunDirsMade) - 1; i >= 0; i-- {
		left, _ := os.ReadDir(h.RunDirsMade[i])
		for _, e := range left {
			if e.Type()&os.ModeSocket != 0 {
				_ = os.Remove(filepath.Join(h.RunDirsMade[i], e.Name()))
			}
		}
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

// UnmountUnder detaches every mount point at or below dir, deepest first
// (container roots, the kubelet's secret and projected volumes, sandbox
// shm, network namespaces, and the kubelet's root directory, which the
// kubelet bind-mounts onto itself to make it shared), until none is left:
// a path can hold mounts stacked on each other, and detaching one can
// uncover another, so it reads the mount table again after each pass.
func UnmountUnder(dir string) error {
	dir = filepath.Clean(dir)
	var errs []string
	for range 10 {
		points, err := mountsUnder(dir)
		if err != nil {
			return err
		}
		if len(points) == 0 {
			return nil
		}
		errs = errs[:0]
		for _, p := range points {
			if err := syscall.Unmount(p, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
				errs = append(errs, fmt.Sprintf("umount %s: %v", p, err))
			}
		}
	}
	points, err := mountsUnder(dir)
	if err != nil {
		return err
	}
	if len(points) == 0 {
		return nil
	}
	return fmt.Errorf("%d mounts left under %s (%s): %s", len(points), dir, strings.Join(points[:min(len(points), 5)], " "), strings.Join(errs, "; "))
}

// mountsUnder lists the mount points at or below dir in this process's
// mount namespace, deepest first; a path mounted twice is listed twice.
func mountsUnder(dir string) ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
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
	if err := sc.Err(); err != nil {
		return nil, err
	}
	sort.SliceStable(points, func(i, j int) bool { return len(points[i]) > len(points[j]) })
	return points, nil
}

// MountsUnder lists the mount points at or below dir, deepest first.
func MountsUnder(dir string) ([]string, error) { return mountsUnder(filepath.Clean(dir)) }

// waitGone waits until none of pids runs any more, and returns those that
// still do after timeout.
func waitGone(pids []int, timeout time.Duration) []int {
	deadline := time.Now().Add(timeout)
	for {
		var left []int
		for _, pid := range pids {
			if alive(pid) {
				left = append(left, pid)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Alive tells whether pid runs: a zombie, dead but not yet reaped by its
// parent (an orphan's new parent may never reap it), does not.
func Alive(pid int) bool { return alive(pid) }

func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name in parentheses, which may itself
	// hold parentheses and spaces.
	i := strings.LastIndexByte(string(b), ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
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
	return processesWhere(func(args []string) bool { return slices.Contains(args, arg) })
}

// processesMentioning finds processes with s in one of their arguments.
func processesMentioning(s string) []int {
	return processesWhere(func(args []string) bool {
		return slices.ContainsFunc(args, func(a string) bool { return strings.Contains(a, s) })
	})
}

// processesWhere finds the processes, other than this one, whose command
// line matches.
func processesWhere(match func(args []string) bool) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if args := processArgs(pid); len(args) > 0 && match(args) && alive(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// processArgs is a process's command line, nil if it is gone.
func processArgs(pid int) []string {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil || len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
}

// NodeShims lists the containerd shims of the node whose containerd
// listens at containerdAddress: they outlive containerd, so a node that
// left its shims left its containers.
func NodeShims(containerdAddress string) []int { return processesWithArg(containerdAddress) }
