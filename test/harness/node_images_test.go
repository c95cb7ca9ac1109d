package harness

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/flux-framework/minicluster-crossplane/test/harness/nodeimage"
)

// TestImagesFindFluxAtItsPrefix builds the node's images with a flux-core
// install built for each prefix (scratch instead of Debian, the rest as
// BuildNodeImages builds them) and resolves, in the file system each
// broker container sees, the paths flux-core uses: its binary and a
// subcommand in libexec, both by the prefix compiled into flux. A
// container with the view sees its image with the view's /opt/software
// copied over its own (the init container's copy, a volume); one without
// the view (flux.container.disable) sees the apps image, which brings
// Flux. When a prefix did not resolve in the apps image, six examples
// ended with `flux: 'R' is not a flux command` under real flux-core.
func TestImagesFindFluxAtItsPrefix(t *testing.T) {
	cases := map[string]struct {
		reason string
		prefix string
	}{
		"TheImagesOwn": {
			reason: "flux-core built for /opt/software/flux-core needs no link.",
			prefix: fluxSoftwareDir,
		},
		"ApartFromTheSoftwareTree": {
			reason: "flux-core built for /opt/flux-alt finds itself through a link in every application image.",
			prefix: "/opt/flux-alt",
		},
		"InTheSoftwareTree": {
			reason: "A link under /opt/software is hidden by the view's copy there, so the view brings it.",
			prefix: "/opt/software/flux",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			install := t.TempDir()
			for _, f := range []string{"bin/flux", "libexec/flux/cmd/flux-R"} {
				p := filepath.Join(install, f)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			imgs, err := imageSpecs("", fluxInstall{Dir: install, Prefix: tc.prefix}, "")
			if err != nil {
				t.Fatalf("%s\nimageSpecs: %v", tc.reason, err)
			}
			fsOf := map[string]map[string]*tar.Header{}
			for _, img := range imgs {
				fsOf[img.Ref] = imageFiles(t, img)
			}
			view := fsOf[ViewImageRef]
			type container struct {
				what string
				fs   map[string]*tar.Header
			}
			var containers []container
			for _, ref := range []string{AppImageRef, NginxImageRef, AppsImageRef} {
				containers = append(containers, container{ref + " with the view", withView(fsOf[ref], view)})
			}
			containers = append(containers, container{AppsImageRef + " without the view", fsOf[AppsImageRef]})
			for _, c := range containers {
				for _, p := range []string{"bin/flux", "libexec/flux/cmd/flux-R"} {
					p = path.Join(tc.prefix, p)
					if _, err := resolve(c.fs, p); err != nil {
						t.Errorf("%s\n%s: %s does not resolve: %v", tc.reason, c.what, p, err)
					}
				}
			}
			// The stand-in path: /opt/view leads to the view's flux.
			if _, err := resolve(view, "/opt/view/bin/flux"); err != nil {
				t.Errorf("%s\nthe view: /opt/view/bin/flux: %v", tc.reason, err)
			}
		})
	}
}

// TestCheckFluxPrefix: a prefix whose link would replace the images' own
// directories is refused before anything is built.
func TestCheckFluxPrefix(t *testing.T) {
	cases := map[string]struct {
		prefix string
		ok     bool
	}{
		"TheImagesOwn":          {prefix: "/opt/software/flux-core", ok: true},
		"Apart":                 {prefix: "/opt/flux", ok: true},
		"InTheSoftwareTree":     {prefix: "/opt/software/flux", ok: true},
		"TrailingSlash":         {prefix: "/opt/flux/", ok: true},
		"Root":                  {prefix: "/"},
		"TopLevel":              {prefix: "/usr"},
		"AboveTheCopy":          {prefix: "/opt/software"},
		"InsideTheCopy":         {prefix: "/opt/software/flux-core/sub"},
		"TheViewLink":           {prefix: "/opt/view"},
		"Relative":              {prefix: "opt/flux"},
		"TheCopyWithDotDotPath": {prefix: "/opt/x/../software"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := checkFluxPrefix(tc.prefix)
			if (err == nil) != tc.ok {
				t.Errorf("checkFluxPrefix(%q) = %v, want ok %v", tc.prefix, err, tc.ok)
			}
		})
	}
}

// imageFiles writes img as BuildNodeImages does and reads back its
// flattened file system: clean path (no leading /) to header.
func imageFiles(t *testing.T, img nodeimage.Image) map[string]*tar.Header {
	t.Helper()
	f := filepath.Join(t.TempDir(), "image.tar")
	if err := nodeimage.WriteTarball(img, f); err != nil {
		t.Fatal(err)
	}
	i, err := tarball.ImageFromPath(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	rc := mutate.Extract(i)
	defer rc.Close() //nolint:errcheck // read-only
	files := map[string]*tar.Header{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		files[strings.TrimPrefix(path.Clean("/"+h.Name), "/")] = h
	}
}

// withView is an application image's file system in a broker container
// with the view: its /opt/software is the view's.
func withView(app, view map[string]*tar.Header) map[string]*tar.Header {
	out := map[string]*tar.Header{}
	soft := strings.TrimPrefix(entrypointSoftwareDir, "/")
	for n, h := range app {
		if n != soft && !strings.HasPrefix(n, soft+"/") {
			out[n] = h
		}
	}
	for n, h := range view {
		if n == soft || strings.HasPrefix(n, soft+"/") {
			out[n] = h
		}
	}
	// The runtime makes the mount point's parents where the image lacks
	// them.
	for d := path.Dir(soft); d != "."; d = path.Dir(d) {
		if out[d] == nil {
			out[d] = &tar.Header{Name: d + "/", Typeflag: tar.TypeDir, Mode: 0o755}
		}
	}
	return out
}

// resolve follows p through files as the kernel would, symlinks included,
// to a regular file, and returns where it landed.
func resolve(files map[string]*tar.Header, p string) (string, error) {
	parts := strings.Split(strings.TrimPrefix(path.Clean(p), "/"), "/")
	cur := ""
	for hops := 0; len(parts) > 0; {
		next := path.Join(cur, parts[0])
		parts = parts[1:]
		h, ok := files[next]
		if !ok {
			return "", fmt.Errorf("/%s: no such file or directory", next)
		}
		if h.Typeflag == tar.TypeSymlink {
			if hops++; hops > 40 {
				return "", fmt.Errorf("%s: too many links", p)
			}
			target := h.Linkname
			if !path.IsAbs(target) {
				target = path.Join("/", cur, target) //nolint:gosec // G305: resolved within the map of the image's names, never on disk
			}
			parts = append(strings.Split(strings.TrimPrefix(path.Clean(target), "/"), "/"), parts...)
			cur = ""
			continue
		}
		cur = next
	}
	if h := files[cur]; h == nil || h.Typeflag != tar.TypeReg {
		return "", fmt.Errorf("/%s is not a file", cur)
	}
	return "/" + cur, nil
}
