package nodeimage

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// imageFormat is hashed into every image's cache key: bump it when the way
// layers or config are made changes, so stale tarballs are rewritten.
const imageFormat = "nodeimage-image-v1"

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

// entry is one tar entry of a layer and where its content comes from.
type entry struct {
	hdr  tar.Header
	data []byte
	// src is read when the layer is, not now, so large trees are never
	// held in memory.
	src string
	// ifMissing entries are left out where a layer below has the name.
	ifMissing bool
}

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

// planLayers lists the entries of each layer above the base: one per tree,
// then one of files.
func planLayers(img Image) ([][]entry, error) {
	// What the base has, so parents are only made where missing: a "bin/"
	// directory entry over bookworm's bin -> usr/bin symlink, or "tmp/" at
	// 0755 over its 1777, would break the image.
	known := map[string]bool{}
	if img.Base != "" {
		var err error
		if known, err = tarNames(img.Base); err != nil {
			return nil, fmt.Errorf("cannot read the base: %w", err)
		}
	}
	var layers [][]entry
	for _, t := range img.Trees {
		es, err := treeEntries(t)
		if err != nil {
			return nil, err
		}
		layers = append(layers, withParents(es, known))
	}
	if len(img.Files) > 0 {
		es, err := fileEntries(img.Files)
		if err != nil {
			return nil, err
		}
		layers = append(layers, withParents(es, known))
	}
	return layers, nil
}

// imagePath turns an absolute path in the image into a tar entry name.
func imagePath(p string) (string, error) {
	if !path.IsAbs(p) {
		return "", fmt.Errorf("path %q in the image is not absolute", p)
	}
	n := strings.TrimPrefix(path.Clean(p), "/")
	if n == "" {
		return "", fmt.Errorf("path %q is the image's root", p)
	}
	return n, nil
}

// tarMode is fs.FileMode's permission and special bits as tar stores them.
func tarMode(m fs.FileMode) int64 {
	t := int64(m.Perm())
	if m&fs.ModeSetuid != 0 {
		t |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		t |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		t |= 0o1000
	}
	return t
}

func fileEntries(files []File) ([]entry, error) {
	var es []entry
	seen := map[string]bool{}
	for _, f := range files {
		n, err := imagePath(f.Path)
		if err != nil {
			return nil, err
		}
		if seen[n] {
			return nil, fmt.Errorf("%s is given twice", f.Path)
		}
		seen[n] = true
		kinds := 0
		for _, set := range []bool{f.Content != nil, f.SourcePath != "", f.Symlink != "", f.Dir} {
			if set {
				kinds++
			}
		}
		if kinds > 1 {
			return nil, fmt.Errorf("%s: set only one of Content, SourcePath, Symlink and Dir", f.Path)
		}
		h := tar.Header{Name: n, Typeflag: tar.TypeReg, Mode: 0o644, Uid: f.UID, Gid: f.GID, ModTime: fixedTime}
		e := entry{}
		switch {
		case f.Dir:
			h.Typeflag, h.Name, h.Mode = tar.TypeDir, n+"/", 0o755
		case f.Symlink != "":
			h.Typeflag, h.Linkname, h.Mode = tar.TypeSymlink, f.Symlink, 0o777
		case f.SourcePath != "":
			fi, err := os.Stat(f.SourcePath)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f.Path, err)
			}
			if !fi.Mode().IsRegular() {
				return nil, fmt.Errorf("%s: source %s is not a regular file", f.Path, f.SourcePath)
			}
			h.Size, h.Mode = fi.Size(), tarMode(fi.Mode())
			e.src = f.SourcePath
		default:
			h.Size = int64(len(f.Content))
			e.data = f.Content
			if e.data == nil {
				e.data = []byte{}
			}
		}
		if f.Mode != 0 && h.Typeflag != tar.TypeSymlink {
			h.Mode = tarMode(f.Mode)
		}
		e.hdr = h
		es = append(es, e)
	}
	return es, nil
}

func treeEntries(t Tree) ([]entry, error) {
	dest := path.Clean(t.Dest)
	if !path.IsAbs(dest) {
		return nil, fmt.Errorf("tree %s: destination %q is not absolute", t.Source, t.Dest)
	}
	fi, err := os.Stat(t.Source)
	if err != nil {
		return nil, fmt.Errorf("tree %s: %w", t.Source, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("tree %s is not a directory", t.Source)
	}
	var es []entry
	err = filepath.WalkDir(t.Source, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(t.Source, p)
		if err != nil {
			return err
		}
		n := strings.TrimPrefix(path.Join(dest, filepath.ToSlash(rel)), "/")
		if n == "" {
			// Copying into the root: the root is not an entry.
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		h := tar.Header{Name: n, Mode: tarMode(info.Mode()), ModTime: info.ModTime().Truncate(time.Second).UTC()}
		// The destination itself is written only where the layers below
		// lack it, as any other parent, so a tree copied to /usr/local
		// leaves /usr/local's mode alone.
		e := entry{ifMissing: p == t.Source}
		switch {
		case info.IsDir():
			h.Typeflag, h.Name = tar.TypeDir, n+"/"
		case info.Mode()&fs.ModeSymlink != 0:
			if h.Linkname, err = os.Readlink(p); err != nil {
				return err
			}
			h.Typeflag = tar.TypeSymlink
		case info.Mode().IsRegular():
			// Hard links are copied as separate files: simpler, and a
			// tree's hard links are rarely worth the space.
			h.Typeflag, h.Size = tar.TypeReg, info.Size()
			e.src = p
		default:
			return fmt.Errorf("%s: cannot copy a %s into an image", p, info.Mode().Type())
		}
		e.hdr = h
		es = append(es, e)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("tree %s: %w", t.Source, err)
	}
	return es, nil
}

// cleanName is an entry's name without a leading "./" or trailing "/".
func cleanName(n string) string {
	return strings.TrimPrefix(path.Clean("/"+n), "/")
}

// withParents sorts es parents first and adds a 0755 directory for each
// missing parent: not every runtime makes them, and a scratch image has
// none. It records the layer's names in known, for the layers above.
func withParents(es []entry, known map[string]bool) []entry {
	slices.SortStableFunc(es, func(a, b entry) int { return strings.Compare(cleanName(a.hdr.Name), cleanName(b.hdr.Name)) })
	var out []entry
	here := map[string]bool{}
	for _, e := range es {
		n := cleanName(e.hdr.Name)
		parts := strings.Split(n, "/")
		for i := 1; i < len(parts); i++ {
			p := strings.Join(parts[:i], "/")
			if known[p] || here[p] {
				continue
			}
			out = append(out, entry{hdr: tar.Header{Name: p + "/", Typeflag: tar.TypeDir, Mode: 0o755, ModTime: fixedTime}})
			here[p] = true
		}
		if here[n] || (e.ifMissing && known[n]) {
			continue
		}
		out = append(out, e)
		here[n] = true
	}
	for n := range here {
		known[n] = true
	}
	return out
}

// tarNames lists the names in a tar file.
func tarNames(p string) (map[string]bool, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	names := map[string]bool{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return names, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		names[cleanName(h.Name)] = true
	}
}

// writeLayer writes a layer's tar stream. A file on disk must still be as
// planned: its size is in the header already written.
func writeLayer(w io.Writer, es []entry) error {
	tw := tar.NewWriter(w)
	for _, e := range es {
		h := e.hdr
		if err := tw.WriteHeader(&h); err != nil {
			return err
		}
		switch {
		case e.src != "":
			if err := copyFile(tw, e.src, h.Size); err != nil {
				return err
			}
		case len(e.data) > 0:
			if _, err := tw.Write(e.data); err != nil {
				return err
			}
		}
	}
	return tw.Close()
}

func copyFile(w io.Writer, src string, size int64) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	if _, err := io.CopyN(w, f, size); err != nil {
		return fmt.Errorf("%s changed while being copied: %w", src, err)
	}
	return nil
}

// layerOf streams es as a layer. go-containerregistry reads a layer more
// than once (digest, diff ID, writing); each read makes the stream anew.
func layerOf(es []entry) (v1.Layer, error) {
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		pr, pw := io.Pipe()
		go func() { _ = pw.CloseWithError(writeLayer(pw, es)) }()
		return pr, nil
	}, tarball.WithCompressedCaching)
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

// inputsKey digests everything the tarball is made of. Files on disk count
// by size and mtime, not content: reading a flux-core install tree on
// every run to find it unchanged would cost as much as writing it.
func inputsKey(img Image, layers [][]entry) (string, error) {
	type keyEntry struct {
		Name, Link string
		Type       byte
		Mode, Size int64
		UID, GID   int
		MTime      int64
		Data       string `json:",omitempty"`
		Src        string `json:",omitempty"`
		SrcMTime   int64  `json:",omitempty"`
	}
	k := struct {
		Format, Ref, Base    string
		BaseSize, BaseMTime  int64
		Env, Entrypoint, Cmd []string
		WorkingDir, User     string
		Layers               [][]keyEntry
	}{
		Format: imageFormat, Ref: img.Ref, Base: img.Base,
		Env: imageEnv(img.Env), Entrypoint: img.Entrypoint, Cmd: img.Cmd, WorkingDir: img.WorkingDir, User: img.User,
	}
	if img.Base != "" {
		fi, err := os.Stat(img.Base)
		if err != nil {
			return "", err
		}
		k.BaseSize, k.BaseMTime = fi.Size(), fi.ModTime().UnixNano()
	}
	for _, es := range layers {
		var kl []keyEntry
		for _, e := range es {
			ke := keyEntry{Name: e.hdr.Name, Link: e.hdr.Linkname, Type: e.hdr.Typeflag, Mode: e.hdr.Mode, Size: e.hdr.Size, UID: e.hdr.Uid, GID: e.hdr.Gid, MTime: e.hdr.ModTime.Unix()}
			if e.data != nil {
				sum := sha256.Sum256(e.data)
				ke.Data = hex.EncodeToString(sum[:])
			}
			if e.src != "" {
				fi, err := os.Stat(e.src)
				if err != nil {
					return "", err
				}
				ke.Src, ke.SrcMTime = e.src, fi.ModTime().UnixNano()
			}
			kl = append(kl, ke)
		}
		k.Layers = append(k.Layers, kl)
	}
	b, err := json.Marshal(k)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}
