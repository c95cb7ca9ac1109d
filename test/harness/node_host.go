package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// hostState is what the real node changes on the host, recorded so that
// restore puts it back: the bridge, the sysctls the kubelet insists on, the
// cgroups it makes, the mounts under the node's directory and the log links
// it writes outside it.
//
// It is also written to hostStateFile while the node runs, so that a node
// whose process was killed (a test timeout, an interrupt) is cleaned up by
// the next one to start.
type hostState struct {
	// Owner is the pid of the process that runs the node.
	Owner             int    `json:"owner"`
	Bridge            string `json:"bridge"`
	NodeDir           string `json:"nodeDir"`
	ContainerdAddress string `json:"containerdAddress"`
	// Sysctls are the values before the node started, by key.
	Sysctls map[string]string `json:"sysctls"`
	// LogDirMade: /var/log/containers did not exist before the node.
	LogDirMade bool `json:"logDirMade,omitempty"`
	// RunDirsMade are containerd's fixed run directories (its shims'
	// sockets go to /run/containerd/s whatever the configuration says)
	// that did not exist before the node.
	RunDirsMade []string `json:"runDirsMade,omitempty"`
	// FixedDirsMade are directories of fixedDirs that did not exist
	// before the node.
	FixedDirsMade []string `json:"fixedDirsMade,omitempty"`

	ports struct{ kubelet, kubeletHealthz, scheduler, dnsReady int }
	logf  func(string, ...any)
}

// hostStateFile records the running node's hostState.
const hostStateFile = "/run/minicluster-e2e-node.json"

// kubeletSysctls are the values the kubelet wants (its
// protectKernelDefaults check); the host gets them only while the node runs.
var kubeletSysctls = map[string]string{
	"vm/overcommit_memory": "1",
	"kernel/panic":         "10",
	"kernel/panic_on_oops": "1",
	"net/ipv4/ip_forward":  "", // recorded only: nothing may route pod traffic out
}

// containerLogDir is where the kubelet links every container's log,
// whatever its root directory: it is not configurable.
const containerLogDir = "/var/log/containers"

// fixedDirs are where the node's components write whatever their
// configuration says: the kubelet's device-plugins directory under its
// default root, and the CNI library's result cache (containerd 1.6 has no
// setting for it). The node removes them if it made them.
var fixedDirs = []string{"/var/lib/kubelet", cniCacheDir}

const cniCacheDir = "/var/lib/cni"

// kubepodsCgroup is the cgroup the kubelet puts every pod under, in each
// hierarchy (cgroupfs driver, cgroup root /).
const kubepodsCgroup = "kubepods"

func prepareHost(ctx context.Context, bridge, ip string, subnet *net.IPNet, nodeDir, containerdAddress string, logf func(string, ...any)) (*hostState, error) {
	if err := cleanStaleNode(logf); err != nil {
		return nil, err
	}
	h := &hostState{Owner: os.Getpid(), Bridge: bridge, NodeDir: nodeDir, ContainerdAddress: containerdAddress, Sysctls: map[string]string{}, logf: logf}
	if _, err := net.InterfaceByName(bridge); err == nil {
		return nil, fmt.Errorf("network interface %s already exists: another real node runs here, or one was not stopped (remove it with `ip link del %s`)", bridge, bridge)
	}
	if dirs := kubepodsDirs(); len(dirs) > 0 {
		return nil, fmt.Errorf("cgroup %s exists (%s): another kubelet runs on this machine, or one was not stopped", kubepodsCgroup, dirs[0])
	}
	if err := checkSubnetFree(subnet); err != nil {
		return nil, err
	}
	ports, err := freePorts(4)
	if err != nil {
		return nil, err
	}
	h.ports.kubelet, h.ports.kubeletHealthz, h.ports.scheduler, h.ports.dnsReady = ports[0], ports[1], ports[2], ports[3]
	if _, err := os.Stat(containerLogDir); errors.Is(err, os.ErrNotExist) {
		h.LogDirMade = true
	}
	for _, d := range fixedDirs {
		if _, err := os.Stat(d); errors.Is(err, os.ErrNotExist) {
			h.FixedDirsMade = append(h.FixedDirsMade, d)
		}
	}
	for _, d := range []string{"/run/containerd", "/run/containerd/s"} {
		if _, err := os.Stat(d); errors.Is(err, os.ErrNotExist) {
			h.RunDirsMade = append(h.RunDirsMade, d)
		}
	}
	for k := range kubeletSysctls {
		b, err := os.ReadFile(filepath.Join("/proc/sys", k))
		if err != nil {
			return nil, fmt.Errorf("cannot read sysctl %s: %w", k, err)
		}
		h.Sysctls[k] = strings.TrimSpace(string(b))
	}
	if err := h.save(); err != nil {
		return nil, err
	}
	for k, want := range kubeletSysctls {
		if want != "" && h.Sysctls[k] != want {
			if err := os.WriteFile(filepath.Join("/proc/sys", k), []byte(want), 0o644); err != nil {
				return nil, fmt.Errorf("cannot set sysctl %s=%s for the kubelet: %w", k, want, err)
			}
		}
	}
	ones, _ := subnet.Mask.Size()
	for _, args := range [][]string{
		{"link", "add", bridge, "type", "bridge"},
		{"addr", "add", ip + "/" + strconv.Itoa(ones), "dev", bridge},
		{"link", "set", bridge, "up"},
	} {
		if out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput(); err != nil {
			return h, fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, out)
		}
	}
	return h, nil
}

// checkSubnetFree refuses a subnet that overlaps an address already on the
// host: pod traffic would leave through that interface.
func checkSubnetFree(subnet *net.IPNet) error {
	ifaces, err := net.Interfaces()
	if err != nil {
		return err
	}
	for _, i := range ifaces {
		addrs, _ := i.Addrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && (n.Contains(subnet.IP) || subnet.Contains(n.IP)) {
				return fmt.Errorf("node subnet %s overlaps %s on %s: choose another (NodeOptions.Subnet)", subnet, n, i.Name)
			}
		}
	}
	return nil
}

// kubepodsDirs lists the kubepods cgroup in every hierarchy that has it.
func kubepodsDirs() []string {
	var dirs []string
	roots, _ := filepath.Glob("/sys/fs/cgroup/*")
	roots = append(roots, "/sys/fs/cgroup")
	for _, r := range roots {
		d := filepath.Join(r, kubepodsCgroup)
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			dirs = append(dirs, d)
		}
	}
	sort.Strings(dirs)
	return dirs
}

func (h *hostState) save() error {
	b, err := json.MarshalIndent(h, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(hostStateFile, b, 0o600)
}

// nodeLockFile serialises real nodes: the node takes fixed host resources
// (its bridge, /var/lib/kubelet, /run/containerd), so a second run waits
// for the first to put the host back instead of failing.
const nodeLockFile = "/run/minicluster-e2e-node.lock"

// waitForTurn takes nodeLockFile, waiting while another run holds it; the
// kernel releases it when the holder exits, however it exits.
func waitForTurn(ctx context.Context, logf func(string, ...any)) (*os.File, error) {
	f, err := os.OpenFile(nodeLockFile, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
		return f, nil
	}
	logf("waiting for the real node of another run on this machine to stop (%s)", nodeLockFile)
	for {
		select {
		case <-ctx.Done():
			_ = f.Close()
			return nil, ctx.Err()
		case <-time.After(2 * time.Second):
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			return f, nil
		}
	}
}
