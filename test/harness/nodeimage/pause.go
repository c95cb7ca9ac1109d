package nodeimage

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

// pausePackage is the sandbox program, built by import path so that any
// directory inside the module will do to build it from.
const pausePackage = "github.com/flux-framework/minicluster-crossplane/test/harness/nodeimage/pause"

// PauseImage builds the pause program into buildDir and returns a scratch
// image, ref, that runs it: the sandbox image containerd's CRI plugin runs
// first in every pod (its sandbox_image must name ref). Like Kubernetes'
// own, it runs as 65535:65535, as it needs no privilege.
func PauseImage(ctx context.Context, buildDir, ref string) (Image, error) {
	if err := os.MkdirAll(buildDir, 0o755); err != nil {
		return Image{}, fmt.Errorf("cannot build the pause image: %w", err)
	}
	out := filepath.Join(buildDir, "pause")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, pausePackage)
	// Build from this package's directory when the sources are there (the
	// caller's working directory may be outside the module); otherwise
	// from the working directory, as a test binary runs in its package's.
	if _, file, _, ok := runtime.Caller(0); ok {
		if fi, err := os.Stat(filepath.Dir(file)); err == nil && fi.IsDir() {
			cmd.Dir = filepath.Dir(file)
		}
	}
	// Static, and for the node's platform whatever the host's.
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	if b, err := cmd.CombinedOutput(); err != nil {
		return Image{}, fmt.Errorf("cannot build the pause image: go build %s: %w\n%s", pausePackage, err, b)
	}
	return Image{
		Ref:        ref,
		Files:      []File{{Path: "/pause", Mode: 0o755, SourcePath: out}},
		Entrypoint: []string{"/pause"},
		User:       "65535:65535",
	}, nil
}
