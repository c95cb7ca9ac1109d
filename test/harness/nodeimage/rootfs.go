// Package nodeimage builds the container images a real test node (kubelet
// and containerd) runs, and imports them into containerd. No container
// registry is reachable where the end-to-end tests run, so every image is
// made here: a Debian root filesystem from the Debian mirror (mmdebstrap),
// extra layers from files and directories of the build machine, and a
// pause program built from source.
package nodeimage

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// rootfsFormat names everything about how Rootfs runs mmdebstrap that is
// not in its key (the dpkg excludes, the hooks, SOURCE_DATE_EPOCH): bump it
// when they change so cached tarballs built the old way are not reused.
const rootfsFormat = "nodeimage-rootfs-v1"

// sourceDateEpoch is the bookworm release date. mmdebstrap clamps mtimes to
// it and leaves out its logs and caches, so two builds from the same mirror
// content give the same tarball, and so the same image layer digest.
const sourceDateEpoch = "1686355200"

// Defaults of RootfsSpec.
const (
	DefaultSuite   = "bookworm"
	DefaultVariant = "minbase"
)

// A RootfsSpec says which Debian root filesystem to build.
type RootfsSpec struct {
	// CacheDir holds the built tarballs, which are reused across runs.
	CacheDir string
	// Suite is the Debian release; DefaultSuite if empty.
	Suite string
	// Variant is mmdebstrap's --variant; DefaultVariant if empty.
	Variant string
	// Packages are installed on top of the variant's.
	Packages []string
	// Mirrors, if set, are passed to mmdebstrap as they are (e.g. "deb
	// http://mirror/debian bookworm main"). Empty means the host's apt
	// sources for Suite, Suite-updates and Suite-security, or mmdebstrap's
	// own default if the host has none for Suite.
	Mirrors []string
}

// Logf logs progress, as testing.T.Logf does. Nil logs nothing.
type Logf func(format string, args ...any)

func (l Logf) printf(format string, args ...any) {
	if l != nil {
		l(format, args...)
	}
}

// Rootfs returns the path of a tarball of the Debian root filesystem spec
// describes, building it with mmdebstrap (as root, about three minutes) if
// CacheDir does not have it yet. Concurrent callers, in this process or
// others, wait for one build rather than each doing their own. A cached
// rootfs is used as it is, however old: remove it to get Debian's updates.
//
// Cancelling ctx stops mmdebstrap with SIGTERM; it finishes the step it is
// in and cleans up first, so Rootfs may take a minute or two to return.
func Rootfs(ctx context.Context, spec RootfsSpec, logf Logf) (string, error) {
	if spec.CacheDir == "" {
		return "", errors.New("cannot build rootfs: no cache directory")
	}
	if spec.Suite == "" {
		spec.Suite = DefaultSuite
	}
	if spec.Variant == "" {
		spec.Variant = DefaultVariant
	}
	pkgs := normalizePackages(spec.Packages)
	key := rootfsKey(spec.Suite, spec.Variant, pkgs)
	out := filepath.Join(spec.CacheDir, fmt.Sprintf("rootfs-%s-%s-%s.tar", spec.Suite, spec.Variant, key[:16]))

	// The tarball only ever appears by rename, complete, so seeing it
	// needs no lock (and no root, so a cache filled once serves others).
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	if os.Geteuid() != 0 {
		return "", fmt.Errorf("cannot build rootfs %s: mmdebstrap runs in root mode, which needs root (run the tests as root, or fill %s as root first)", filepath.Base(out), spec.CacheDir)
	}
	mmdebstrap, err := exec.LookPath("mmdebstrap")
	if err != nil {
		return "", fmt.Errorf("cannot build rootfs: %w (hack/tools.sh installs it, or apt-get install mmdebstrap)", err)
	}
	if err := os.MkdirAll(spec.CacheDir, 0o755); err != nil {
		return "", fmt.Errorf("cannot build rootfs: %w", err)
	}
	unlock, err := lockFile(ctx, out+".lock", logf)
	if err != nil {
		return "", fmt.Errorf("cannot build rootfs: %w", err)
	}
	defer unlock()
	// Whoever held the lock before us may have built it.
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}

	mirrors := spec.Mirrors
	if len(mirrors) == 0 {
		mirrors, err = hostMirrors(aptSourceFiles("/etc/apt"), spec.Suite)
		if err != nil {
			return "", fmt.Errorf("cannot build rootfs: %w", err)
		}
		if len(mirrors) == 0 {
			logf.printf("rootfs: the host's apt sources have no %s; mmdebstrap picks the mirror", spec.Suite)
		}
	}

	tmp := out + ".tmp"
	// A build killed before may have left one; we hold the lock, so no one
	// else is writing it.
	_ = os.Remove(tmp)
	args := mmdebstrapArgs(spec.Suite, spec.Variant, pkgs, tmp, mirrors)
	logf.printf("rootfs: building %s (takes minutes): mmdebstrap %s", filepath.Base(out), strings.Join(args, " "))
	start := time.Now()
	if err := runMmdebstrap(ctx, mmdebstrap, args, logf); err != nil {
		_ = os.Remove(tmp)
		return "", fmt.Errorf("cannot build rootfs %s: %w", filepath.Base(out), err)
	}
	if err := os.Rename(tmp, out); err != nil {
		_ = os.Remove(tmp)
		return "", fmt.Errorf("cannot build rootfs: %w", err)
	}
	logf.printf("rootfs: built %s in %s", out, time.Since(start).Round(time.Second))
	return out, nil
}

// normalizePackages sorts and deduplicates, so the same set in any order
// shares a cache entry.
func normalizePackages(pkgs []string) []string {
	var out []string
	for _, p := range pkgs {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// rootfsKey names a rootfs in the cache. The mirror is not part of it: any
// mirror of the suite serves the same packages.
func rootfsKey(suite, variant string, pkgs []string) string {
	h := sha256.New()
	for _, s := range []string{rootfsFormat, suite, variant, strings.Join(normalizePackages(pkgs), ",")} {
		_, _ = io.WriteString(h, s)
		_, _ = h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// mmdebstrapArgs leaves documentation and translations out: nothing in a
// test container reads them and they are a good part of the tarball, which
// every import copies and unpacks. resolv.conf and hostname are the build
// machine's; the container runtime provides both.
func mmdebstrapArgs(suite, variant string, pkgs []string, out string, mirrors []string) []string {
	args := []string{"--mode=root", "--format=tar", "--variant=" + variant}
	if len(pkgs) > 0 {
		args = append(args, "--include="+strings.Join(pkgs, ","))
	}
	args = append(args,
		"--dpkgopt=path-exclude=/usr/share/doc/*",
		"--dpkgopt=path-include=/usr/share/doc/*/copyright",
		"--dpkgopt=path-exclude=/usr/share/man/*",
		"--dpkgopt=path-exclude=/usr/share/info/*",
		"--dpkgopt=path-exclude=/usr/share/locale/*",
		`--customize-hook=rm -f "$1/etc/resolv.conf" "$1/etc/hostname"`,
		suite, out)
	return append(args, mirrors...)
}

// runMmdebstrap streams mmdebstrap's progress ("I: ..." lines) to logf and
// returns the end of its output with an error.
func runMmdebstrap(ctx context.Context, path string, args []string, logf Logf) error {
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = append(os.Environ(), "SOURCE_DATE_EPOCH="+sourceDateEpoch)
	// Never SIGKILL it: in root mode it has /proc, /sys and /dev mounted
	// inside its temporary chroot, and only its own cleanup unmounts them.
	// On SIGTERM it finishes the step it is in, cleans up and exits, which
	// can take a while; Wait waits for that (WaitDelay is unset).
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	tail := &tailLines{max: 30}
	done := make(chan struct{})
	go func() {
		defer close(done)
		s := bufio.NewScanner(pr)
		s.Buffer(make([]byte, 64<<10), 1<<20)
		for s.Scan() {
			logf.printf("mmdebstrap: %s", s.Text())
			tail.add(s.Text())
		}
		// Keep draining so mmdebstrap never blocks on a full pipe.
		_, _ = io.Copy(io.Discard, pr)
	}()
	err := cmd.Run()
	_ = pw.Close()
	<-done
	if err != nil {
		return fmt.Errorf("mmdebstrap: %w\n%s", err, tail)
	}
	return nil
}

// tailLines keeps the last lines of a command's output for its error.
type tailLines struct {
	mu    sync.Mutex
	max   int
	lines []string
}

func (t *tailLines) add(l string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, l)
	if len(t.lines) > t.max {
		t.lines = t.lines[len(t.lines)-t.max:]
	}
}

func (t *tailLines) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.lines, "\n")
}

// lockFile takes an exclusive flock on path, polling so a cancelled ctx
// stops the wait (flock itself cannot be interrupted). The lock goes with
// the process, so a crashed builder never leaves it held.
func lockFile(ctx context.Context, path string, logf Logf) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	logged := false
	for {
		err := flock(f, syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				_ = flock(f, syscall.LOCK_UN)
				_ = f.Close()
			}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			_ = f.Close()
			return nil, fmt.Errorf("cannot lock %s: %w", path, err)
		}
		if !logged {
			logf.printf("rootfs: waiting for another process building %s", strings.TrimSuffix(filepath.Base(path), ".lock"))
			logged = true
		}
		select {
		case <-ctx.Done():
			_ = f.Close()
			return nil, fmt.Errorf("waiting for the lock %s: %w", path, ctx.Err())
		case <-time.After(time.Second):
		}
	}
}

// flock is flock(2) on f's descriptor as the uintptr it is, with no
// narrowing to syscall.Flock's int for linters to question.
func flock(f *os.File, how uintptr) error {
	if _, _, e := syscall.Syscall(syscall.SYS_FLOCK, f.Fd(), how, 0); e != 0 {
		return e
	}
	return nil
}
