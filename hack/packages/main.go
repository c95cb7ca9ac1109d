// Command packages builds the Function, Provider and Configuration .xpkg
// files without a Docker engine: each runtime image is assembled in Go
// (go-containerregistry: the static binary on an empty base) and embedded
// with `crossplane xpkg build --embed-runtime-image-tarball`. `make
// packages` calls it.
package main

import (
	"archive/tar"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

type pkg struct {
	name     string   // package (and image) name
	meta     string   // crossplane.yaml
	files    []string // globs copied into the package root
	binary   string   // runtime binary; empty for a Configuration
	port     string   // exposed port of the runtime
	examples string   // examples root, if any
}

func main() {
	var (
		crossplane = flag.String("crossplane", "", "crossplane CLI")
		bin        = flag.String("bin", "bin/linux_amd64", "directory of the static binaries")
		out        = flag.String("out", "_output/packages", "where to write the .xpkg files")
		version    = flag.String("version", "v0.1.0", "package version")
		registry   = flag.String("registry", "xpkg.crossplane.io/flux-framework", "registry and organisation the packages are pushed to (the Configuration depends on the Function there)")
	)
	flag.Parse()
	pkgs := []pkg{
		{name: "function-minicluster", meta: "package/function/crossplane.yaml", files: []string{"package/input/*.yaml"}, binary: "function", port: "9443/tcp"},
		{name: "provider-minicluster-burst", meta: "package/provider/crossplane.yaml", files: []string{"package/provider/crds/*.yaml"}, binary: "provider", port: "8080/tcp"},
		{name: "configuration-minicluster", meta: "package/configuration/crossplane.yaml", files: []string{"compositions/definition.yaml", "compositions/composition.yaml"}, examples: "examples"},
	}
	vars := map[string]string{"${REGISTRY}": *registry, "${VERSION}": *version}
	for _, p := range pkgs {
		start := time.Now()
		path, err := build(p, *crossplane, *bin, *out, vars)
		if err != nil {
			fmt.Fprintf(os.Stderr, "packages: %s: %v\n", p.name, err)
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "packages: built %s (%s)\n", path, time.Since(start).Round(time.Millisecond))
	}
}

func build(p pkg, crossplane, bin, out string, vars map[string]string) (string, error) {
	stage, err := os.MkdirTemp("", "xpkg-"+p.name+"-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(stage) //nolint:errcheck // a temporary directory
	root := filepath.Join(stage, "root")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", err
	}
	meta, err := os.ReadFile(p.meta)
	if err != nil {
		return "", err
	}
	text := string(meta)
	for k, v := range vars {
		text = strings.ReplaceAll(text, k, v)
	}
	if err := os.WriteFile(filepath.Join(root, "crossplane.yaml"), []byte(text), 0o644); err != nil { //nolint:gosec // package metadata is public
		return "", err
	}
	for _, g := range p.files {
		matches, err := filepath.Glob(g)
		if err != nil || len(matches) == 0 {
			return "", fmt.Errorf("no files match %s (run make generate)", g)
		}
		for _, m := range matches {
			if err := copyFile(m, filepath.Join(root, filepath.Base(m))); err != nil {
				return "", err
			}
		}
	}

	args := []string{"xpkg", "build", "--package-root=" + root}
	examples := filepath.Join(stage, "examples")
	if p.examples != "" {
		// Only the claims: the render inputs next to them are not examples
		// of the package's API.
		claims, _ := filepath.Glob(filepath.Join(p.examples, "*", "claim.yaml"))
		for _, c := range claims {
			if err := copyFile(c, filepath.Join(examples, filepath.Base(filepath.Dir(c))+".yaml")); err != nil {
				return "", err
			}
		}
	}
	args = append(args, "--examples-root="+examples)
	if p.binary != "" {
		image := filepath.Join(stage, "image.tar")
		if err := writeImage(filepath.Join(bin, p.binary), p.binary, p.port, p.name, image); err != nil {
			return "", fmt.Errorf("cannot build runtime image: %w", err)
		}
		args = append(args, "--embed-runtime-image-tarball="+image)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", err
	}
	file, err := filepath.Abs(filepath.Join(out, p.name+".xpkg"))
	if err != nil {
		return "", err
	}
	args = append(args, "--package-file="+file)
	cmd := exec.Command(crossplane, args...) //nolint:gosec // the pinned CLI
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("crossplane xpkg build: %w", err)
	}
	return file, nil
}

// writeImage writes an OCI image tarball: an empty base, one layer with the
// static binary at /<name>, running as a non-root user.
func writeImage(binary, entry, port, repo, path string) error {
	data, err := os.ReadFile(binary) //nolint:gosec // our own build output
	if err != nil {
		return fmt.Errorf("%w (build it with make build-linux)", err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Name: entry, Mode: 0o755, Size: int64(len(data)), Typeflag: tar.TypeReg, ModTime: time.Unix(0, 0)}); err != nil {
		return err
	}
	if _, err := tw.Write(data); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(buf.Bytes())), nil })
	if err != nil {
		return err
	}
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), layer)
	if err != nil {
		return err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cfg = cfg.DeepCopy()
	cfg.Architecture, cfg.OS = "amd64", "linux"
	cfg.Config.Entrypoint = []string{"/" + entry}
	cfg.Config.User = "65532:65532"
	cfg.Config.ExposedPorts = map[string]struct{}{port: {}}
	cfg.Created = v1.Time{Time: time.Unix(0, 0)}
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		return err
	}
	ref, err := name.NewTag("flux-framework/" + repo + ":latest")
	if err != nil {
		return err
	}
	return tarball.WriteToFile(path, ref, img)
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from) //nolint:gosec // files of this repository
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o644) //nolint:gosec // package contents are public
}
