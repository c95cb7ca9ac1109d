package nodeimage

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestImport(t *testing.T) {
	cases := map[string]struct {
		reason string
		spec   ImportSpec
		fail   bool
		want   []string
		err    string
	}{
		"Defaults": {
			reason: "By default the image goes to the system containerd's k8s.io namespace, unpacked (no --no-unpack), for linux/amd64.",
			spec:   ImportSpec{Tarball: "/x/app.tar"},
			want:   []string{"--address", DefaultAddress, "--namespace", "k8s.io", "images", "import", "--platform", "linux/amd64", "/x/app.tar"},
		},
		"Private": {
			reason: "A test's own containerd and snapshotter are used as given.",
			spec:   ImportSpec{Address: "/tmp/c/sock", Namespace: "other", Snapshotter: "native", Tarball: "/x/app.tar"},
			want:   []string{"--address", "/tmp/c/sock", "--namespace", "other", "images", "import", "--platform", "linux/amd64", "--snapshotter", "native", "/x/app.tar"},
		},
		"Fails": {
			reason: "ctr's output comes back with its failure.",
			spec:   ImportSpec{Tarball: "/x/app.tar"},
			fail:   true,
			err:    "ctr: content digest not found",
		},
		"NoTarball": {
			reason: "There is nothing to import.",
			err:    "no tarball",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			argsFile := filepath.Join(dir, "args")
			script := "#!/bin/sh\nprintf '%s\\n' \"$@\" > " + argsFile + "\n"
			if tc.fail {
				script += "echo 'ctr: content digest not found' >&2\nexit 1\n"
			}
			ctr := filepath.Join(dir, "ctr")
			mustWrite(t, ctr, script, 0o755)
			tc.spec.Ctr = ctr
			err := Import(context.Background(), tc.spec)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("\n%s\nImport(...): want error containing %q, got %v", tc.reason, tc.err, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("\n%s\nImport(...): %v", tc.reason, err)
			}
			b, err := os.ReadFile(argsFile)
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("\n%s\nctr args: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
