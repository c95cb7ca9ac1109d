package nodeimage

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

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
