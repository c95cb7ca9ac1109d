package harness

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestUnmountUnder builds what a node leaves mounted under its directory,
// as the kubelet and containerd make it, and wants UnmountUnder to leave
// nothing mounted, so that the directory can be removed: the kubelet's root
// directory bind-mounted onto itself and made shared (its MakeRShared), a
// volume mounted twice on one path, mounts that propagated to a peer, and
// a path that mountinfo escapes.
func TestUnmountUnder(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting needs root")
	}
	dir, err := os.MkdirTemp("", "unmount-under-")
	if err != nil {
		t.Fatal(err)
	}
	// The directory stays if the test fails with mounts left: removing it
	// would only fail too.
	mkdir := func(p string) string {
		t.Helper()
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mount := func(src, target, fstype string, flags uintptr) {
		t.Helper()
		if err := syscall.Mount(src, target, fstype, flags, ""); err != nil {
			t.Fatalf("mount %s on %s: %v", src, target, err)
		}
	}
	root := mkdir(filepath.Join(dir, "kubelet", "root"))
	mount(root, root, "", syscall.MS_BIND)
	mount("", root, "", syscall.MS_SHARED|syscall.MS_REC)
	// A peer of the kubelet's root (as a container's rshared hostPath would
	// make): what is mounted below one shows below the other.
	peer := mkdir(filepath.Join(dir, "containerd", "state", "task", "rootfs", "host"))
	mount(root, peer, "", syscall.MS_BIND|syscall.MS_REC)
	vol := mkdir(filepath.Join(root, "pods", "p", "volumes", "kubernetes.io~secret", "cert"))
	mount("tmpfs", vol, "tmpfs", 0)
	mount("tmpfs", vol, "tmpfs", 0)
	mount("tmpfs", mkdir(filepath.Join(dir, "containerd", "state", "sandbox with space", "shm")), "tmpfs", 0)

	before, err := MountsUnder(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(before) < 7 {
		t.Fatalf("the test set up %d mounts, want at least 7 (the propagated ones included): %v", len(before), before)
	}
	t.Logf("%d mounts under %s", len(before), dir)
	if err := UnmountUnder(dir); err != nil {
		t.Fatalf("UnmountUnder: %v", err)
	}
	if left, err := MountsUnder(dir); err != nil || len(left) > 0 {
		t.Fatalf("after UnmountUnder: %v %v", left, err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Errorf("the directory cannot be removed after UnmountUnder: %v", err)
	}
}
