package entrypoint

// The lead broker's runner, observed under bash with a fake flux (see
// sandbox_test.go), in submit and launcher mode, timed or not.

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// TestRunnerLead: the lead broker's runner in submit and launcher mode
// (reference §3.3 lead): flux start with the job as its initial program,
// shaped by tasks, optionFlags, submitCommand, prefix and wrap.
func TestRunnerLead(t *testing.T) {
	t.Parallel()
	onlyJobOutput := "FAKE-FLUX-OUTPUT\n"
	runCases(t, map[string]runCase{
		"HelloWorldLead": {
			reason:  "Reference §5 hello-world (size 4, quiet): the lead encodes R, then starts the broker with flux submit -n1 as initial program; only the job output is printed.",
			command: "echo hello world",
			mutate:  quiet,
			want: func(mp string) [][]string {
				return [][]string{encode(), start(mp, quietOpts(), nil, submit(hello...)...)}
			},
			stdout: &onlyJobOutput,
			check: func(t *testing.T, sb *sandbox, r result) {
				t.Helper()
				cert := filepath.Join(sb.mp, "config/curve/curve.cert")
				if st, err := os.Stat(cert); err != nil || st.Mode().Perm() != 0o600 {
					t.Errorf("the certificate must be installed at %s with mode 0600: %v %v", cert, st, err)
				}
				if got := readFile(t, filepath.Join(sb.mp, "config/etc/flux/system/R")); !strings.Contains(got, `"R_lite"`) {
					t.Errorf("R must hold flux R encode's output, got %q", got)
				}
				for _, f := range []string{filepath.Join(sb.mp, "flux-operator-complete.txt"), filepath.Join(sb.paths.Software, "bin/tool"),
					filepath.Join(sb.mp, "flux-connect.sh"), filepath.Join(sb.mp, "load-fluxion.sh"), filepath.Join(sb.mp, "config/var/lib/flux"),
					filepath.Join(sb.mp, "config/etc/flux/system/cron.d"), "/tmp/fluxout"} {
					if !exists(f) {
						t.Errorf("%s was not created", f)
					}
				}
				env := r.envs[1]
				if want := ":" + sb.mp + "/view/bin"; !strings.HasSuffix(env["PATH"], want) {
					t.Errorf("PATH must end with the view's bin (image binaries win): %q", env["PATH"])
				}
				if got, want := env["FLUX_RC_EXTRA"], sb.mp+"/view/etc/flux"; got != want {
					t.Errorf("FLUX_RC_EXTRA = %q, want %q: the directory Flux searches for rc1.d (fluxion loads by default)", got, want)
				}
				if got, want := env["FLUX_OUTPUT_DIR"], v1alpha2.DefaultLogsDir; got != want {
					t.Errorf("FLUX_OUTPUT_DIR = %q, want %q", got, want)
				}
			},
		},
		"SubmitCommand": {
			reason:  "spec.flux.submitCommand replaces flux submit.",
			command: "echo hello world",
			mutate:  func(mc *v1alpha2.MiniCluster, _ *sandbox) { mc.Spec.Flux.SubmitCommand = "flux mini submit" },
			want: func(mp string) [][]string {
				return [][]string{encode(), start(mp, std(), nil, cat(words("flux", "mini", "submit", "-n1", "--quiet", "--watch"), hello)...)}
			},
		},
		"OptionFlags": {
			reason:  "optionFlags are split into words after the node spec.",
			command: "echo hello world",
			mutate:  func(mc *v1alpha2.MiniCluster, _ *sandbox) { mc.Spec.Flux.OptionFlags = "-ompi=openmpi@5 -c 1" },
			want: func(mp string) [][]string {
				return [][]string{encode(), start(mp, std(), nil, cat(words("flux", "submit", "-n1", "-ompi=openmpi@5", "-c", "1", "--quiet", "--watch"), hello)...)}
			},
		},
		"Debug": {
			reason:  "logging.debug appends -vvv after optionFlags.",
			command: "echo hello world",
			mutate: func(mc *v1alpha2.MiniCluster, _ *sandbox) {
				mc.Spec.Logging.Debug = true
				mc.Spec.Flux.OptionFlags = "-c 2"
			},
			want: func(mp string) [][]string {
				return [][]string{encode(), start(mp, std(), nil, cat(words("flux", "submit", "-n1", "-c", "2", "-vvv", "--quiet", "--watch"), hello)...)}
			},
		},
		"TasksZero": {
			reason:  "tasks: 0 gives -N <size> alone.",
			command: "echo hello world",
			mutate:  func(mc *v1alpha2.MiniCluster, _ *sandbox) { mc.Spec.Tasks = ptrTo(int32(0)) },
			want: func(mp string) [][]string {
				return [][]string{encode(), start(mp, std(), nil, cat(words("flux", "submit", "-N", "4", "--quiet", "--watch"), hello)...)}
			},
		},
		"TasksEqualSize": {
			reason:  "tasks == size gives -N <size> -n<tasks> (hello world printed 4 times).",
			command: "echo hello world",
			mutate:  func(mc *v1alpha2.MiniCluster, _ *sandbox) { mc.Spec.Tasks = ptrTo(int32(4)) },
			want: func(mp string) [][]string {
				return [][]string{encode(), start(mp, std(), nil, cat(words("flux", "submit", "-N", "4", "-n4", "--quiet", "--watch"), hello)...)}
			},
		},
		"TasksMoreThanSize": {
			reason:  "tasks > size gives -N <size> -n<tasks>.",
			command: "echo hello world",
			mutate:  func(mc *v1alpha2.MiniCluster, _ *sandbox) { mc.Spec.Tasks = ptrTo(int32(8)) },
			want: func(mp string) [][]string {
				return [][]string{encode(), start(mp, std(), nil, cat(words("flux", "submit", "-N", "4", "-n8", "--quiet", "--watch"), hello)...)}
			},
		},
		"TasksLessThanSize": {
			reason:  "tasks < size gives -n<tasks> alone.",
			command: "echo hello world",
			mutate:  func(mc *v1alpha2.MiniCluster, _ *sandbox) { mc.Spec.Tasks = ptrTo(int32(2)) },
			want: func(mp string) [][]string {
				return [][]string{encode(), start(mp, std(), nil, cat(words("flux", "submit", "-n2", "--quiet", "--watch"), hello)...)}
			},
		},
		"SizeOneDefaultTasks": {
			reason:  "The default tasks: 1 on size 1 gives -N 1 -n1.",
			size:    1,
			command: "echo hello world",
			want: func(mp string) [][]string {
				return [][]string{encode(), start(mp, std(), nil, cat(words("flux", "submit", "-N", "1", "-n1", "--quiet", "--watch"), hello)...)}
			},
		},
		"Launcher": {
			reason:  "Launcher mode: the command itself is the initial program.",
			command: "echo hello world",
			mutate:  func(mc *v1alpha2.MiniCluster, _ *sandbox) { mc.Spec.Containers[0].Launcher = true },
			want: func(mp string) [][]string {
				return [][]string{encode(), start(mp, std(), nil, hello...)}
			},
		},
		"CommandsScript": {
			reason:  "commands.script is written verbatim to /tmp/custom-entrypoint.sh and becomes the command.",
			command: "echo ignored",
			mutate: func(mc *v1alpha2.MiniCluster, _ *sandbox) {
				mc.Spec.Containers[0].Commands.Script = "#!/bin/bash\necho \"$HOME\" 'it''s' `id -u` \\$x\n"
			},
			want: func(mp string) [][]string {
				return [][]string{encode(), start(mp, std(), nil, submit("/bin/bash", "/tmp/custom-entrypoint.sh")...)}
			},
			check: func(t *testing.T, _ *sandbox, _ result) {
				t.Helper()
				if diff := cmp.Diff("#!/bin/bash\necho \"$HOME\" 'it''s' `id -u` \\$x\n", readFile(t, "/tmp/custom-entrypoint.sh")); diff != "" {
					t.Errorf("custom script: -want, +got:\n%s", diff)
				}
			},
		},
		"Prefix": {
			reason:  "commands.prefix goes before the initial program.",
			command: "echo hello world",
			mutate: func(mc *v1alpha2.MiniCluster, _ *sandbox) {
				mc.Spec.Containers[0].Commands.Prefix = "mpirun --allow-run-as-root"
			},
			want: func(mp string) [][]string {
				return [][]string{encode(), start(mp, std(), nil, cat(words("mpirun", "--allow-run-as-root"), submit(hello...))...)}
			},
		},
		"Wrap": {
			reason:  "flux.wrap becomes flux start --wrap=<wrap> on the lead.",
			command: "echo hello world",
			mutate:  func(mc *v1alpha2.MiniCluster, _ *sandbox) { mc.Spec.Flux.Wrap = "strace,-e,trace=execve" },
			want: func(mp string) [][]string {
				return [][]string{encode(), start(mp, std(), words("--wrap=strace,-e,trace=execve"), submit(hello...)...)}
			},
		},
		"StrictHappyPath": {
			reason:  "strict mode (set -eEu -o pipefail) runs every mode's setup without tripping, here with archive missing and no python in the view.",
			command: "echo hello world",
			mutate: func(mc *v1alpha2.MiniCluster, sb *sandbox) {
				mc.Spec.Logging.Strict = true
				mc.Spec.Archive.Path = filepath.Join(sb.root, "missing.tar")
				mc.Spec.Flux.Environment = map[string]string{"X": "y"}
			},
			want: func(mp string) [][]string {
				return [][]string{encode(), start(mp, std(), nil, cat(words("-Scontent.dump="+filepath.Join(filepath.Dir(mp), "missing.tar")), submit(hello...))...)}
			},
		},
	})
}

// TestRunnerTimed checks logging.timed: /usr/bin/time wraps the lead's flux
// start and the initial program. /usr/bin/time is a fixed absolute path: the
// failure without it is tested by relocating that path in the script text
// to one that does not exist; the real run needs /usr/bin/time installed.
func TestRunnerTimed(t *testing.T) {
	timed := func(mc *v1alpha2.MiniCluster, _ *sandbox) { mc.Spec.Logging.Timed = true }

	t.Run("Missing", func(t *testing.T) {
		sb := newSandbox(t)
		mc := claim(4, "echo hello world", func(mc *v1alpha2.MiniCluster) { sb.use(mc); timed(mc, sb) })
		script := runner(t, mc, sb.paths)
		if !strings.Contains(script, "/usr/bin/time") {
			t.Fatalf("a timed runner must use /usr/bin/time")
		}
		missing := filepath.Join(sb.root, "no/usr/bin/time")
		r := sb.run(t, strings.ReplaceAll(script, "/usr/bin/time", missing), leadHost, nil)
		if r.exit != JobFailedExitCode || !strings.Contains(r.stderr, missing) || len(r.calls) != 0 {
			t.Errorf("logging.timed without /usr/bin/time must fail the MiniCluster at once (exit %d) with a message naming it: exit %d, flux calls %q, stderr:\n%s", JobFailedExitCode, r.exit, r.calls, r.stderr)
		}
		if msg := readFile(t, sb.paths.TerminationLog); !strings.Contains(msg, missing) {
			t.Errorf("the termination message must name %s: %q", missing, msg)
		}
	})

	t.Run("InstalledByInit", func(t *testing.T) {
		sb := newSandbox(t)
		mc := claim(4, "echo hello world", func(mc *v1alpha2.MiniCluster) {
			sb.use(mc)
			timed(mc, sb)
			// What the timed example does: install time in commands.init.
			// This fake drops -f FORMAT and runs the rest.
			mc.Spec.Containers[0].Commands.Init = `mkdir -p "$(dirname /usr/bin/time)" && printf '#!/bin/sh\nshift 2\nexec "$@"\n' > /usr/bin/time && chmod +x /usr/bin/time`
		})
		fake := filepath.Join(sb.root, "installed/usr/bin/time")
		r := sb.run(t, strings.ReplaceAll(runner(t, mc, sb.paths), "/usr/bin/time", fake), leadHost, nil)
		if r.exit != 0 {
			t.Fatalf("logging.timed must accept a /usr/bin/time that commands.init installs: exit %d\nstderr:\n%s", r.exit, r.stderr)
		}
		want := [][]string{encode(), start(sb.mp, std(), nil, cat(words(fake, "-f", "FLUXTIME fluxsubmit wall time %E"), submit(hello...))...)}
		if diff := cmp.Diff(want, r.calls); diff != "" {
			t.Errorf("flux calls: -want, +got:\n%s", diff)
		}
	})

	if st, err := os.Stat("/usr/bin/time"); err != nil || st.Mode()&0o111 == 0 {
		t.Skip("/usr/bin/time is not installed: the timed run cannot be tested")
	}
	t.Run("Lead", func(t *testing.T) {
		runRunner(t, runCase{
			reason:  "logging.timed: /usr/bin/time -f 'FLUXTIME fluxstart wall time %E' runs flux start, and the initial program is timed too.",
			command: "echo hello world",
			mutate:  timed,
			want: func(mp string) [][]string {
				return [][]string{encode(), start(mp, std(), nil, cat(words("/usr/bin/time", "-f", "FLUXTIME fluxsubmit wall time %E"), submit(hello...))...)}
			},
			check: func(t *testing.T, _ *sandbox, r result) {
				t.Helper()
				if !regexp.MustCompile(`(?m)^FLUXTIME fluxstart wall time \d+:\d+\.\d+$`).MatchString(r.stderr) {
					t.Errorf("stderr must carry the lead's wall time:\n%s", r.stderr)
				}
			},
		})
	})
	t.Run("Launcher", func(t *testing.T) {
		runRunner(t, runCase{
			reason:  "In launcher mode the command itself is timed.",
			command: "echo hello world",
			mutate: func(mc *v1alpha2.MiniCluster, sb *sandbox) {
				timed(mc, sb)
				mc.Spec.Containers[0].Launcher = true
			},
			want: func(mp string) [][]string {
				return [][]string{encode(), start(mp, std(), nil, cat(words("/usr/bin/time", "-f", "FLUXTIME fluxsubmit wall time %E"), hello)...)}
			},
		})
	})
	t.Run("Worker", func(t *testing.T) {
		runRunner(t, runCase{
			reason:  "Workers are not timed.",
			command: "echo hello world",
			mutate:  timed,
			host:    workHost,
			want: func(mp string) [][]string {
				return [][]string{encode(), start(mp, std(), nil)}
			},
		})
	})
}
