package entrypoint

// A runner that is not root (Valid=True must mean it runs for any uid): the
// init container, usually root, prepares the view volume, and the runner,
// as another user whose uid the scripts cannot know, must still install
// everything Flux checks. The sandbox is laid out as a pod's volumes are:
// emptyDirs world-writable, the ConfigMap and the Secret read-only for
// others, and a working directory the runner cannot write.

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// nobody is the unprivileged user the runner runs as.
const nobody = 65534

// fluxChecks is what the fake flux start asserts as the runner's user,
// where the real broker would fail: the certificate only its owner can
// read, R written, and a rundir and statedir it owns and can write.
const fluxChecks = `set -u
fail() { echo "FLUX-CHECK: $*" >&2; exit 97; }
c="${CHECK_MP:?}/config"
cert="${c}/curve/curve.cert"
[ -O "${cert}" ] || fail "the certificate is not the instance owner's"
[ "$(stat -c %a "${cert}")" = 600 ] || fail "the certificate has mode $(stat -c %a "${cert}"), Flux wants 600"
head -c1 "${cert}" > /dev/null || fail "the certificate is not readable"
[ -s "${c}/etc/flux/system/R" ] || fail "R is empty"
for d in "${c}/run/flux" "${c}/var/lib/flux"; do
  [ -d "${d}" ] && [ -O "${d}" ] || fail "${d} is not owned by the instance owner"
  : > "${d}/probe" || fail "${d} is not writable"
done
echo FLUX-CHECKS-PASSED
`

func TestNonRootRunner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("running scripts as other users needs root")
	}
	cases := map[string]struct {
		reason    string
		initUID   uint32
		runnerUID uint32
		host      string
		mutate    func(mc *v1alpha2.MiniCluster)
		runs      int // of the runner, as a restarted container would; 1 unless set
	}{
		"Lead": {
			reason:    "A root init container and a lead runner as nobody (securityContext.runAsUser, or the image's USER).",
			runnerUID: nobody,
			host:      leadHost,
		},
		"Worker": {
			reason:    "The same for a follower.",
			runnerUID: nobody,
			host:      workHost,
		},
		"Root": {
			reason: "A root runner keeps working.",
			host:   leadHost,
		},
		"SameUserEverywhere": {
			reason:    "pod.securityContext.runAsUser runs the init container as that user too.",
			initUID:   nobody,
			runnerUID: nobody,
			host:      leadHost,
		},
		"StrictBatch": {
			reason:    "Strict mode trips on nothing as nobody, and batch mode writes its script although the working directory is not writable.",
			runnerUID: nobody,
			host:      leadHost,
			mutate: func(mc *v1alpha2.MiniCluster) {
				mc.Spec.Logging.Strict = true
				mc.Spec.Containers[0].Batch = true
			},
		},
		"Restarted": {
			reason:    "A restarted runner container finds its own files of the first run and starts again.",
			runnerUID: nobody,
			host:      leadHost,
			mutate:    func(mc *v1alpha2.MiniCluster) { mc.Spec.Logging.Strict = true },
			runs:      2,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			sb := newSandbox(t)
			podVolumes(t, sb)
			mc := claim(4, "echo hello world", func(mc *v1alpha2.MiniCluster) {
				sb.use(mc)
				mc.Spec.Containers[0].Logs = filepath.Join(sb.root, "tmp/fluxout")
				if tc.mutate != nil {
					tc.mutate(mc)
				}
			})

			// This machine has no /opt/view: the init container runs as
			// with flux.container.disable, and the view's software tree is
			// put where it would have copied it.
			initMC := mc.DeepCopy()
			initMC.Spec.Flux.Container.Disable = true
			sb.cred = &syscall.Credential{Uid: tc.initUID, Gid: tc.initUID}
			if r := sb.run(t, Init(initMC, plan(t, initMC, sb.paths)), tc.host, nil); r.exit != 0 {
				t.Fatalf("%s\ninit script: exit %d\n%s", tc.reason, r.exit, r.stderr)
			}
			mustMkdir(t, filepath.Join(sb.mp, "software/bin"))
			mustWrite(t, filepath.Join(sb.mp, "software/bin/tool"), "spack", 0o755)

			script := runner(t, mc, sb.paths)
			sb.cred = &syscall.Credential{Uid: tc.runnerUID, Gid: tc.runnerUID}
			runs := max(tc.runs, 1)
			for n := 0; n < runs; n++ {
				sb.reset(t)
				mustChmod(t, sb.log, 0o777)
				r := sb.run(t, script, tc.host, map[string]string{
					"HOME":            "/", // a uid without a passwd entry
					"FAKE_FLUX_CHECK": filepath.Join(sb.root, "flux-checks.sh"),
					"CHECK_MP":        sb.mp,
				})
				if r.exit != 0 {
					t.Fatalf("%s\nrun %d of the runner as uid %d: exit %d\nstdout:\n%s\nstderr:\n%s", tc.reason, n+1, tc.runnerUID, r.exit, r.stdout, r.stderr)
				}
				if len(r.calls) < 2 || r.calls[1][0] != "start" || !strings.Contains(r.stdout, "FLUX-CHECKS-PASSED") {
					t.Fatalf("%s\nthe runner did not start flux, checked: %q\nstdout:\n%s\nstderr:\n%s", tc.reason, r.calls, r.stdout, r.stderr)
				}
			}

			// What the broker needs, seen from outside.
			for file, want := range map[string]os.FileMode{
				"config/curve/curve.cert":    0o600,
				"config/etc/flux/system/R":   0o644,
				"config/run/flux":            os.ModeDir | 0o755,
				"config/var/lib/flux":        os.ModeDir | 0o700,
				"flux-view.sh":               0o644,
				"flux-operator-complete.txt": 0o644,
			} {
				st, err := os.Stat(filepath.Join(sb.mp, file))
				if err != nil {
					t.Errorf("%s\n%s: %v", tc.reason, file, err)
					continue
				}
				if uid := st.Sys().(*syscall.Stat_t).Uid; uid != tc.runnerUID {
					t.Errorf("%s\n%s is owned by uid %d, want the runner's %d", tc.reason, file, uid, tc.runnerUID)
				}
				if st.Mode() != want {
					t.Errorf("%s\n%s has mode %v, want %v", tc.reason, file, st.Mode(), want)
				}
			}
			if !exists(filepath.Join(sb.paths.Software, "bin/tool")) {
				t.Errorf("%s\nthe view's software was not copied", tc.reason)
			}
		})
	}
}

// podVolumes gives the sandbox a pod's permissions: its directories
// searchable by anyone, the view volume, software, home and /tmp empty and
// world-writable (emptyDir), the certificate read-only (Secret, 0444), and
// a working directory only root can write.
func podVolumes(t *testing.T, sb *sandbox) {
	t.Helper()
	// t.TempDir's parent is private to root.
	mustChmod(t, filepath.Dir(sb.root), 0o755)
	mustChmod(t, sb.root, 0o755)
	if err := os.RemoveAll(sb.mp); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{sb.mp, sb.paths.Software, sb.paths.Home, sb.log} {
		mustMkdir(t, d)
		mustChmod(t, d, 0o777)
	}
	mustMkdir(t, filepath.Join(sb.root, "tmp"))
	mustChmod(t, filepath.Join(sb.root, "tmp"), os.ModeSticky|0o777)
	mustChmod(t, filepath.Join(sb.paths.Curve, CurveFile), 0o444)
	mustWrite(t, filepath.Join(sb.paths.Entrypoints, HostlistKey), "flux-sample-[0-3]", 0o644)
	mustWrite(t, filepath.Join(sb.paths.Entrypoints, BrokerConfigKey), "[bootstrap]\n", 0o644)
	mustWrite(t, filepath.Join(sb.root, "flux-checks.sh"), fluxChecks, 0o644)
}

func mustChmod(t *testing.T, p string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}
