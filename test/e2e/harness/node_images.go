package harness

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/flux-framework/minicluster-crossplane/test/e2e/nodeimage"
)

// The images of the real node. No registry is reachable, so each is built
// here from Debian packages (and the Flux view from a flux-core install or
// the stand-in) and imported into the node's containerd; pods name them
// with a tag other than latest, so the kubelet never tries to pull.
const (
	PauseImageRef = "localhost/minicluster-e2e/pause:1"
	// AppImageRef is the application image: Debian bookworm with bash,
	// coreutils, procps, curl and strace (the examples' hooks and
	// services), and flux-core's runtime libraries when the view is real
	// Flux.
	AppImageRef = "localhost/minicluster-e2e/app:bookworm"
	// NginxImageRef is the application image whose command is nginx in the
	// foreground, as the nginx image the service examples name.
	NginxImageRef = "localhost/minicluster-e2e/nginx:bookworm"
	// ViewImageRef is the Flux view in the layout the init script copies:
	// /opt/view pointing into /opt/software.
	ViewImageRef = "localhost/minicluster-e2e/flux-view:bookworm"
)

// EnvFluxPrefix names a flux-core install (built outside the project) to
// put in the Flux view image instead of the stand-in.
const EnvFluxPrefix = "MC_FLUX_PREFIX"

// EnvFluxRuntimePackages names a file of Debian package names, one a line,
// that flux-core at MC_FLUX_PREFIX needs at run time in the application
// image (its shared libraries, Python and Lua modules).
const EnvFluxRuntimePackages = "MC_FLUX_RUNTIME_PACKAGES"

// fluxSoftwareDir is where the view's Flux lives, in the view image and,
// once the runner has copied /mnt/flux/software, in the application
// container: a flux-core built with this prefix finds its own files there.
const fluxSoftwareDir = "/opt/software/flux-core"

// NodeImages are the built images of the real node.
type NodeImages struct {
	// Tarballs to import (NodeOptions.Images).
	Tarballs []string
	// RealFlux is true when the view carries flux-core from
	// MC_FLUX_PREFIX, false when it carries the stand-in.
	RealFlux bool
	// FluxPrefix is the flux-core install used, if RealFlux.
	FluxPrefix string
}

// appPackages are what the examples' commands, hooks and services need
// beyond Debian's minbase.
var appPackages = []string{"procps", "curl", "strace", "nginx-light", "iproute2"}

// BuildNodeImages builds the node's images into cacheDir: the pause image,
// the application and nginx images, and the Flux view, with real flux-core
// when MC_FLUX_PREFIX names an install, else with the stand-in built from
// test/node/fluxstandin (a test double: see its package doc). The Debian
// root filesystem is built once (mmdebstrap, minutes) and cached.
func BuildNodeImages(ctx context.Context, repoRoot, cacheDir string, logf func(string, ...any)) (NodeImages, error) {
	var out NodeImages
	build := filepath.Join(cacheDir, "build")
	if err := os.MkdirAll(build, 0o755); err != nil {
		return out, err
	}
	pkgs := append([]string(nil), appPackages...)
	prefix := os.Getenv(EnvFluxPrefix)
	if prefix != "" {
		if _, err := os.Stat(filepath.Join(prefix, "bin", "flux")); err != nil {
			return out, fmt.Errorf("%s=%s: no bin/flux there: %w", EnvFluxPrefix, prefix, err)
		}
		extra, err := runtimePackages()
		if err != nil {
			return out, err
		}
		pkgs = append(pkgs, extra...)
		out.RealFlux, out.FluxPrefix = true, prefix
	}
	rootfs, err := nodeimage.Rootfs(ctx, nodeimage.RootfsSpec{CacheDir: cacheDir, Packages: pkgs}, logf)
	if err != nil {
		return out, err
	}

	pause, err := nodeimage.PauseImage(ctx, build, PauseImageRef)
	if err != nil {
		return out, err
	}
	app := nodeimage.Image{Ref: AppImageRef, Base: rootfs}
	nginx := nodeimage.Image{Ref: NginxImageRef, Base: rootfs, Cmd: []string{"nginx", "-g", "daemon off;"}}
	view := nodeimage.Image{Ref: ViewImageRef, Base: rootfs}
	if out.RealFlux {
		view.Trees = []nodeimage.Tree{{Source: prefix, Dest: fluxSoftwareDir}}
		if filepath.Clean(prefix) != fluxSoftwareDir {
			// flux-core finds its modules and libexec by the prefix it was
			// built with: the application container needs that path too.
			app.Files = append(app.Files, nodeimage.File{Path: filepath.Clean(prefix), Symlink: fluxSoftwareDir})
		}
	} else {
		standin, err := buildStandin(ctx, repoRoot, build)
		if err != nil {
			return out, err
		}
		view.Files = []nodeimage.File{{Path: "/opt/software/flux-standin/bin/flux", SourcePath: standin, Mode: 0o755}}
	}
	soft := "/opt/software/flux-standin"
	if out.RealFlux {
		soft = fluxSoftwareDir
	}
	view.Files = append(view.Files, nodeimage.File{Path: "/opt/view", Symlink: soft})

	for _, img := range []nodeimage.Image{pause, app, nginx, view} {
		name := strings.NewReplacer("/", "_", ":", "_").Replace(img.Ref) + ".tar"
		tar := filepath.Join(build, name)
		if err := nodeimage.WriteTarball(img, tar); err != nil {
			return out, fmt.Errorf("cannot write image %s: %w", img.Ref, err)
		}
		out.Tarballs = append(out.Tarballs, tar)
	}
	return out, nil
}

// buildStandin builds the stand-in flux (test/node/fluxstandin) as a
// static binary: it runs inside the images.
func buildStandin(ctx context.Context, repoRoot, dir string) (string, error) {
	out := filepath.Join(dir, "flux-standin")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", out, "./test/node/fluxstandin")
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./test/node/fluxstandin: %w\n%s", err, b)
	}
	return out, nil
}

// runtimePackages reads MC_FLUX_RUNTIME_PACKAGES, or the
// runtime-packages.txt beside the flux-core install.
func runtimePackages() ([]string, error) {
	f := os.Getenv(EnvFluxRuntimePackages)
	if f == "" {
		return nil, fmt.Errorf("%s is set: set %s to a file of the Debian packages flux-core needs at run time (one a line)", EnvFluxPrefix, EnvFluxRuntimePackages)
	}
	b, err := os.ReadFile(f)
	if err != nil {
		return nil, err
	}
	var pkgs []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			pkgs = append(pkgs, l)
		}
	}
	return pkgs, nil
}

// NodeImageCache is where the node's images are built and kept:
// $MC_NODE_IMAGE_CACHE, else node-images in hack/tools.sh's cache.
func NodeImageCache() string {
	if d := os.Getenv("MC_NODE_IMAGE_CACHE"); d != "" {
		return d
	}
	root := os.Getenv("MC_TOOLS_DIR")
	if root == "" {
		cache := os.Getenv("XDG_CACHE_HOME")
		if cache == "" {
			home, _ := os.UserHomeDir()
			cache = filepath.Join(home, ".cache")
		}
		root = filepath.Join(cache, "minicluster-tools")
	}
	return filepath.Join(root, "node-images")
}
