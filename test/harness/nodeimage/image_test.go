package nodeimage

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// tarEntry is what a test checks of a layer's entry.
type tarEntry struct {
	Name     string
	Type     byte
	Mode     int64
	UID, GID int
	Link     string
	Content  string
}

// written is what a test checks of a written image tarball.
type written struct {
	RepoTags   []string
	OS, Arch   string
	Env        []string
	Entrypoint []string
	Cmd        []string
	WorkingDir string
	User       string
	Layers     [][]tarEntry
}

func readTarEntries(t *testing.T, r io.Reader) []tarEntry {
	t.Helper()
	var out []tarEntry
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("reading layer: %v", err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatalf("reading %s: %v", h.Name, err)
		}
		out = append(out, tarEntry{Name: h.Name, Type: h.Typeflag, Mode: h.Mode, UID: h.Uid, GID: h.Gid, Link: h.Linkname, Content: string(b)})
	}
}

// readWritten reads a tarball back the way a consumer would.
func readWritten(t *testing.T, path, ref string) written {
	t.Helper()
	m, err := tarball.LoadManifest(func() (io.ReadCloser, error) { return os.Open(path) })
	if err != nil {
		t.Fatalf("LoadManifest: %v", err)
	}
	if len(m) != 1 {
		t.Fatalf("tarball has %d images, want 1", len(m))
	}
	tag, err := name.NewTag(ref)
	if err != nil {
		t.Fatal(err)
	}
	img, err := tarball.ImageFromPath(path, &tag)
	if err != nil {
		t.Fatalf("ImageFromPath: %v", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatalf("ConfigFile: %v", err)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatalf("Layers: %v", err)
	}
	w := written{
		RepoTags: m[0].RepoTags, OS: cf.OS, Arch: cf.Architecture,
		Env: cf.Config.Env, Entrypoint: cf.Config.Entrypoint, Cmd: cf.Config.Cmd,
		WorkingDir: cf.Config.WorkingDir, User: cf.Config.User,
	}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatalf("Uncompressed: %v", err)
		}
		w.Layers = append(w.Layers, readTarEntries(t, rc))
		_ = rc.Close()
	}
	// The config must describe the layers it has, or containerd refuses
	// the image.
	if got, want := len(cf.RootFS.DiffIDs), len(layers); got != want {
		t.Errorf("config has %d diff IDs for %d layers", got, want)
	}
	return w
}

func mustWrite(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	// Past the umask, and setuid, which WriteFile drops.
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// fixture makes a tree as an install prefix has one, a lone host file and
// a small base rootfs tarball with bookworm's merged /usr and sticky /tmp.
func fixture(t *testing.T) (tree, hostFile, base string) {
	t.Helper()
	dir := t.TempDir()
	tree = filepath.Join(dir, "tree")
	mustWrite(t, filepath.Join(tree, "bin", "tool"), "tool", 0o755)
	mustWrite(t, filepath.Join(tree, "bin", "suid"), "suid", os.ModeSetuid|0o755)
	mustWrite(t, filepath.Join(tree, "lib", "libx.so.1"), "lib", 0o644)
	if err := os.Symlink("libx.so.1", filepath.Join(tree, "lib", "libx.so")); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(tree, "etc", "secret"), "s", 0o600)
	for d, m := range map[string]os.FileMode{tree: 0o750, filepath.Join(tree, "bin"): 0o755, filepath.Join(tree, "lib"): 0o755, filepath.Join(tree, "etc"): 0o700} {
		if err := os.Chmod(d, m); err != nil {
			t.Fatal(err)
		}
	}
	hostFile = filepath.Join(dir, "host.conf")
	mustWrite(t, hostFile, "conf", 0o640)

	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, h := range []*tar.Header{
		{Name: "./", Typeflag: tar.TypeDir, Mode: 0o755},
		{Name: "./bin", Typeflag: tar.TypeSymlink, Linkname: "usr/bin", Mode: 0o777},
		{Name: "./tmp/", Typeflag: tar.TypeDir, Mode: 0o1777},
		{Name: "./usr/", Typeflag: tar.TypeDir, Mode: 0o755},
		{Name: "./usr/bin/", Typeflag: tar.TypeDir, Mode: 0o755},
		{Name: "./usr/bin/sh", Typeflag: tar.TypeReg, Mode: 0o755, Size: 2},
	} {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Size > 0 {
			_, _ = tw.Write([]byte("sh"))
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	base = filepath.Join(dir, "base.tar")
	if err := os.WriteFile(base, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return tree, hostFile, base
}

func TestWriteTarball(t *testing.T) {
	tree, hostFile, base := fixture(t)
	const (
		dir  = tar.TypeDir
		reg  = tar.TypeReg
		link = tar.TypeSymlink
	)
	baseEntries := []tarEntry{
		{Name: "./", Type: dir, Mode: 0o755},
		{Name: "./bin", Type: link, Mode: 0o777, Link: "usr/bin"},
		{Name: "./tmp/", Type: dir, Mode: 0o1777},
		{Name: "./usr/", Type: dir, Mode: 0o755},
		{Name: "./usr/bin/", Type: dir, Mode: 0o755},
		{Name: "./usr/bin/sh", Type: reg, Mode: 0o755, Content: "sh"},
	}
	treeAtOptFlux := []tarEntry{
		{Name: "opt/", Type: dir, Mode: 0o755},
		{Name: "opt/flux/", Type: dir, Mode: 0o750},
		{Name: "opt/flux/bin/", Type: dir, Mode: 0o755},
		{Name: "opt/flux/bin/suid", Type: reg, Mode: 0o4755, Content: "suid"},
		{Name: "opt/flux/bin/tool", Type: reg, Mode: 0o755, Content: "tool"},
		{Name: "opt/flux/etc/", Type: dir, Mode: 0o700},
		{Name: "opt/flux/etc/secret", Type: reg, Mode: 0o600, Content: "s"},
		{Name: "opt/flux/lib/", Type: dir, Mode: 0o755},
		{Name: "opt/flux/lib/libx.so", Type: link, Mode: 0o777, Link: "libx.so.1"},
		{Name: "opt/flux/lib/libx.so.1", Type: reg, Mode: 0o644, Content: "lib"},
	}

	cases := map[string]struct {
		reason string
		img    Image
		want   written
		err    string
	}{
		"ScratchFiles": {
			reason: "Files of every kind go in one layer, sorted parents first, with the parents a scratch image lacks made 0755 and PATH defaulted.",
			img: Image{
				Ref: "localhost/minicluster-e2e/files:v1",
				Files: []File{
					{Path: "/var/lib/app", Dir: true, Mode: 0o700, UID: 1000, GID: 1000},
					{Path: "/usr/bin/tool", SourcePath: hostFile},
					{Path: "/usr/bin/alias", Symlink: "tool"},
					{Path: "/etc/app/config", Content: []byte("a=1"), Mode: 0o600},
					{Path: "/etc/app/empty"},
				},
				Entrypoint: []string{"/usr/bin/tool"},
			},
			want: written{
				RepoTags: []string{"localhost/minicluster-e2e/files:v1"}, OS: "linux", Arch: "amd64",
				Env: []string{DefaultPath}, Entrypoint: []string{"/usr/bin/tool"},
				Layers: [][]tarEntry{{
					{Name: "etc/", Type: dir, Mode: 0o755},
					{Name: "etc/app/", Type: dir, Mode: 0o755},
					{Name: "etc/app/config", Type: reg, Mode: 0o600, Content: "a=1"},
					{Name: "etc/app/empty", Type: reg, Mode: 0o644},
					{Name: "usr/", Type: dir, Mode: 0o755},
					{Name: "usr/bin/", Type: dir, Mode: 0o755},
					{Name: "usr/bin/alias", Type: link, Mode: 0o777, Link: "tool"},
					{Name: "usr/bin/tool", Type: reg, Mode: 0o640, Content: "conf"},
					{Name: "var/", Type: dir, Mode: 0o755},
					{Name: "var/lib/", Type: dir, Mode: 0o755},
					{Name: "var/lib/app/", Type: dir, Mode: 0o700, UID: 1000, GID: 1000},
				}},
			},
		},
		"ScratchTree": {
			reason: "A tree keeps its modes (setuid included) and symlinks, its root included where nothing below has it.",
			img: Image{
				Ref:   "localhost/minicluster-e2e/tree:v1",
				Trees: []Tree{{Source: tree, Dest: "/opt/flux"}},
				Env:   []string{"FOO=bar"},
				Cmd:   []string{"flux", "start"},
			},
			want: written{
				RepoTags: []string{"localhost/minicluster-e2e/tree:v1"}, OS: "linux", Arch: "amd64",
				Env: []string{DefaultPath, "FOO=bar"}, Cmd: []string{"flux", "start"},
				Layers: [][]tarEntry{treeAtOptFlux},
			},
		},
		"TreeThenFiles": {
			reason: "Files come in a layer above the trees and make no parent a tree already has; a PATH in Env is kept as it is.",
			img: Image{
				Ref:        "localhost/minicluster-e2e/both:v1",
				Trees:      []Tree{{Source: tree, Dest: "/opt/flux"}},
				Files:      []File{{Path: "/opt/flux/etc/extra", Content: []byte("x")}},
				Env:        []string{"PATH=/opt/flux/bin:/usr/bin"},
				WorkingDir: "/opt/flux",
				User:       "1000:1000",
			},
			want: written{
				RepoTags: []string{"localhost/minicluster-e2e/both:v1"}, OS: "linux", Arch: "amd64",
				Env: []string{"PATH=/opt/flux/bin:/usr/bin"}, WorkingDir: "/opt/flux", User: "1000:1000",
				Layers: [][]tarEntry{
					treeAtOptFlux,
					{{Name: "opt/flux/etc/extra", Type: reg, Mode: 0o644, Content: "x"}},
				},
			},
		},
		"OnBase": {
			reason: "Over a base, no parent is made that the base has: not over its bin symlink, nor over its sticky /tmp; a tree copied onto an existing directory leaves that directory's entry to the base.",
			img: Image{
				Ref:   "localhost/minicluster-e2e/app:bookworm",
				Base:  base,
				Trees: []Tree{{Source: filepath.Join(tree, "lib"), Dest: "/usr/bin"}},
				Files: []File{
					{Path: "/tmp/x", Content: []byte("x")},
					{Path: "/bin/y", Content: []byte("y")},
					{Path: "/opt/z", Content: []byte("z")},
				},
			},
			want: written{
				RepoTags: []string{"localhost/minicluster-e2e/app:bookworm"}, OS: "linux", Arch: "amd64",
				Env: []string{DefaultPath},
				Layers: [][]tarEntry{
					baseEntries,
					{
						{Name: "usr/bin/libx.so", Type: link, Mode: 0o777, Link: "libx.so.1"},
						{Name: "usr/bin/libx.so.1", Type: reg, Mode: 0o644, Content: "lib"},
					},
					{
						{Name: "bin/y", Type: reg, Mode: 0o644, Content: "y"},
						{Name: "opt/", Type: dir, Mode: 0o755},
						{Name: "opt/z", Type: reg, Mode: 0o644, Content: "z"},
						{Name: "tmp/x", Type: reg, Mode: 0o644, Content: "x"},
					},
				},
			},
		},
		"NoTag": {
			reason: "A reference without a tag would be tagged latest, which the kubelet always tries to pull.",
			img:    Image{Ref: "localhost/minicluster-e2e/app"},
			err:    "needs a registry and a tag",
		},
		"NoRegistry": {
			reason: "A reference without a registry is docker.io's, which is not what a local image means.",
			img:    Image{Ref: "minicluster-e2e/app:v1"},
			err:    "needs a registry and a tag",
		},
		"TwoKinds": {
			reason: "A file is one thing.",
			img:    Image{Ref: "localhost/x/y:v1", Files: []File{{Path: "/a", Content: []byte("a"), Symlink: "b"}}},
			err:    "set only one of",
		},
		"Relative": {
			reason: "Paths in the image are absolute.",
			img:    Image{Ref: "localhost/x/y:v1", Files: []File{{Path: "a"}}},
			err:    "not absolute",
		},
		"Twice": {
			reason: "The same path twice is a mistake, not a choice of the last.",
			img:    Image{Ref: "localhost/x/y:v1", Files: []File{{Path: "/a"}, {Path: "/a/"}}},
			err:    "given twice",
		},
		"TreeNotDir": {
			reason: "A tree's source is a directory.",
			img:    Image{Ref: "localhost/x/y:v1", Trees: []Tree{{Source: hostFile, Dest: "/x"}}},
			err:    "not a directory",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "image.tar")
			err := WriteTarball(tc.img, path)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("\n%s\nWriteTarball(...): want error containing %q, got %v", tc.reason, tc.err, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("\n%s\nWriteTarball(...): %v", tc.reason, err)
			}
			got := readWritten(t, path, tc.img.Ref)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("\n%s\nWriteTarball(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestWriteTarballTimes(t *testing.T) {
	tree, _, _ := fixture(t)
	mtime := time.Date(2024, 2, 3, 4, 5, 6, 789, time.UTC)
	if err := os.Chtimes(filepath.Join(tree, "bin", "tool"), mtime, mtime); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "image.tar")
	img := Image{Ref: "localhost/x/y:v1", Trees: []Tree{{Source: tree, Dest: "/t"}}, Files: []File{{Path: "/f"}}}
	if err := WriteTarball(img, path); err != nil {
		t.Fatal(err)
	}
	v1img, err := tarball.ImageFromPath(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]time.Time{}
	layers, _ := v1img.Layers()
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		for h, err := tr.Next(); err == nil; h, err = tr.Next() {
			got[h.Name] = h.ModTime.UTC()
		}
		_ = rc.Close()
	}
	want := map[string]time.Time{"t/bin/tool": mtime.Truncate(time.Second), "f": fixedTime}
	for n, w := range want {
		if !got[n].Equal(w) {
			t.Errorf("mtime of %s: want %v (a tree keeps its files' mtimes, Files get a fixed one), got %v", n, w, got[n])
		}
	}
	cf, _ := v1img.ConfigFile()
	if !cf.Created.Equal(fixedTime) {
		t.Errorf("config created %v, want the fixed %v so the digest only changes with the content", cf.Created.Time, fixedTime)
	}
}

func TestWriteTarballCache(t *testing.T) {
	cases := map[string]struct {
		reason  string
		change  func(t *testing.T, img *Image, hostFile string)
		rewrite bool
	}{
		"Same": {
			reason: "Identical inputs leave the tarball alone.",
			change: func(*testing.T, *Image, string) {},
		},
		"Content": {
			reason:  "A file's new content is a new image.",
			change:  func(_ *testing.T, img *Image, _ string) { img.Files[0].Content = []byte("b") },
			rewrite: true,
		},
		"Config": {
			reason:  "A new entrypoint is a new image.",
			change:  func(_ *testing.T, img *Image, _ string) { img.Entrypoint = []string{"/other"} },
			rewrite: true,
		},
		"SourceTouched": {
			reason: "A file on disk that may have changed (new mtime) is read again.",
			change: func(t *testing.T, _ *Image, hostFile string) {
				later := time.Now().Add(time.Hour)
				if err := os.Chtimes(hostFile, later, later); err != nil {
					t.Fatal(err)
				}
			},
			rewrite: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, hostFile, base := fixture(t)
			img := Image{
				Ref:        "localhost/x/y:v1",
				Base:       base,
				Files:      []File{{Path: "/a", Content: []byte("a")}, {Path: "/h", SourcePath: hostFile}},
				Entrypoint: []string{"/a"},
			}
			path := filepath.Join(t.TempDir(), "image.tar")
			if err := WriteTarball(img, path); err != nil {
				t.Fatal(err)
			}
			before, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			tc.change(t, &img, hostFile)
			if err := WriteTarball(img, path); err != nil {
				t.Fatal(err)
			}
			after, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			// A rewrite renames a new file into place.
			if diff := cmp.Diff(tc.rewrite, !os.SameFile(before, after)); diff != "" {
				t.Errorf("\n%s\nrewritten: -want, +got:\n%s", tc.reason, diff)
			}
			if tc.rewrite {
				if _, err := tarball.ImageFromPath(path, nil); err != nil {
					t.Errorf("rewritten tarball does not read: %v", err)
				}
			}
		})
	}
}
