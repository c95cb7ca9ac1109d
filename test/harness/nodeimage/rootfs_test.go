package nodeimage

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestRootfsKey(t *testing.T) {
	base := rootfsKey("bookworm", "minbase", []string{"bash", "procps"})
	cases := map[string]struct {
		reason  string
		suite   string
		variant string
		pkgs    []string
		same    bool
	}{
		"Reordered": {
			reason:  "The same packages in another order, repeated or padded, are the same rootfs.",
			suite:   "bookworm",
			variant: "minbase",
			pkgs:    []string{"procps", " bash", "procps", ""},
			same:    true,
		},
		"MorePackages": {
			reason:  "Another package is another rootfs.",
			suite:   "bookworm",
			variant: "minbase",
			pkgs:    []string{"bash", "procps", "curl"},
		},
		"FewerPackages": {
			reason:  "A missing package is another rootfs.",
			suite:   "bookworm",
			variant: "minbase",
			pkgs:    []string{"bash"},
		},
		"Suite": {
			reason:  "Another release is another rootfs.",
			suite:   "trixie",
			variant: "minbase",
			pkgs:    []string{"bash", "procps"},
		},
		"Variant": {
			reason:  "Another variant is another rootfs.",
			suite:   "bookworm",
			variant: "essential",
			pkgs:    []string{"bash", "procps"},
		},
		"PackageBoundary": {
			reason:  "Packages are not just concatenated: bash,procps is not bashprocps.",
			suite:   "bookworm",
			variant: "minbase",
			pkgs:    []string{"bashprocps"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := rootfsKey(tc.suite, tc.variant, tc.pkgs) == base
			if diff := cmp.Diff(tc.same, got); diff != "" {
				t.Errorf("\n%s\nsame key: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestRootfsCached(t *testing.T) {
	// A cached rootfs is returned without building, so without root or
	// mmdebstrap.
	dir := t.TempDir()
	spec := RootfsSpec{CacheDir: dir, Packages: []string{"bash"}}
	want := filepath.Join(dir, "rootfs-bookworm-minbase-"+rootfsKey("bookworm", "minbase", []string{"bash"})[:16]+".tar")
	if err := os.WriteFile(want, []byte("cached"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Rootfs(context.Background(), spec, t.Logf)
	if err != nil {
		t.Fatalf("Rootfs: %v", err)
	}
	if got != want {
		t.Errorf("Rootfs: got %s, want the cached %s", got, want)
	}
}

func TestRootfsNeedsRoot(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root")
	}
	_, err := Rootfs(context.Background(), RootfsSpec{CacheDir: t.TempDir()}, t.Logf)
	if err == nil || !strings.Contains(err.Error(), "needs root") {
		t.Errorf("Rootfs as non-root: want an error saying it needs root, got %v", err)
	}
}

func TestHostMirrors(t *testing.T) {
	cases := map[string]struct {
		reason string
		files  map[string]string
		suite  string
		want   []string
	}{
		"Deb822": {
			reason: "Debian's default deb822 sources give the suite, its updates and its security suite, with their keyrings.",
			files: map[string]string{"sources.list.d/debian.sources": `Types: deb
# http://snapshot.debian.org/archive/debian/20250520T000000Z
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
`},
			suite: "bookworm",
			want: []string{
				"deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main",
				"deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm-updates main",
				"deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian-security bookworm-security main",
			},
		},
		"OneLine": {
			reason: "A sources.list's entries count, options and all; deb-src, other suites and comments do not.",
			files: map[string]string{"sources.list": `# local mirror
deb [ arch=amd64 signed-by=/etc/apt/k.gpg ] http://mirror.local/debian bookworm main contrib
deb-src http://mirror.local/debian bookworm main
deb http://mirror.local/debian bookworm-backports main
deb http://mirror.local/security bookworm-security main # security
`},
			suite: "bookworm",
			want: []string{
				"deb [signed-by=/etc/apt/k.gpg] http://mirror.local/debian bookworm main contrib",
				"deb http://mirror.local/security bookworm-security main",
			},
		},
		"DisabledAndInlineKey": {
			reason: "A disabled stanza is skipped; an inline key cannot go on one line, so mmdebstrap is left to find the keyring.",
			files: map[string]string{"sources.list.d/a.sources": `Types: deb deb-src
URIs: http://a/debian
Suites: bookworm
Components: main
Signed-By:
 -----BEGIN PGP PUBLIC KEY BLOCK-----
 .
 xyz
 -----END PGP PUBLIC KEY BLOCK-----

Enabled: no
Types: deb
URIs: http://b/debian
Suites: bookworm
Components: main
`},
			suite: "bookworm",
			want:  []string{"deb http://a/debian bookworm main"},
		},
		"OtherSuite": {
			reason: "A host on another release offers nothing for this one, and mmdebstrap picks the mirror.",
			files: map[string]string{"sources.list.d/debian.sources": `Types: deb
URIs: http://deb.debian.org/debian
Suites: trixie
Components: main
`},
			suite: "bookworm",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			etc := t.TempDir()
			for p, c := range tc.files {
				mustWrite(t, filepath.Join(etc, p), c, 0o644)
			}
			got, err := hostMirrors(aptSourceFiles(etc), tc.suite)
			if err != nil {
				t.Fatalf("hostMirrors: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("\n%s\nhostMirrors(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestMmdebstrapArgs(t *testing.T) {
	got := mmdebstrapArgs("bookworm", "minbase", []string{"bash", "procps"}, "/c/out.tar.tmp", []string{"deb http://m/debian bookworm main"})
	want := []string{
		"--mode=root", "--format=tar", "--variant=minbase", "--include=bash,procps",
		"--dpkgopt=path-exclude=/usr/share/doc/*",
		"--dpkgopt=path-include=/usr/share/doc/*/copyright",
		"--dpkgopt=path-exclude=/usr/share/man/*",
		"--dpkgopt=path-exclude=/usr/share/info/*",
		"--dpkgopt=path-exclude=/usr/share/locale/*",
		`--customize-hook=rm -f "$1/etc/resolv.conf" "$1/etc/hostname"`,
		"bookworm", "/c/out.tar.tmp", "deb http://m/debian bookworm main",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mmdebstrapArgs: -want, +got:\n%s", diff)
	}
}

func TestLockFile(t *testing.T) {
	cases := map[string]struct {
		reason  string
		hold    bool
		release bool
		wantErr bool
	}{
		"Free": {
			reason: "An unheld lock is taken at once.",
		},
		"Held": {
			reason:  "A held lock is waited for until the context ends, then given up with an error.",
			hold:    true,
			wantErr: true,
		},
		"Released": {
			reason:  "A lock released while waiting is taken.",
			hold:    true,
			release: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.lock")
			if tc.hold {
				// flock locks belong to an open file, so a second open in
				// this process contends as another process would.
				unlock, err := lockFile(context.Background(), path, nil)
				if err != nil {
					t.Fatal(err)
				}
				if tc.release {
					time.AfterFunc(500*time.Millisecond, unlock)
				} else {
					defer unlock()
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			unlock, err := lockFile(ctx, path, t.Logf)
			if unlock != nil {
				unlock()
			}
			if diff := cmp.Diff(tc.wantErr, err != nil); diff != "" {
				t.Errorf("\n%s\nlockFile(...) error %v: -want, +got:\n%s", tc.reason, err, diff)
			}
		})
	}
}
