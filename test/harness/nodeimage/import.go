package nodeimage

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// Defaults of ImportSpec.
const (
	DefaultAddress   = "/run/containerd/containerd.sock"
	DefaultNamespace = "k8s.io"
)

// An ImportSpec says which containerd to import an image tarball into.
type ImportSpec struct {
	// Ctr is the ctr binary; "ctr" from PATH if empty.
	Ctr string
	// Address is containerd's socket; DefaultAddress if empty.
	Address string
	// Namespace is DefaultNamespace, the CRI plugin's, if empty: the
	// kubelet sees only the images there.
	Namespace string
	// Snapshotter unpacks the image; containerd's default (overlayfs, as
	// the CRI plugin's) if empty. It should be the CRI plugin's, or the
	// plugin unpacks the image again when it first starts a container.
	Snapshotter string
	// Tarball is a docker-archive tarball, e.g. from WriteTarball.
	Tarball string
}

// Import imports a tarball into containerd, unpacked, so the CRI plugin
// reports it present (the kubelet's ImageStatus) under the tags in the
// tarball, and a kubelet pulling only if not present never pulls it.
func Import(ctx context.Context, spec ImportSpec) error {
	if spec.Tarball == "" {
		return errors.New("cannot import image: no tarball")
	}
	ctr := spec.Ctr
	if ctr == "" {
		ctr = "ctr"
	}
	cmd := exec.CommandContext(ctx, ctr, importArgs(spec)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("cannot import image %s: %s: %w\n%s", spec.Tarball, strings.Join(cmd.Args, " "), err, out)
	}
	return nil
}

// importArgs are ctr's flags for containerd 1.6. Not --no-unpack: the CRI
// plugin starts containers from the image's snapshot, which the unpack
// makes. Not --all-platforms: the tarball has one platform; asking for
// linux/amd64 explicitly fails clearly should it hold another. No label is
// needed: the 1.6 CRI plugin adds every image created in its namespace to
// its store from containerd's events, and loads them all when it starts.
// (containerd 1.7's ctr import may need --local for that:
// containerd/containerd#13494.)
func importArgs(spec ImportSpec) []string {
	addr, ns := spec.Address, spec.Namespace
	if addr == "" {
		addr = DefaultAddress
	}
	if ns == "" {
		ns = DefaultNamespace
	}
	args := []string{"--address", addr, "--namespace", ns, "images", "import", "--platform", "linux/amd64"}
	if spec.Snapshotter != "" {
		args = append(args, "--snapshotter", spec.Snapshotter)
	}
	return append(args, spec.Tarball)
}
