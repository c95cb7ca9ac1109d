package nodeimage

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// TestRootfsImageImport builds a real Debian rootfs, makes images of it and
// of pause, and, where containerd is installed, imports them into a
// private containerd and runs them. It needs root, the Debian mirror and
// minutes the first time (the rootfs is cached in MC_NODEIMAGE_CACHE, or
// the user cache directory, afterwards).
func TestRootfsImageImport(t *testing.T) {
	if os.Getenv("MC_NODEIMAGE_ROOTFS") != "1" {
		t.Skip("set MC_NODEIMAGE_ROOTFS=1 to build a Debian rootfs with mmdebstrap (root, the Debian mirror, ~3 minutes)")
	}
	if os.Geteuid() != 0 {
		t.Skip("mmdebstrap's root mode and a private containerd need root")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()

	cache := os.Getenv("MC_NODEIMAGE_CACHE")
	if cache == "" {
		uc, err := os.UserCacheDir()
		if err != nil {
			t.Fatal(err)
		}
		cache = filepath.Join(uc, "minicluster-e2e", "nodeimage")
	}
	start := time.Now()
	rootfs, err := Rootfs(ctx, RootfsSpec{CacheDir: cache, Packages: []string{"bash", "procps"}}, t.Logf)
	if err != nil {
		t.Fatalf("Rootfs: %v", err)
	}
	t.Logf("rootfs %s ready in %s", rootfs, time.Since(start).Round(time.Second))
	names, err := tarNames(rootfs)
	if err != nil {
		t.Fatal(err)
	}
	for n, want := range map[string]bool{
		"usr/bin/bash":       true,
		"usr/bin/ps":         true,
		"bin":                true, // merged /usr
		"etc/resolv.conf":    false,
		"etc/hostname":       false,
		"usr/share/man/man1": false,
	} {
		if names[n] != want {
			t.Errorf("rootfs has %s: %v, want %v", n, names[n], want)
		}
	}

	dir := t.TempDir()
	app := Image{
		Ref:        "localhost/minicluster-e2e/rootfs-test:bookworm",
		Base:       rootfs,
		Files:      []File{{Path: "/etc/minicluster-e2e", Content: []byte("hello from nodeimage\n")}},
		Entrypoint: []string{"/bin/bash"},
	}
	appTar := filepath.Join(dir, "app.tar")
	start = time.Now()
	if err := WriteTarball(app, appTar); err != nil {
		t.Fatalf("WriteTarball: %v", err)
	}
	t.Logf("wrote %s in %s", appTar, time.Since(start).Round(time.Millisecond))
	start = time.Now()
	if err := WriteTarball(app, appTar); err != nil {
		t.Fatalf("WriteTarball again: %v", err)
	}
	t.Logf("found it unchanged in %s", time.Since(start).Round(time.Millisecond))
	img, err := tarball.ImageFromPath(appTar, nil)
	if err != nil {
		t.Fatalf("ImageFromPath: %v", err)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 2 {
		t.Errorf("app image has %d layers, want the rootfs and the file", len(layers))
	}

	pauseRef := "localhost/minicluster-e2e/pause:test"
	pause, err := PauseImage(ctx, filepath.Join(dir, "build"), pauseRef)
	if err != nil {
		t.Fatalf("PauseImage: %v", err)
	}
	pauseTar := filepath.Join(dir, "pause.tar")
	if err := WriteTarball(pause, pauseTar); err != nil {
		t.Fatalf("WriteTarball pause: %v", err)
	}

	ctr, err := exec.LookPath("ctr")
	if err != nil {
		t.Skip("no ctr: install containerd to test importing")
	}
	if _, err := exec.LookPath("containerd"); err != nil {
		t.Skip("no containerd: install it to test importing")
	}
	c := startContainerd(t, pauseRef)
	for _, tb := range []string{appTar, pauseTar} {
		start = time.Now()
		if err := Import(ctx, ImportSpec{Ctr: ctr, Address: c.address, Tarball: tb}); err != nil {
			t.Fatalf("Import: %v", err)
		}
		t.Logf("imported %s in %s", filepath.Base(tb), time.Since(start).Round(time.Millisecond))
	}
	out := c.ctr(ctx, t, "images", "ls", "-q")
	for _, ref := range []string{app.Ref, pauseRef} {
		if !slices.Contains(strings.Fields(out), ref) {
			t.Errorf("ctr images ls does not list %s:\n%s", ref, out)
		}
	}

	// The image runs: bash from the rootfs, ps from procps, the extra file.
	// (exit keeps bash from exec'ing ps, so bash stays PID 1.)
	out = c.ctr(ctx, t, append(c.runArgs("app"), app.Ref, "nodeimage-app",
		"/bin/bash", "-c", "cat /etc/minicluster-e2e; ps -o comm= -p 1; exit 0")...)
	if diff := cmp.Diff("hello from nodeimage\nbash\n", out); diff != "" {
		t.Errorf("running the app image: -want, +got:\n%s", diff)
	}

	// pause runs until stopped, and stops with status 0.
	run := exec.CommandContext(ctx, ctr, append([]string{"--address", c.address, "-n", DefaultNamespace}, append(c.runArgs("pause"), pauseRef, "nodeimage-pause")...)...)
	var runOut bytes.Buffer
	run.Stdout, run.Stderr = &runOut, &runOut
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- run.Wait() }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if o, err := exec.CommandContext(ctx, ctr, "--address", c.address, "-n", DefaultNamespace, "task", "ls", "-q").Output(); err == nil && strings.Contains(string(o), "nodeimage-pause") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pause container did not start:\n%s", runOut.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // let it install its handlers
	c.ctr(ctx, t, "task", "kill", "--signal", "SIGTERM", "nodeimage-pause")
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("the pause container did not exit 0 on SIGTERM: %v\n%s", err, runOut.String())
		}
	case <-time.After(30 * time.Second):
		t.Errorf("the pause container did not stop on SIGTERM:\n%s", runOut.String())
	}
}

// privateContainerd is a containerd of the test's own: its own root, state,
// socket and config, none of the system's.
type privateContainerd struct {
	dir, address, cgroup string
	// madeRun is set when /run/containerd did not exist before: the shims
	// of containerd 1.6 put their sockets in /run/containerd/s whatever
	// the config says, and the test removes what it made there.
	madeRun bool
}

// runArgs are ctr run's flags that keep a container's IO fifos, runc state
// and cgroup out of the system's places, under the test's.
func (c *privateContainerd) runArgs(name string) []string {
	return []string{"run", "--rm",
		"--fifo-dir", filepath.Join(c.dir, "fifo"),
		"--runc-root", filepath.Join(c.dir, "runc"),
		"--cgroup", c.cgroup + "/" + name}
}

func (c *privateContainerd) ctr(ctx context.Context, t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, "ctr", append([]string{"--address", c.address, "-n", DefaultNamespace}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
	return string(out)
}

func startContainerd(t *testing.T, sandboxImage string) *privateContainerd {
	t.Helper()
	// Short, as the socket path must fit a sockaddr_un.
	dir, err := os.MkdirTemp("", "nodeimage-ctrd-")
	if err != nil {
		t.Fatal(err)
	}
	c := &privateContainerd{
		dir:     dir,
		address: filepath.Join(dir, "containerd.sock"),
		// Containers go under a cgroup parent of this test's, not the k8s.io
		// one containerd would pick, which a real node's may share.
		cgroup: fmt.Sprintf("/nodeimage-test-%d", os.Getpid()),
	}
	if _, err := os.Stat("/run/containerd"); errors.Is(err, os.ErrNotExist) {
		c.madeRun = true
	}
	// Snapshotters this machine cannot have only add noise to the log.
	config := fmt.Sprintf(`version = 2
root = %[1]q
state = %[2]q
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs"]

[grpc]
  address = %[3]q

[plugins."io.containerd.internal.v1.opt"]
  path = %[4]q

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %[5]q
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = %[6]q
    conf_dir = %[7]q
`, filepath.Join(dir, "root"), filepath.Join(dir, "state"), c.address, filepath.Join(dir, "opt"),
		sandboxImage, filepath.Join(dir, "cni", "bin"), filepath.Join(dir, "cni", "net.d"))
	cfgPath := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfgPath, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "containerd.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("containerd", "--config", cfgPath)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group, so a ^C to the test does not reach it before
	// the cleanup below stops it in order.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		c.stop(t, cmd, exited)
		_ = logf.Close()
		if t.Failed() {
			if b, err := os.ReadFile(logPath); err == nil {
				t.Logf("containerd log:\n%s", tail(string(b), 40))
			}
		}
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("cannot remove containerd's directory: %v", err)
		}
	})

	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case err := <-exited:
			exited <- err
			b, _ := os.ReadFile(logPath)
			t.Fatalf("containerd exited: %v\n%s", err, tail(string(b), 40))
		default:
		}
		if exec.Command("ctr", "--address", c.address, "version").Run() == nil {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatal("containerd did not answer in 30s")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// stop stops what the test started and only that: the shims of tasks a
// failed test left (by the PIDs in this containerd's state directory),
// containerd by its PID, then whatever is still mounted under its
// directories, and the test's cgroups.
func (c *privateContainerd) stop(t *testing.T, cmd *exec.Cmd, exited chan error) {
	t.Helper()
	pidFiles, _ := filepath.Glob(filepath.Join(c.dir, "state", "io.containerd.runtime.v2.task", "*", "*", "*.pid"))
	for _, f := range pidFiles {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 1 {
			t.Logf("killing %s %d left by the test", filepath.Base(f), pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		t.Logf("containerd stopped: %v", err)
	case <-time.After(15 * time.Second):
		t.Errorf("containerd did not stop on SIGTERM; killing it")
		_ = cmd.Process.Kill()
		t.Logf("containerd killed: %v", <-exited)
	}
	mounts, err := mountsUnder(c.dir)
	if err != nil {
		t.Errorf("cannot list mounts: %v", err)
	}
	for _, m := range mounts {
		t.Logf("unmounting %s", m)
		if err := syscall.Unmount(m, syscall.MNT_DETACH); err != nil {
			t.Errorf("cannot unmount %s: %v", m, err)
		}
	}
	// runc removed each container's cgroup; the parent is the test's.
	parents, _ := filepath.Glob(filepath.Join("/sys/fs/cgroup", "*", strings.TrimPrefix(c.cgroup, "/")))
	unified := filepath.Join("/sys/fs/cgroup", strings.TrimPrefix(c.cgroup, "/"))
	if _, err := os.Stat(unified); err == nil {
		parents = append(parents, unified)
	}
	for _, p := range parents {
		if err := syscall.Rmdir(p); err != nil && !errors.Is(err, syscall.ENOENT) {
			t.Errorf("cannot remove cgroup %s: %v", p, err)
		}
	}
	if c.madeRun {
		// Only if empty: a system containerd started meanwhile keeps its.
		_ = syscall.Rmdir("/run/containerd/s")
		_ = syscall.Rmdir("/run/containerd")
	}
}

// mountsUnder lists the mount points under dir, deepest first, so each
// unmounts before what it is mounted on.
func mountsUnder(dir string) ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	var out []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) < 5 {
			continue
		}
		// Octal escapes (\040 for a space) cannot occur in our paths.
		if mp := fields[4]; mp == dir || strings.HasPrefix(mp, dir+"/") {
			out = append(out, mp)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	return out, s.Err()
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
