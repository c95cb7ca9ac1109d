package nodeimage

import (
	"archive/tar"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestVersionAfter(t *testing.T) {
	cases := map[string]struct {
		reason string
		a, b   string
		want   bool
	}{
		"Newer":        {reason: "2.38 is after 2.36.", a: "2.38", b: "2.36", want: true},
		"Same":         {reason: "A version is not after itself.", a: "2.36", b: "2.36"},
		"Numeric":      {reason: "Components compare as numbers: 2.4 is before 2.36.", a: "2.4", b: "2.36"},
		"LongerNewer":  {reason: "2.3.4 is after 2.3.", a: "2.3.4", b: "2.3", want: true},
		"ShorterOlder": {reason: "2.2 is before 2.2.5.", a: "2.2", b: "2.2.5"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := versionAfter(tc.a, tc.b); got != tc.want {
				t.Errorf("%s\nversionAfter(%q, %q) = %t, want %t", tc.reason, tc.a, tc.b, got, tc.want)
			}
		})
	}
}

// TestELFNeedingGlibc finds the host's own env in a tarball of it: it needs
// some glibc, and no glibc newer than a far future one.
func TestELFNeedingGlibc(t *testing.T) {
	env, err := os.ReadFile("/usr/bin/env")
	if err != nil {
		t.Skipf("no /usr/bin/env to test with: %v", err)
	}
	if newestGlibc(env) == "" {
		t.Skip("/usr/bin/env is not dynamically linked to glibc here")
	}
	dir := t.TempDir()
	rootfs := filepath.Join(dir, "rootfs.tar")
	f, err := os.Create(rootfs)
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(f)
	for _, e := range []struct {
		name string
		mode int64
		body []byte
	}{
		{"./usr/bin/script", 0o755, []byte("#!/bin/sh\n")},
		{"./usr/lib/env", 0o755, env},
		{"./usr/bin/env", 0o755, env},
	} {
		if err := tw.WriteHeader(&tar.Header{Name: e.name, Mode: e.mode, Size: int64(len(e.body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(e.body); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()

	type want struct {
		path string
		ok   bool
	}
	cases := map[string]struct {
		reason string
		than   string
		want   want
	}{
		"Found":    {reason: "env of /usr/bin needs a glibc after 2.0 (not the script, nor a file outside /usr/bin).", than: "2.0", want: want{path: "/usr/bin/env", ok: true}},
		"NotFound": {reason: "Nothing needs a glibc after 99.", than: "99"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "flux")
			path, _, err := ELFNeedingGlibc(rootfs, tc.than, dst)
			got := want{path: path, ok: err == nil}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s (err %v)", tc.reason, diff, err)
			}
			if got.ok {
				if b, err := os.ReadFile(dst); err != nil || len(b) != len(env) {
					t.Errorf("%s\nthe binary was not written to %s: %v", tc.reason, dst, err)
				}
			}
		})
	}
}
