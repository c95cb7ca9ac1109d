package entrypoint

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// The images the runner names in its message, as internal/render sets them.
var viewFitEnv = map[string]string{
	EnvAppImage:  "rockylinux:9",
	EnvViewImage: "ghcr.io/converged-computing/flux-view-ubuntu:tag-noble",
}

// TestRunnerViewFits runs the runner with a flux whose `flux version`
// fails as a view built for another OS fails (the loader's own words, or a
// real loader failure) and checks that the runner stops at once with
// ViewDoesNotFitExitCode and a termination message naming both images and
// the fix, and that any other outcome of the check lets Flux start.
func TestRunnerViewFits(t *testing.T) {
	t.Parallel()
	// version is the body of flux version; anything else is the sandbox's
	// fake flux.
	type want struct {
		exit       int
		started    bool   // flux start ran
		terminated string // in the termination message, "" for none
	}
	cases := map[string]struct {
		reason  string
		version string
		// flux replaces the whole flux (a real loader failure).
		flux    func(t *testing.T, dir string) string
		disable bool
		strict  bool
		want    want
	}{
		"Fits": {
			reason:  "A view that runs in the image changes nothing.",
			version: "echo 0.88.0; exit 0",
			want:    want{started: true},
		},
		"GlibcTooOld": {
			reason:  "A view built on a newer C library than the image's (glibc's words).",
			version: "echo \"flux: /lib/x86_64-linux-gnu/libc.so.6: version \\`GLIBC_2.38' not found (required by flux)\" >&2; exit 1",
			want: want{exit: ViewDoesNotFitExitCode, terminated: "the Flux view ghcr.io/converged-computing/flux-view-ubuntu:tag-noble does not run in the application image rockylinux:9 " +
				"(flux: /lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.38' not found (required by flux)): the view's binaries run with the application image's C library"},
		},
		"GlibcTooOldStrict": {
			reason:  "logging.strict stops at the same check, with the same code.",
			version: "echo \"flux: /lib64/libc.so.6: version \\`GLIBCXX_3.4.32' not found (required by flux)\" >&2; exit 1",
			strict:  true,
			want:    want{exit: ViewDoesNotFitExitCode, terminated: "GLIBCXX_3.4.32' not found"},
		},
		"MissingLibrary": {
			reason:  "A library the view expects from the image (the loader's words).",
			version: "echo 'flux: error while loading shared libraries: libsodium.so.23: cannot open shared object file: No such file or directory' >&2; exit 127",
			want:    want{exit: ViewDoesNotFitExitCode, terminated: "(flux: error while loading shared libraries: libsodium.so.23"},
		},
		"MissingInterpreter": {
			reason: "The view's loader (its ELF interpreter) is not in the image: bash cannot execute flux at all (exit 127).",
			flux: func(t *testing.T, dir string) string {
				f := filepath.Join(dir, "flux")
				mustWrite(t, f, "#!/nonexistent/lib/ld-linux-x86-64.so.2\n", 0o755)
				return f
			},
			want: want{exit: ViewDoesNotFitExitCode, terminated: "does not run in the application image rockylinux:9"},
		},
		"RealMissingLibrary": {
			reason: "A real ELF whose shared library is not in the image: the loader itself refuses it.",
			flux:   elfWithoutItsLibrary,
			want:   want{exit: ViewDoesNotFitExitCode, terminated: "error while loading shared libraries: libviewonly.so"},
		},
		"OtherFailure": {
			reason:  "Any other failure of flux version is not the loader's: the runner goes on, as before.",
			version: "echo 'flux-version: something else' >&2; exit 1",
			want:    want{started: true},
		},
		"Disabled": {
			reason:  "Without a view there is nothing to check: the image's own Flux starts.",
			version: "echo 'flux: error while loading shared libraries: libsodium.so.23' >&2; exit 127",
			disable: true,
			want:    want{started: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			sb := newSandbox(t)
			if tc.flux != nil {
				_ = tc.flux(t, sb.bin)
			} else {
				fake := filepath.Join(sb.bin, "flux-fake")
				if err := os.Rename(filepath.Join(sb.bin, "flux"), fake); err != nil {
					t.Fatal(err)
				}
				mustWrite(t, filepath.Join(sb.bin, "flux"), "#!/bin/bash\nif [ \"$*\" = version ]; then "+tc.version+"; fi\nexec "+fake+" \"$@\"\n", 0o755)
			}
			mc := claim(4, "hostname", func(mc *v1alpha2.MiniCluster) {
				mc.Spec.Logging.Strict = tc.strict
				mc.Spec.Flux.Container.Disable = tc.disable
			})
			sb.use(mc)
			r := sb.run(t, runner(t, mc, sb.paths), "flux-sample-1", viewFitEnv)
			got := want{exit: r.exit, started: exists(filepath.Join(sb.log, "start-0"))}
			term := readFile(t, sb.paths.TerminationLog)
			if tc.want.terminated != "" && strings.Contains(term, tc.want.terminated) {
				got.terminated = tc.want.terminated
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s\ntermination message: %q\nstderr:\n%s", tc.reason, diff, term, r.stderr)
			}
			if tc.want.terminated != "" {
				for _, fix := range []string{"set spec.flux.container.image to a view built for the application image's OS"} {
					if !strings.Contains(term, fix) {
						t.Errorf("%s\nthe termination message does not say the fix %q: %q", tc.reason, fix, term)
					}
				}
				if len(term) > 4096 {
					t.Errorf("%s\nthe termination message has %d bytes, over the kubelet's 4096", tc.reason, len(term))
				}
			}
		})
	}
}

// elfWithoutItsLibrary builds a real flux (an ELF linked to a shared
// library of its own) and removes the library, as an image without a
// library the view expects from it.
func elfWithoutItsLibrary(t *testing.T, dir string) string {
	t.Helper()
	cc := tool(t, "cc", "MC_CC")
	src := t.TempDir()
	mustWrite(t, filepath.Join(src, "lib.c"), "int viewonly(void) { return 0; }\n", 0o644)
	mustWrite(t, filepath.Join(src, "main.c"), "int viewonly(void);\nint main(void) { return viewonly(); }\n", 0o644)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, args := range [][]string{
		{"-shared", "-fPIC", "-o", filepath.Join(src, "libviewonly.so"), filepath.Join(src, "lib.c")},
		{"-o", filepath.Join(dir, "flux"), filepath.Join(src, "main.c"), "-L" + src, "-lviewonly"},
	} {
		if out, err := exec.CommandContext(ctx, cc, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v\n%s", cc, args, err, out)
		}
	}
	if err := os.Remove(filepath.Join(src, "libviewonly.so")); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "flux")
}
