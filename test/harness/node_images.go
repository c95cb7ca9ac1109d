package harness

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/flux-framework/minicluster-crossplane/test/harness/nodeimage"
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
	// AppsImageRef is the application image with stand-ins for the
	// programs the examples' own images bring (lmp, osu_latency, pokemon,
	// singularity, snakemake: each prints that it is a stand-in and its
	// arguments), a user 1000, and Flux on the PATH, for the examples
	// whose image brings Flux itself (flux.container.disable).
	AppsImageRef = "localhost/minicluster-e2e/apps:bookworm"
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
var appPackages = []string{"procps", "curl", "strace", "nginx-light", "iproute2", "time"}

// standinApps are the programs the examples' application images bring, as
// stand-ins: each says what it is, so a log can never pass for the real
// program's.
var standinApps = []string{
	"/usr/local/bin/lmp", "/usr/local/bin/pokemon", "/usr/local/bin/singularity", "/usr/local/bin/snakemake",
	"/opt/osu-benchmark/build.openmpi/mpi/pt2pt/osu_latency",
}

// passwd is Debian bookworm's minbase /etc/passwd plus user flux (1000),
// the user the examples' images have.
//
//nolint:gosec // G101: no credentials: every password is "x" (shadowed), as in Debian's
const passwd = `root:x:0:0:root:/root:/bin/bash
daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin
bin:x:2:2:bin:/bin:/usr/sbin/nologin
sys:x:3:3:sys:/dev:/usr/sbin/nologin
sync:x:4:65534:sync:/bin:/bin/sync
games:x:5:60:games:/usr/games:/usr/sbin/nologin
man:x:6:12:man:/var/cache/man:/usr/sbin/nologin
lp:x:7:7:lp:/var/spool/lpd:/usr/sbin/nologin
mail:x:8:8:mail:/var/mail:/usr/sbin/nologin
news:x:9:9:news:/var/spool/news:/usr/sbin/nologin
uucp:x:10:10:uucp:/var/spool/uucp:/usr/sbin/nologin
proxy:x:13:13:proxy:/bin:/usr/sbin/nologin
www-data:x:33:33:www-data:/var/www:/usr/sbin/nologin
backup:x:34:34:backup:/var/backups:/usr/sbin/nologin
list:x:38:38:Mailing List Manager:/var/list:/usr/sbin/nologin
irc:x:39:39:ircd:/run/ircd:/usr/sbin/nologin
_apt:x:42:65534::/nonexistent:/usr/sbin/nologin
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
flux:x:1000:1000:Flux user of the stand-in images:/home/flux:/bin/bash
`

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
		if err := checkFluxPrefix(prefix); err != nil {
			return out, err
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
	standin := ""
	if !out.RealFlux {
		if standin, err = buildStandin(ctx, repoRoot, build); err != nil {
			return out, err
		}
	}
	imgs, err := imageSpecs(rootfs, fluxInstall{Dir: prefix, Prefix: prefix}, standin)
	if err != nil {
		return out, err
	}

	for _, img := range append([]nodeimage.Image{pause}, imgs...) {
		name := strings.NewReplacer("/", "_", ":", "_").Replace(img.Ref) + ".tar"
		tar := filepath.Join(build, name)
		if err := nodeimage.WriteTarball(img, tar); err != nil {
			return out, fmt.Errorf("cannot write image %s: %w", img.Ref, err)
		}
		out.Tarballs = append(out.Tarballs, tar)
	}
	return out, nil
}

// fluxInstall is a flux-core install on this machine: the directory it is
// in and the prefix it was built with (the same, when it was installed
// where it was built for).
type fluxInstall struct{ Dir, Prefix string }

// imageSpecs are the node's images but the pause image: the application,
// nginx and apps images on the Debian root filesystem rootfs, and the Flux
// view, carrying the flux-core install flux or, when flux.Dir is "", the
// stand-in binary at standin.
func imageSpecs(rootfs string, flux fluxInstall, standin string) ([]nodeimage.Image, error) {
	app := nodeimage.Image{Ref: AppImageRef, Base: rootfs}
	nginx := nodeimage.Image{Ref: NginxImageRef, Base: rootfs, Cmd: []string{"nginx", "-g", "daemon off;"}}
	view := nodeimage.Image{Ref: ViewImageRef, Base: rootfs}
	apps := nodeimage.Image{Ref: AppsImageRef, Base: rootfs, Files: []nodeimage.File{
		{Path: "/etc/passwd", Content: []byte(passwd)},
		{Path: "/home/flux", Dir: true, UID: 1000, GID: 1000},
	}}
	for _, p := range standinApps {
		apps.Files = append(apps.Files, nodeimage.File{Path: p, Mode: 0o755, Content: []byte(fmt.Sprintf(
			"#!/bin/bash\n# A stand-in for the application the example's own image brings (e2e-node tests).\necho \"%s (stand-in of the e2e-node tests): $*\"\n", filepath.Base(p)))})
	}
	soft := "/opt/software/flux-standin"
	if flux.Dir != "" {
		if err := checkFluxPrefix(flux.Prefix); err != nil {
			return nil, err
		}
		soft = fluxSoftwareDir
		view.Trees = []nodeimage.Tree{{Source: flux.Dir, Dest: fluxSoftwareDir}}
		apps.Trees = view.Trees
		apps.Files = append(apps.Files, nodeimage.File{Path: "/usr/local/bin/flux", Symlink: fluxSoftwareDir + "/bin/flux"})
		// flux-core finds its modules, libexec and Python by the prefix
		// it was built with, so that path must lead to the copy wherever
		// flux runs. With the view, an application container's
		// /opt/software is the view's, copied by the init container: a
		// link there comes from the view, a link elsewhere from the
		// application's own image, whichever image the example runs. An
		// image that brings Flux itself (apps, for flux.container.disable)
		// keeps its own /opt/software and needs the link either way.
		if link := filepath.Clean(flux.Prefix); link != fluxSoftwareDir {
			f := nodeimage.File{Path: link, Symlink: fluxSoftwareDir}
			if strings.HasPrefix(link, entrypointSoftwareDir+"/") {
				view.Files = append(view.Files, f)
			} else {
				app.Files = append(app.Files, f)
				nginx.Files = append(nginx.Files, f)
			}
			apps.Files = append(apps.Files, f)
		}
	} else {
		view.Files = []nodeimage.File{{Path: "/opt/software/flux-standin/bin/flux", SourcePath: standin, Mode: 0o755}}
		apps.Files = append(apps.Files, nodeimage.File{Path: "/usr/local/bin/flux", SourcePath: standin, Mode: 0o755})
	}
	view.Files = append(view.Files, nodeimage.File{Path: "/opt/view", Symlink: soft})
	return []nodeimage.Image{app, nginx, apps, view}, nil
}

// entrypointSoftwareDir is where an application container gets the view's
// software tree (internal/entrypoint.SoftwareDir): a volume, so the
// application image's own content there is hidden.
const entrypointSoftwareDir = "/opt/software"

// checkFluxPrefix refuses a flux-core prefix that the images cannot link
// to their copy: the copy's own directories or one above them (the link
// would replace them), the view's link, or a top-level directory every
// image needs.
func checkFluxPrefix(prefix string) error {
	p := filepath.Clean(prefix)
	switch {
	case !filepath.IsAbs(p):
		return fmt.Errorf("%s=%s: want an absolute path", EnvFluxPrefix, prefix)
	case p == fluxSoftwareDir:
		return nil
	case strings.HasPrefix(fluxSoftwareDir+"/", p+"/"), strings.HasPrefix(p, fluxSoftwareDir+"/"), p == "/opt/view":
		return fmt.Errorf("%s=%s: the images keep flux-core at %s and link its prefix there; build it with that prefix or one apart from it, such as /opt/flux", EnvFluxPrefix, prefix, fluxSoftwareDir)
	case strings.Count(p, "/") < 2:
		return fmt.Errorf("%s=%s: a link there would replace a directory the images need; build flux-core with a prefix of its own, such as /opt/flux", EnvFluxPrefix, prefix)
	}
	return nil
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
