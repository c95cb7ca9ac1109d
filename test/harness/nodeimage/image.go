package nodeimage

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// DefaultPath is the PATH of an image whose Env sets none: Debian's.
const DefaultPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// An Image is a linux/amd64 container image to build: an optional Debian
// root filesystem, then one layer per Tree, then one layer of Files (the
// inputs most likely to change last, so containerd reuses the snapshots
// below them).
type Image struct {
	// Ref names the image, with registry and tag, e.g.
	// "localhost/minicluster-e2e/app:bookworm". Pods should use a tag other
	// than "latest": the kubelet always pulls ":latest" by default, and
	// there is no registry to pull from.
	Ref string
	// Base is a root filesystem tarball (see Rootfs); empty means scratch.
	Base string
	// Trees are host directories copied in.
	Trees []Tree
	// Files are single files, directories and symlinks.
	Files []File

	// Env is the config's environment; DefaultPath is added unless it sets
	// PATH.
	Env        []string
	Entrypoint []string
	Cmd        []string
	WorkingDir string
	User       string
}

// A File is one entry of an image's last layer. Exactly one of Content,
// SourcePath, Symlink and Dir says what it is; none is an empty file.
// Parent directories missing from the layers below are made 0755.
type File struct {
	// Path is absolute, in the image.
	Path string
	// Mode is the permission bits, with setuid, setgid and sticky if
	// wanted. Zero means 0644 for Content, 0755 for Dir and the source's
	// for SourcePath.
	Mode fs.FileMode
	// UID and GID own it; root by default.
	UID, GID int

	Content    []byte
	SourcePath string
	Symlink    string
	Dir        bool
}

// A Tree is a host directory copied into an image at Dest, as it is:
// modes, mtimes and symlinks (not followed, targets unchanged, so absolute
// targets resolve inside the image). Files are owned by root.
type Tree struct {
	Source string
	Dest   string
}

// fixedTime stamps what has no mtime of its own (File entries, the
// config), so that unchanged inputs make unchanged digests.
var fixedTime = func() time.Time {
	s, _ := strconv.ParseInt(sourceDateEpoch, 10, 64)
	return time.Unix(s, 0).UTC()
}()

// WriteTarball writes img as a docker-archive tarball at path, tagged
// img.Ref, for Import. If path already holds the tarball of identical
// inputs (compared by a digest of the configuration, file contents and the
// size and mtime of files on disk) it is left alone: writing one with a
// Debian base compresses about a hundred megabytes. That digest is kept in
// path.key, beside path.lock, which serializes writers of path.
func WriteTarball(img Image, path string) error {
	tag, err := name.NewTag(img.Ref, name.StrictValidation)
	if err != nil {
		return fmt.Errorf("cannot write image %q: the reference needs a registry and a tag: %w", img.Ref, err)
	}
	layers, err := planLayers(img)
	if err != nil {
		return fmt.Errorf("cannot write image %s: %w", img.Ref, err)
	}
	key, err := inputsKey(img, layers)
	if err != nil {
		return fmt.Errorf("cannot write image %s: %w", img.Ref, err)
	}

	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("cannot write image %s: %w", img.Ref, err)
	}
	// Two writers of one path with different inputs could otherwise leave
	// one's key beside the other's tarball.
	unlock, err := lockFile(context.Background(), path+".lock", nil)
	if err != nil {
		return fmt.Errorf("cannot write image %s: %w", img.Ref, err)
	}
	defer unlock()
	keyPath := path + ".key"
	if old, err := os.ReadFile(keyPath); err == nil && string(old) == key {
		if _, err := os.Stat(path); err == nil {
			return nil
		}
	}
	_ = os.Remove(keyPath)

	v1img, err := buildImage(img, layers)
	if err != nil {
		return fmt.Errorf("cannot write image %s: %w", img.Ref, err)
	}
	tmp := path + ".tmp"
	if err := tarball.WriteToFile(tmp, tag, v1img); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("cannot write image %s: %w", img.Ref, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("cannot write image %s: %w", img.Ref, err)
	}
	if err := os.WriteFile(keyPath, []byte(key), 0o644); err != nil {
		return fmt.Errorf("cannot write image %s: %w", img.Ref, err)
	}
	return nil
}

func buildImage(img Image, planned [][]entry) (v1.Image, error) {
	var layers []v1.Layer
	if img.Base != "" {
		l, err := tarball.LayerFromFile(img.Base, tarball.WithCompressedCaching)
		if err != nil {
			return nil, fmt.Errorf("cannot read the base: %w", err)
		}
		layers = append(layers, l)
	}
	for _, es := range planned {
		l, err := layerOf(es)
		if err != nil {
			return nil, err
		}
		layers = append(layers, l)
	}
	v1img, err := mutate.AppendLayers(empty.Image, layers...)
	if err != nil {
		return nil, err
	}
	cf, err := v1img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", "amd64"
	cf.Created = v1.Time{Time: fixedTime}
	cf.Config.Env = imageEnv(img.Env)
	cf.Config.Entrypoint = img.Entrypoint
	cf.Config.Cmd = img.Cmd
	cf.Config.WorkingDir = img.WorkingDir
	cf.Config.User = img.User
	return mutate.ConfigFile(v1img, cf)
}

func imageEnv(env []string) []string {
	for _, e := range env {
		if strings.HasPrefix(e, "PATH=") {
			return env
		}
	}
	return append([]string{DefaultPath}, env...)
}
