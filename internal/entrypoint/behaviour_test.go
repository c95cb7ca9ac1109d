package entrypoint

// Behaviour of the runner script (reference §3.1-§3.5), observed by running
// it under bash with a fake flux that records every call.

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/shell"
)

// submit is the default submit-mode initial program for tasks 1 on size > 1.
func submit(command ...string) []string {
	return cat(words("flux", "submit", "-n1", "--quiet", "--watch"), command)
}

var hello = words("echo", "hello", "world")

// batchProgram is the lead's initial program in batch mode: flux batch with
// flags runs <mp>/flux-job.batch.
func batchProgram(mp, flags string) string {
	return "flux batch " + flags + " --flags waitable " + shell.Quote(mp+"/flux-job.batch") + " && flux job wait --all"
}

// sourceView sources <mp>/flux-view.sh in a clean bash and returns the
// values of vars afterwards.
func sourceView(t *testing.T, sb *sandbox, vars ...string) map[string]string {
	t.Helper()
	sb.reset(t)
	script := `. "$1"; shift; for v in "$@"; do printf '%s=%s\0' "$v" "${!v-<unset>}"; done`
	r := sb.run(t, "set -u\nset -- "+shellWords(filepath.Join(sb.mp, "flux-view.sh"))+" "+shellWords(vars...)+"\n"+script, leadHost, nil)
	if r.exit != 0 {
		t.Fatalf("sourcing flux-view.sh failed (%d):\n%s\n%s", r.exit, r.stderr, readFile(t, filepath.Join(sb.mp, "flux-view.sh")))
	}
	out := map[string]string{}
	for _, kv := range splitNUL(r.stdout) {
		k, v, _ := strings.Cut(kv, "=")
		out[k] = v
	}
	return out
}

func shellWords(w ...string) string {
	q := make([]string, len(w))
	for i, s := range w {
		q[i] = "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

type runCase struct {
	reason   string
	size     int32 // 4 unless set
	command  string
	mutate   func(mc *v1alpha2.MiniCluster, sb *sandbox)
	host     string // lead unless set
	fluxRC   string // exit codes of successive flux start/broker calls
	env      map[string]string
	want     func(mp string) [][]string // argv of every flux call, in order
	wantExit int
	stdout   *string  // exact stdout, when set
	contains []string // in stdout
	absent   []string // not in stdout
	check    func(t *testing.T, sb *sandbox, r result)
}

func runRunner(t *testing.T, tc runCase) {
	t.Helper()
	sb := newSandbox(t)
	size := tc.size
	if size == 0 {
		size = 4
	}
	mc := claim(size, tc.command, func(mc *v1alpha2.MiniCluster) {
		sb.use(mc)
		if tc.mutate != nil {
			tc.mutate(mc, sb)
		}
	})
	script := runner(t, mc, sb.paths)
	host := tc.host
	if host == "" {
		host = leadHost
	}
	env := map[string]string{"FAKE_FLUX_RC": tc.fluxRC}
	for k, v := range tc.env {
		env[k] = v
	}
	r := sb.run(t, script, host, env)
	if r.exit != tc.wantExit {
		t.Errorf("%s\nexit code = %d, want %d\nstdout:\n%s\nstderr:\n%s", tc.reason, r.exit, tc.wantExit, r.stdout, r.stderr)
	}
	if tc.want != nil {
		if diff := cmp.Diff(tc.want(sb.mp), r.calls); diff != "" {
			t.Errorf("%s\nflux calls: -want, +got:\n%s\nstderr:\n%s", tc.reason, diff, r.stderr)
		}
	}
	if tc.stdout != nil {
		if diff := cmp.Diff(*tc.stdout, r.stdout); diff != "" {
			t.Errorf("%s\nstdout: -want, +got:\n%s", tc.reason, diff)
		}
	}
	for _, s := range tc.contains {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("%s\nstdout does not contain %q:\n%s", tc.reason, s, r.stdout)
		}
	}
	for _, s := range tc.absent {
		if strings.Contains(r.stdout, s) {
			t.Errorf("%s\nstdout contains %q:\n%s", tc.reason, s, r.stdout)
		}
	}
	if tc.check != nil {
		tc.check(t, sb, r)
	}
}

func TestRunnerLeadAndWorker(t *testing.T) {
	t.Parallel()
	quiet := func(mc *v1alpha2.MiniCluster, _ *sandbox) { mc.Spec.Logging.Quiet = true }
	onlyJobOutput := "FAKE-FLUX-OUTPUT\n"
	hooks := func(q bool) func(mc *v1alpha2.MiniCluster, _ *sandbox) {
		return func(mc *v1alpha2.MiniCluster, _ *sandbox) {
			mc.Spec.Logging.Quiet = q
			c := &mc.Spec.Containers[0].Commands
			c.Init = `echo init >> "$EVENTS"; echo INIT-HOOK-OUT`
			c.Pre = "export FOO=bar\necho pre >> \"$EVENTS\"\necho PRE-HOOK-OUT"
			c.BrokerPre = `echo brokerPre >> "$EVENTS"; echo BROKERPRE-HOOK-OUT`
			c.WorkerPre = `echo workerPre >> "$EVENTS"; echo WORKERPRE-HOOK-OUT`
			c.Post = `echo post >> "$EVENTS"; echo POST-HOOK-OUT`
		}
	}
	batchCheck := func(wantFile string, wantJobs func(logs string) [][]string) func(t *testing.T, sb *sandbox, r result) {
		return func(t *testing.T, sb *sandbox, r result) {
			t.Helper()
			file := filepath.Join(sb.mp, "flux-job.batch")
			if diff := cmp.Diff(wantFile, readFile(t, file)); diff != "" {
				t.Errorf("flux-job.batch: -want, +got:\n%s", diff)
			}
			if st, err := os.Stat(file); err != nil || st.Mode()&0o100 == 0 {
				t.Errorf("flux-job.batch is not executable: %v", err)
			}
			if wantJobs == nil {
				return
			}
			// What flux batch would run inside the instance.
			logs := r.envs[len(r.envs)-1]["FLUX_OUTPUT_DIR"]
			sb.reset(t)
			got := sb.run(t, readFile(t, file), leadHost, map[string]string{"FLUX_OUTPUT_DIR": logs})
			if diff := cmp.Diff(wantJobs(logs), got.calls); diff != "" {
				t.Errorf("flux calls of flux-job.batch: -want, +got:\n%s", diff)
			}
		}
	}

	cases := map[string]runCase{
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
		"HelloWorldWorker": {
			reason:  "A worker starts the same broker without an initial program and retries after a failure, sleeping 15s.",
			command: "echo hello world",
			mutate:  quiet,
			host:    workHost,
			fluxRC:  "1 0",
			want: func(mp string) [][]string {
				return [][]string{encode(), start(mp, quietOpts(), nil), start(mp, quietOpts(), nil)}
			},
			contains: []string{"Goodbye"},
			check: func(t *testing.T, _ *sandbox, r result) {
				t.Helper()
				if diff := cmp.Diff([]string{"15"}, r.sleeps); diff != "" {
					t.Errorf("the worker must sleep 15s once between its two brokers: -want, +got:\n%s", diff)
				}
			},
		},
		"WorkerRetriesUntilClean": {
			reason:  "Without completeWorkers a worker restarts its broker until it exits 0.",
			command: "echo hello world",
			host:    workHost,
			fluxRC:  "2 143 0",
			want: func(mp string) [][]string {
				return [][]string{encode(), start(mp, std(), nil), start(mp, std(), nil), start(mp, std(), nil)}
			},
			check: func(t *testing.T, _ *sandbox, r result) {
				t.Helper()
				if diff := cmp.Diff([]string{"15", "15"}, r.sleeps); diff != "" {
					t.Errorf("sleeps: -want, +got:\n%s", diff)
				}
			},
		},
		"WorkerCompleteWorkers": {
			reason:  "With completeWorkers a worker is done after its broker's first exit, whatever the code.",
			command: "echo hello world",
			mutate:  func(mc *v1alpha2.MiniCluster, _ *sandbox) { mc.Spec.Flux.CompleteWorkers = true },
			host:    workHost,
			fluxRC:  "3",
			want: func(mp string) [][]string {
				return [][]string{encode(), start(mp, std(), nil)}
			},
			check: func(t *testing.T, _ *sandbox, r result) {
				t.Helper()
				if len(r.sleeps) != 0 {
					t.Errorf("a completed worker must not sleep: %q", r.sleeps)
				}
			},
		},
		"WorkerIgnoresLeadOptions": {
			reason:  "Workers run no wrap, prefix or initial program (reference §3.3 workers 3), in every mode.",
			command: "echo hello world",
			mutate: func(mc *v1alpha2.MiniCluster, _ *sandbox) {
				mc.Spec.Flux.Wrap = "strace,-f"
				mc.Spec.Containers[0].Commands.Prefix = "mpirun -x"
				mc.Spec.Containers[0].Launcher = true
			},
			host: workHost,
			want: func(mp string) [][]string {
				return [][]string{encode(), start(mp, std(), nil)}
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
		"Batch": {
			reason:  "Batch mode: each non-empty line becomes a flux submit of flux-job.batch (indices count empty lines), run by flux batch as the initial program.",
			command: "echo one\n\necho two",
			mutate:  func(mc *v1alpha2.MiniCluster, _ *sandbox) { mc.Spec.Containers[0].Batch = true },
			want: func(mp string) [][]string {
				return [][]string{encode(), start(mp, std(), nil, "sh", "-c", batchProgram(mp, "-n1"))}
			},
			contains: []string{"FAKE-FLUX-OUTPUT"},
			check: batchCheck(
				"#!/bin/bash\n"+
					"flux submit --flags waitable --error=\"${FLUX_OUTPUT_DIR}/job-0.err\" --output=\"${FLUX_OUTPUT_DIR}/job-0.out\" echo one\n"+
					"flux submit --flags waitable --error=\"${FLUX_OUTPUT_DIR}/job-2.err\" --output=\"${FLUX_OUTPUT_DIR}/job-2.out\" echo two\n"+
					"flux queue idle\nflux jobs -a\n# The batch job fails, and with it the MiniCluster, when one of its jobs did.\nflux job wait --all\n",
				func(logs string) [][]string {
					return [][]string{submitLine(logs, "0", "echo", "one"), submitLine(logs, "2", "echo", "two"), {"queue", "idle"}, {"jobs", "-a"}, {"job", "wait", "--all"}}
				}),
		},
		"BatchFlags": {
			reason:  "flux batch gets the node/task flags, optionFlags and -vvv.",
			command: "echo one",
			mutate: func(mc *v1alpha2.MiniCluster, _ *sandbox) {
				mc.Spec.Containers[0].Batch = true
				mc.Spec.Tasks = ptrTo(int32(4))
				mc.Spec.Flux.OptionFlags = "-c 1"
				mc.Spec.Logging.Debug = true
			},
			want: func(mp string) [][]string {
				return [][]string{encode(), start(mp, std(), nil, "sh", "-c", batchProgram(mp, "-N 4 -n4 -c 1 -vvv"))}
			},
		},
		"BatchQuiet": {
			reason:  "Quiet batch mode hides the batch output.",
			command: "echo one",
			mutate: func(mc *v1alpha2.MiniCluster, _ *sandbox) {
				mc.Spec.Containers[0].Batch = true
				mc.Spec.Logging.Quiet = true
			},
			want: func(mp string) [][]string {
				return [][]string{encode(), start(mp, quietOpts(), nil, "sh", "-c", batchProgram(mp, "-n1"))}
			},
			absent: []string{"FAKE-FLUX-OUTPUT"},
		},
		"BatchRaw": {
			reason:  "batchRaw writes the command verbatim, blank lines included, without queue idle / jobs.",
			command: "flux submit -N1 hostname\n\n  \nflux queue idle",
			mutate: func(mc *v1alpha2.MiniCluster, _ *sandbox) {
				mc.Spec.Containers[0].Batch = true
				mc.Spec.Containers[0].BatchRaw = true
			},
			want: func(mp string) [][]string {
				return [][]string{encode(), start(mp, std(), nil, "sh", "-c", batchProgram(mp, "-n1"))}
			},
			check: batchCheck("#!/bin/bash\nflux submit -N1 hostname\n\n  \nflux queue idle\n", func(string) [][]string {
				return [][]string{{"submit", "-N1", "hostname"}, {"queue", "idle"}}
			}),
		},
		"LogsDir": {
			reason:  "container.logs is FLUX_OUTPUT_DIR, created, and where batch jobs write, even with a space in it.",
			command: "echo one",
			mutate: func(mc *v1alpha2.MiniCluster, sb *sandbox) {
				mc.Spec.Containers[0].Batch = true
				mc.Spec.Containers[0].Logs = filepath.Join(sb.root, "job logs")
			},
			check: func(t *testing.T, sb *sandbox, r result) {
				t.Helper()
				logs := filepath.Join(sb.root, "job logs")
				if got := r.envs[1]["FLUX_OUTPUT_DIR"]; got != logs {
					t.Errorf("FLUX_OUTPUT_DIR = %q, want %q", got, logs)
				}
				if !exists(logs) {
					t.Errorf("%s was not created", logs)
				}
				batchCheck("#!/bin/bash\n"+
					"flux submit --flags waitable --error=\"${FLUX_OUTPUT_DIR}/job-0.err\" --output=\"${FLUX_OUTPUT_DIR}/job-0.out\" echo one\n"+
					"flux queue idle\nflux jobs -a\n# The batch job fails, and with it the MiniCluster, when one of its jobs did.\nflux job wait --all\n",
					func(logs string) [][]string {
						return [][]string{submitLine(logs, "0", "echo", "one"), {"queue", "idle"}, {"jobs", "-a"}, {"job", "wait", "--all"}}
					})(t, sb, r)
			},
		},
		"InteractiveNoCommand": {
			reason: "interactive with no command: the lead runs flux broker directly, with rc2_none.",
			mutate: func(mc *v1alpha2.MiniCluster, _ *sandbox) { mc.Spec.Interactive = true },
			want: func(mp string) [][]string {
				o := std()
				o.rc2none = true
				return [][]string{encode(), broker(mp, o)}
			},
			contains: []string{"interactive"},
		},
		"InteractiveWorker": {
			reason: "interactive workers run flux start with rc2_none.",
			mutate: func(mc *v1alpha2.MiniCluster, _ *sandbox) { mc.Spec.Interactive = true },
			host:   workHost,
			want: func(mp string) [][]string {
				o := std()
				o.rc2none = true
				return [][]string{encode(), start(mp, o, nil)}
			},
		},
		"InteractiveWithCommand": {
			reason:  "interactive with a command still passes it, but rc2_none means Flux never runs it (reference §3.3 lead 5).",
			command: "echo hello world",
			mutate:  func(mc *v1alpha2.MiniCluster, _ *sandbox) { mc.Spec.Interactive = true },
			want: func(mp string) [][]string {
				o := std()
				o.rc2none = true
				return [][]string{encode(), start(mp, o, nil, submit(hello...)...)}
			},
		},
		"EmptyCommand": {
			reason:  "No command means a persistent cluster even without interactive.",
			command: "  ",
			mutate:  quiet,
			want: func(mp string) [][]string {
				return [][]string{encode(), broker(mp, quietOpts())}
			},
			absent: []string{"interactive"},
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
		"HooksLeadQuiet": {
			reason:  "Hooks run in order init, pre, brokerPre, flux start, post; pre's exports reach flux; quiet hides hook output but not post's.",
			command: "echo hello world",
			mutate:  hooks(true),
			want: func(mp string) [][]string {
				return [][]string{encode(), start(mp, quietOpts(), nil, submit(hello...)...)}
			},
			contains: []string{"POST-HOOK-OUT", "FAKE-FLUX-OUTPUT"},
			absent:   []string{"INIT-HOOK-OUT", "PRE-HOOK-OUT", "BROKERPRE-HOOK-OUT", "WORKERPRE"},
			check: func(t *testing.T, _ *sandbox, r result) {
				t.Helper()
				if diff := cmp.Diff([]string{"init", "flux R", "pre", "brokerPre", "flux start", "post"}, r.events); diff != "" {
					t.Errorf("order of hooks and flux calls: -want, +got:\n%s", diff)
				}
				if got := r.envs[1]["FOO"]; got != "bar" {
					t.Errorf("commands.pre exported FOO=bar, flux saw FOO=%q", got)
				}
			},
		},
		"HooksWorkerQuiet": {
			reason:  "On a worker workerPre replaces brokerPre.",
			command: "echo hello world",
			mutate:  hooks(true),
			host:    workHost,
			want: func(mp string) [][]string {
				return [][]string{encode(), start(mp, quietOpts(), nil)}
			},
			contains: []string{"POST-HOOK-OUT"},
			absent:   []string{"INIT-HOOK-OUT", "PRE-HOOK-OUT", "WORKERPRE-HOOK-OUT"},
			check: func(t *testing.T, _ *sandbox, r result) {
				t.Helper()
				if diff := cmp.Diff([]string{"init", "flux R", "pre", "workerPre", "flux start", "post"}, r.events); diff != "" {
					t.Errorf("order of hooks and flux calls: -want, +got:\n%s", diff)
				}
				if got := r.envs[1]["FOO"]; got != "bar" {
					t.Errorf("commands.pre exported FOO=bar, flux saw FOO=%q", got)
				}
			},
		},
		"HooksNotQuiet": {
			reason:   "Without quiet the hooks' output shows.",
			command:  "echo hello world",
			mutate:   hooks(false),
			contains: []string{"INIT-HOOK-OUT", "PRE-HOOK-OUT", "BROKERPRE-HOOK-OUT", "POST-HOOK-OUT"},
		},
		"BrokenHook": {
			reason:  "A hook with a syntax error fails alone; the broker still starts.",
			command: "echo hello world",
			mutate:  func(mc *v1alpha2.MiniCluster, _ *sandbox) { mc.Spec.Containers[0].Commands.Pre = `echo "unterminated` },
			want: func(mp string) [][]string {
				return [][]string{encode(), start(mp, std(), nil, submit(hello...)...)}
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
		"NotQuiet": {
			reason:   "Without quiet the runner prints its progress and R; log level 6.",
			command:  "echo hello world",
			contains: []string{"fake", "flux-sample-0", "FAKE-FLUX-OUTPUT"},
			want: func(mp string) [][]string {
				return [][]string{encode(), start(mp, std(), nil, submit(hello...)...)}
			},
		},
		"LogLevel": {
			reason:  "flux.logLevel sets -Slog-stderr-level.",
			command: "echo hello world",
			mutate:  func(mc *v1alpha2.MiniCluster, _ *sandbox) { mc.Spec.Flux.LogLevel = ptrTo(int32(3)) },
			want: func(mp string) [][]string {
				o := std()
				o.level = 3
				return [][]string{encode(), start(mp, o, nil, submit(hello...)...)}
			},
		},
		"LogLevelQuiet": {
			reason:  "quiet forces -Slog-stderr-level=0 whatever logLevel says.",
			command: "echo hello world",
			mutate: func(mc *v1alpha2.MiniCluster, _ *sandbox) {
				mc.Spec.Flux.LogLevel = ptrTo(int32(7))
				mc.Spec.Logging.Quiet = true
			},
			want: func(mp string) [][]string {
				return [][]string{encode(), start(mp, quietOpts(), nil, submit(hello...)...)}
			},
		},
		"Zeromq": {
			reason:  "logging.zeromq adds -Stbon.zmqdebug=1.",
			command: "echo hello world",
			mutate:  func(mc *v1alpha2.MiniCluster, _ *sandbox) { mc.Spec.Logging.Zeromq = true },
			want: func(mp string) [][]string {
				o := std()
				o.zmq = true
				return [][]string{encode(), start(mp, o, nil, submit(hello...)...)}
			},
		},
		"ConnectTimeoutEmpty": {
			reason:  `connectTimeout "" leaves Flux's default: no option.`,
			command: "echo hello world",
			mutate:  func(mc *v1alpha2.MiniCluster, _ *sandbox) { mc.Spec.Flux.ConnectTimeout = ptrTo("") },
			want: func(mp string) [][]string {
				o := std()
				o.timeout = ""
				return [][]string{encode(), start(mp, o, nil, submit(hello...)...)}
			},
		},
		"ConnectTimeout10s": {
			reason:  "connectTimeout is passed through.",
			command: "echo hello world",
			mutate:  func(mc *v1alpha2.MiniCluster, _ *sandbox) { mc.Spec.Flux.ConnectTimeout = ptrTo("10s") },
			want: func(mp string) [][]string {
				o := std()
				o.timeout = "10s"
				return [][]string{encode(), start(mp, o, nil, submit(hello...)...)}
			},
		},
		"TopologyMinSizeDisableSocket": {
			reason:  "topology, minSize (quorum) and disableSocket shape the options, on workers too.",
			command: "echo hello world",
			host:    workHost,
			mutate: func(mc *v1alpha2.MiniCluster, _ *sandbox) {
				mc.Spec.Flux.Topology = "kary:2"
				mc.Spec.MinSize = 2
				mc.Spec.Flux.DisableSocket = true
			},
			want: func(mp string) [][]string {
				o := std()
				o.topo, o.quorum, o.noSocket = "kary:2", 2, true
				return [][]string{encode(), start(mp, o, nil)}
			},
		},
		"ArchivePresent": {
			reason:  "An existing archive.path is restored with -Scontent.restore after the other options; the lead dumps to it with -Scontent.dump when it shuts down.",
			command: "echo hello world",
			mutate: func(mc *v1alpha2.MiniCluster, sb *sandbox) {
				mc.Spec.Archive.Path = filepath.Join(sb.root, "archive.tar")
				_ = os.WriteFile(mc.Spec.Archive.Path, []byte("x"), 0o644)
			},
			want: func(mp string) [][]string {
				archive := filepath.Join(filepath.Dir(mp), "archive.tar")
				return [][]string{encode(), start(mp, std(), nil, cat(words("-Scontent.restore="+archive, "-Scontent.dump="+archive), submit(hello...))...)}
			},
		},
		"ArchiveDumpCreatesDirectory": {
			reason:  "The first run has no archive to restore, but the lead dumps one at shutdown into a directory it creates.",
			command: "echo hello world",
			mutate: func(mc *v1alpha2.MiniCluster, sb *sandbox) {
				mc.Spec.Archive.Path = filepath.Join(sb.root, "state/flux/archive.tar.gz")
			},
			want: func(mp string) [][]string {
				archive := filepath.Join(filepath.Dir(mp), "state/flux/archive.tar.gz")
				return [][]string{encode(), start(mp, std(), nil, cat(words("-Scontent.dump="+archive), submit(hello...))...)}
			},
			check: func(t *testing.T, sb *sandbox, _ result) {
				t.Helper()
				if st, err := os.Stat(filepath.Join(sb.root, "state/flux")); err != nil || !st.IsDir() {
					t.Errorf("the archive's directory must exist for the dump: %v", err)
				}
			},
		},
		"ArchiveInteractive": {
			reason:  "An interactive lead dumps too, when flux shutdown ends it.",
			command: "",
			mutate: func(mc *v1alpha2.MiniCluster, sb *sandbox) {
				mc.Spec.Interactive = true
				mc.Spec.Archive.Path = filepath.Join(sb.root, "archive.tar")
			},
			want: func(mp string) [][]string {
				o := std()
				o.rc2none = true
				return [][]string{encode(), append(broker(mp, o), "-Scontent.dump="+filepath.Join(filepath.Dir(mp), "archive.tar"))}
			},
		},
		"ArchivePresentWorker": {
			reason:  "Every broker restores the archive; only the lead dumps it.",
			command: "echo hello world",
			host:    workHost,
			mutate: func(mc *v1alpha2.MiniCluster, sb *sandbox) {
				mc.Spec.Archive.Path = filepath.Join(sb.root, "archive.tar")
				_ = os.WriteFile(mc.Spec.Archive.Path, []byte("x"), 0o644)
			},
			want: func(mp string) [][]string {
				return [][]string{encode(), start(mp, std(), nil, "-Scontent.restore="+filepath.Join(filepath.Dir(mp), "archive.tar"))}
			},
		},
		"ArchiveRestoreOnly": {
			reason:  "An archive flux dump cannot write (the operator's archive.sqlite) is restored when it exists, never dumped to: the dump would fail the shutdown.",
			command: "echo hello world",
			mutate: func(mc *v1alpha2.MiniCluster, sb *sandbox) {
				mc.Spec.Archive.Path = filepath.Join(sb.root, "archive.sqlite")
				_ = os.WriteFile(mc.Spec.Archive.Path, []byte("x"), 0o644)
			},
			want: func(mp string) [][]string {
				archive := filepath.Join(filepath.Dir(mp), "archive.sqlite")
				return [][]string{encode(), start(mp, std(), nil, cat(words("-Scontent.restore="+archive), submit(hello...))...)}
			},
		},
		"ArchiveMissing": {
			reason:  "A missing archive is not restored, only dumped to.",
			command: "echo hello world",
			mutate: func(mc *v1alpha2.MiniCluster, sb *sandbox) {
				mc.Spec.Archive.Path = filepath.Join(sb.root, "nope.tar")
			},
			want: func(mp string) [][]string {
				return [][]string{encode(), start(mp, std(), nil, cat(words("-Scontent.dump="+filepath.Join(filepath.Dir(mp), "nope.tar")), submit(hello...))...)}
			},
		},
		"ArchiveIsDirectory": {
			reason:  "An archive.path that is a directory (/tmp, a volume) is no archive: restoring it would stop the lead broker.",
			command: "echo hello world",
			mutate: func(mc *v1alpha2.MiniCluster, sb *sandbox) {
				mc.Spec.Archive.Path = filepath.Join(sb.root, "state")
				mustMkdir(t, mc.Spec.Archive.Path)
			},
			want: func(mp string) [][]string {
				return [][]string{encode(), start(mp, std(), nil, submit(hello...)...)}
			},
		},
		"EnvironmentAndPythonPath": {
			reason:  "flux.environment is exported to Flux and in flux-view.sh; pythonPath lands in PYTHONPATH of both.",
			command: "echo hello world",
			mutate: func(mc *v1alpha2.MiniCluster, _ *sandbox) {
				mc.Spec.Flux.Environment = map[string]string{"B_VAR": "two words", "A_VAR": "1"}
				mc.Spec.Flux.Container.PythonPath = "/opt/py/site-packages"
			},
			check: func(t *testing.T, sb *sandbox, r result) {
				t.Helper()
				env := r.envs[1]
				for k, v := range map[string]string{"A_VAR": "1", "B_VAR": "two words"} {
					if env[k] != v {
						t.Errorf("flux saw %s=%q, want %q", k, env[k], v)
					}
				}
				if !strings.HasSuffix(env["PYTHONPATH"], ":/opt/py/site-packages") {
					t.Errorf("flux saw PYTHONPATH=%q", env["PYTHONPATH"])
				}
				got := sourceView(t, sb, "A_VAR", "B_VAR", "PYTHONPATH", "fluxsocket", "PATH", "LD_LIBRARY_PATH")
				want := map[string]string{
					"A_VAR": "1", "B_VAR": "two words", "PYTHONPATH": ":/opt/py/site-packages",
					"fluxsocket": "local://" + sb.mp + "/config/run/flux/local",
					"PATH":       sb.bin + ":/usr/bin:/bin:" + sb.mp + "/view/bin", "LD_LIBRARY_PATH": ":" + sb.mp + "/view/lib",
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("after sourcing flux-view.sh: -want, +got:\n%s", diff)
				}
			},
		},
		"ViewPythonPath": {
			reason:  "Without pythonPath the view's site-packages is found and written to flux-view.sh.",
			command: "echo hello world",
			mutate: func(mc *v1alpha2.MiniCluster, sb *sandbox) {
				_ = os.MkdirAll(filepath.Join(sb.mp, "view/lib/python3.12/site-packages"), 0o755)
			},
			check: func(t *testing.T, sb *sandbox, r result) {
				t.Helper()
				site := sb.mp + "/view/lib/python3.12/site-packages"
				if got := r.envs[1]["PYTHONPATH"]; got != ":"+site {
					t.Errorf("flux saw PYTHONPATH=%q, want %q", got, ":"+site)
				}
				if got := sourceView(t, sb, "PYTHONPATH")["PYTHONPATH"]; got != ":"+site {
					t.Errorf("flux-view.sh sets PYTHONPATH=%q, want %q", got, ":"+site)
				}
			},
		},
		"SchedulerSimple": {
			reason:  "scheduler.simple does not load fluxion.",
			command: "echo hello world",
			mutate:  func(mc *v1alpha2.MiniCluster, _ *sandbox) { mc.Spec.Flux.Scheduler.Simple = true },
			check: func(t *testing.T, _ *sandbox, r result) {
				t.Helper()
				if v, ok := r.envs[1]["FLUX_RC_EXTRA"]; ok {
					t.Errorf("FLUX_RC_EXTRA=%q with scheduler.simple", v)
				}
			},
		},
		"ContainerDisable": {
			reason:  "flux.container.disable: Flux comes from the image; no view on PATH, no software copy.",
			command: "echo hello world",
			mutate:  func(mc *v1alpha2.MiniCluster, _ *sandbox) { mc.Spec.Flux.Container.Disable = true },
			want: func(mp string) [][]string {
				return [][]string{encode(), start(mp, std(), nil, submit(hello...)...)}
			},
			check: func(t *testing.T, sb *sandbox, r result) {
				t.Helper()
				env := r.envs[1]
				if strings.Contains(env["PATH"], "/view") || env["FLUX_RC_EXTRA"] != "" || strings.Contains(env["PYTHONPATH"], "view") {
					t.Errorf("disabled view leaked into the environment: PATH=%q FLUX_RC_EXTRA=%q PYTHONPATH=%q", env["PATH"], env["FLUX_RC_EXTRA"], env["PYTHONPATH"])
				}
				if exists(sb.paths.Software) {
					t.Errorf("the software tree must not be copied")
				}
				got := sourceView(t, sb, "fluxsocket", "PATH")
				if got["fluxsocket"] != "local://"+sb.mp+"/config/run/flux/local" || strings.Contains(got["PATH"], "/view") {
					t.Errorf("flux-view.sh: %v", got)
				}
			},
		},
		"HomeIsRoot": {
			reason:  "A user whose HOME is / gets HOME=/home/flux-operator (here relocated) and USER=flux-operator.",
			command: "echo hello world",
			env:     map[string]string{"HOME": "/"},
			check: func(t *testing.T, sb *sandbox, r result) {
				t.Helper()
				if env := r.envs[1]; env["HOME"] != sb.paths.Home || env["USER"] != "flux-operator" {
					t.Errorf("flux saw HOME=%q USER=%q", env["HOME"], env["USER"])
				}
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
		"StrictWorker": {
			reason:  "strict mode does not abort the worker's retry loop.",
			command: "echo hello world",
			host:    workHost,
			fluxRC:  "1 0",
			mutate:  func(mc *v1alpha2.MiniCluster, _ *sandbox) { mc.Spec.Logging.Strict = true },
			want: func(mp string) [][]string {
				return [][]string{encode(), start(mp, std(), nil), start(mp, std(), nil)}
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			runRunner(t, tc)
		})
	}
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

// TestRunnerExitCode checks the lifecycle contract: a job that fails on the
// lead exits the runner with JobFailedExitCode, after commands.post, with
// the job's own code in the termination message; everything else keeps the
// broker's code.
func TestRunnerExitCode(t *testing.T) {
	t.Parallel()
	// message checks the termination message: its first line, then the
	// lead's last words, which end with what the runner printed last.
	message := func(t *testing.T, sb *sandbox, first, last string) {
		t.Helper()
		got := readFile(t, sb.paths.TerminationLog)
		line, words, _ := strings.Cut(got, "\n")
		if diff := cmp.Diff(first, line); diff != "" {
			t.Errorf("termination message, first line: -want, +got:\n%s", diff)
		}
		if !strings.HasSuffix(words, last+"\n") {
			t.Errorf("the termination message must end with the lead's last words %q:\n%s", last, got)
		}
	}
	failed := func(code, last string) func(t *testing.T, sb *sandbox, r result) {
		return func(t *testing.T, sb *sandbox, _ result) {
			t.Helper()
			message(t, sb, "flux job on flux-sample-0 exited with "+code, last)
			if !exists(filepath.Join(sb.mp, "flux-operator-complete.txt")) {
				t.Errorf("flux-operator-complete.txt must be touched after a failed job")
			}
		}
	}
	noMessage := func(t *testing.T, sb *sandbox, _ result) {
		t.Helper()
		if got := readFile(t, sb.paths.TerminationLog); got != "" {
			t.Errorf("no termination message expected, got %q", got)
		}
	}
	post := func(code string) func(mc *v1alpha2.MiniCluster, _ *sandbox) {
		return func(mc *v1alpha2.MiniCluster, _ *sandbox) {
			mc.Spec.Containers[0].Commands.Post = "echo POST-HOOK-OUT" + code
		}
	}
	cases := map[string]runCase{
		"SubmitFails": {
			reason:   "A failed job in submit mode: post runs, then the runner exits with JobFailedExitCode and says the job's code.",
			command:  "echo hello world",
			mutate:   post(""),
			fluxRC:   "3",
			wantExit: JobFailedExitCode,
			contains: []string{"POST-HOOK-OUT"},
			check:    failed("3", "POST-HOOK-OUT"),
		},
		"FailingPostAfterFailedJob": {
			reason:   "A failing commands.post does not hide the job's failure.",
			command:  "echo hello world",
			mutate:   post("; false"),
			fluxRC:   "7",
			wantExit: JobFailedExitCode,
			contains: []string{"POST-HOOK-OUT"},
			check:    failed("7", "POST-HOOK-OUT"),
		},
		"StrictFails": {
			reason:  "strict mode: the same after a failed job.",
			command: "echo hello world",
			mutate: func(mc *v1alpha2.MiniCluster, sb *sandbox) {
				mc.Spec.Logging.Strict = true
				post("")(mc, sb)
			},
			fluxRC:   "7",
			wantExit: JobFailedExitCode,
			contains: []string{"POST-HOOK-OUT"},
			check:    failed("7", "POST-HOOK-OUT"),
		},
		"LauncherFails": {
			reason:   "Launcher mode: the command is the job.",
			command:  "echo hello world",
			mutate:   func(mc *v1alpha2.MiniCluster, _ *sandbox) { mc.Spec.Containers[0].Launcher = true },
			fluxRC:   "5",
			wantExit: JobFailedExitCode,
			check:    failed("5", "FAKE-FLUX-OUTPUT"),
		},
		"BatchFails": {
			reason:   "Batch mode: flux batch and flux job wait are the job.",
			command:  "echo one\necho two",
			mutate:   func(mc *v1alpha2.MiniCluster, _ *sandbox) { mc.Spec.Containers[0].Batch = true },
			fluxRC:   "1",
			wantExit: JobFailedExitCode,
			check:    failed("1", "FAKE-FLUX-OUTPUT"),
		},
		"ScriptFails": {
			reason:  "commands.script is the job.",
			command: "",
			mutate: func(mc *v1alpha2.MiniCluster, _ *sandbox) {
				mc.Spec.Containers[0].Commands.Script = "#!/bin/bash\nexit 4\n"
			},
			fluxRC:   "4",
			wantExit: JobFailedExitCode,
			check:    failed("4", "FAKE-FLUX-OUTPUT"),
		},
		"NoTerminationLog": {
			reason:  "Without a writable termination log the code is still JobFailedExitCode, and no such file is created.",
			command: "echo hello world",
			mutate: func(mc *v1alpha2.MiniCluster, sb *sandbox) {
				_ = os.Remove(sb.paths.TerminationLog)
			},
			fluxRC:   "3",
			wantExit: JobFailedExitCode,
			check: func(t *testing.T, sb *sandbox, _ result) {
				t.Helper()
				if exists(sb.paths.TerminationLog) {
					t.Errorf("%s must not be created", sb.paths.TerminationLog)
				}
			},
		},
		"Success": {
			reason:   "A job that succeeds exits 0, its message saying so, even when commands.post fails outside strict mode.",
			command:  "echo hello world",
			mutate:   post("; false"),
			wantExit: 0,
			check: func(t *testing.T, sb *sandbox, _ result) {
				t.Helper()
				message(t, sb, "flux job on flux-sample-0 exited with 0", "POST-HOOK-OUT")
			},
		},
		"StrictPostFailsOnLead": {
			reason: "strict mode: a commands.post that fails after a good job ends the lead for good (the followers have left): " +
				"JobFailedExitCode, not the hook's code, which the Job would retry with a lead that waits forever.",
			command: "echo hello world",
			mutate: func(mc *v1alpha2.MiniCluster, _ *sandbox) {
				mc.Spec.Logging.Strict = true
				mc.Spec.Containers[0].Commands.Post = "echo copying results; cp /nonexistent/results /tmp/ 2> /dev/null"
			},
			wantExit: JobFailedExitCode,
			check: func(t *testing.T, sb *sandbox, _ result) {
				t.Helper()
				message(t, sb, "flux job on flux-sample-0 exited with 0; commands.post then failed with 1 (logging.strict)", "copying results")
			},
		},
		"StrictPostFailsAfterFailedJob": {
			reason:  "strict mode: the job's code stays first when commands.post fails too.",
			command: "echo hello world",
			mutate: func(mc *v1alpha2.MiniCluster, _ *sandbox) {
				mc.Spec.Logging.Strict = true
				mc.Spec.Containers[0].Commands.Post = "echo POST; exit 9"
			},
			fluxRC:   "3",
			wantExit: JobFailedExitCode,
			check: func(t *testing.T, sb *sandbox, _ result) {
				t.Helper()
				message(t, sb, "flux job on flux-sample-0 exited with 3; commands.post then failed with 9 (logging.strict)", "POST")
			},
		},
		"PostExitsOnLead": {
			reason:   "Without strict mode only a hook's own exit ends the runner: the same ending, not blamed on strict mode.",
			command:  "echo hello world",
			mutate:   post("; exit 6"),
			wantExit: JobFailedExitCode,
			check: func(t *testing.T, sb *sandbox, _ result) {
				t.Helper()
				message(t, sb, "flux job on flux-sample-0 exited with 0; commands.post then failed with 6", "POST-HOOK-OUT")
			},
		},
		"StrictPostFailsOnWorker": {
			reason:  "strict mode on a follower: the hook's code, which fails that pod (retried), as before.",
			command: "echo hello world",
			host:    workHost,
			mutate: func(mc *v1alpha2.MiniCluster, _ *sandbox) {
				mc.Spec.Logging.Strict = true
				mc.Spec.Containers[0].Commands.Post = "exit 9"
			},
			wantExit: 9,
			check:    noMessage,
		},
		"LongLastWords": {
			reason:  "The last words are bounded: the kubelet keeps 4096 bytes of a termination message.",
			command: "echo hello world",
			mutate: func(mc *v1alpha2.MiniCluster, _ *sandbox) {
				mc.Spec.Containers[0].Commands.Post = "for i in $(seq 1 200); do printf 'line %0100d\\n' \"${i}\"; done; head -c 20000 /dev/zero | tr '\\0' x; echo"
			},
			fluxRC:   "3",
			wantExit: JobFailedExitCode,
			check: func(t *testing.T, sb *sandbox, _ result) {
				t.Helper()
				got := readFile(t, sb.paths.TerminationLog)
				if len(got) > 4096 || !strings.HasPrefix(got, "flux job on flux-sample-0 exited with 3\n") || !strings.HasSuffix(got, "xxx\n") {
					t.Errorf("the message must keep its first line and the end of the output in 4096 bytes: %d bytes\n%.300s...", len(got), got)
				}
			},
		},
		"InteractiveKeepsCode": {
			reason:   "Without a job the lead's broker code is the runner's: there is no job to fail.",
			command:  "",
			fluxRC:   "7",
			wantExit: 7,
			check:    noMessage,
		},
		"InteractiveWithCommandKeepsCode": {
			reason:   "interactive: true never runs the command (rc2_none), so flux start's code says nothing about it.",
			command:  "echo hello world",
			mutate:   func(mc *v1alpha2.MiniCluster, _ *sandbox) { mc.Spec.Interactive = true },
			fluxRC:   "7",
			wantExit: 7,
			check:    noMessage,
		},
		"WorkerRetries": {
			reason:   "A follower retries its broker and ends 0; it never reports a job.",
			command:  "echo hello world",
			host:     workHost,
			fluxRC:   "3 0",
			wantExit: 0,
			check:    noMessage,
		},
		"WorkerCompleteWorkers": {
			reason:   "With completeWorkers a follower ends 0 whatever its broker's code.",
			command:  "echo hello world",
			host:     workHost,
			mutate:   func(mc *v1alpha2.MiniCluster, _ *sandbox) { mc.Spec.Flux.CompleteWorkers = true },
			fluxRC:   "3",
			wantExit: 0,
			check:    noMessage,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			runRunner(t, tc)
		})
	}
}

// submitLine is the flux submit the runner makes for line j of a batch,
// its output and error under logs.
func submitLine(logs string, j string, cmd ...string) []string {
	return cat(words("submit", "--flags", "waitable", "--error="+logs+"/job-"+j+".err", "--output="+logs+"/job-"+j+".out"), cmd)
}

// TestRunnerBatchJobs runs batch mode end to end with the fake flux: flux
// start runs its initial program, flux batch runs the batch script, and
// the flux submit calls inside it record what each job would run.
func TestRunnerBatchJobs(t *testing.T) {
	t.Parallel()
	instance := map[string]string{"FAKE_FLUX_INITIAL": "1"}
	// Batch lines, with each job's output under the sandbox's logs.
	linesWithLogs := func(mc *v1alpha2.MiniCluster, sb *sandbox) {
		mc.Spec.Containers[0].Batch = true
		mc.Spec.Containers[0].Logs = filepath.Join(sb.root, "logs")
	}
	// lines is what batch lines run: the batch, the submits of its lines
	// (their logs beside mp), then the waits.
	lines := func(mp string, submits func(logs string) [][]string) [][]string {
		calls := [][]string{
			encode(),
			start(mp, std(), nil, "sh", "-c", batchProgram(mp, "-n1")),
			{"batch", "-n1", "--flags", "waitable", mp + "/flux-job.batch"},
		}
		calls = append(calls, submits(filepath.Join(filepath.Dir(mp), "logs"))...)
		return append(calls, []string{"queue", "idle"}, []string{"jobs", "-a"}, []string{"job", "wait", "--all"}, []string{"job", "wait", "--all"})
	}
	rawNotes := "it's here\n\nand \"there\" $HOME\n"
	cases := map[string]runCase{
		"LinesAreData": {
			reason: "Each line is split into words and reaches flux submit literally: substitutions, separators, backticks and quotes run nothing.",
			command: "echo $(touch pwned) ; touch pwned\n" +
				"echo \"a b\" 'c'\"d\" `touch pwned` && touch pwned\n" +
				"   \n" +
				"printf '%s\\n' \"$HOME\" '*' * | touch pwned",
			env:    instance,
			mutate: linesWithLogs,
			want: func(mp string) [][]string {
				return lines(mp, func(logs string) [][]string {
					return [][]string{
						submitLine(logs, "0", "echo", "$(touch", "pwned)", ";", "touch", "pwned"),
						submitLine(logs, "1", "echo", "a b", "cd", "`touch", "pwned`", "&&", "touch", "pwned"),
						submitLine(logs, "3", "printf", `%s\n`, "$HOME", "*", "*", "|", "touch", "pwned"),
					}
				})
			},
			check: func(t *testing.T, sb *sandbox, _ result) {
				t.Helper()
				noCanary(t, "batch lines", sb)
			},
		},
		"CommentLines": {
			reason: "A line that starts with # is a comment, apostrophes and all; a # later in a line is a word like any other.",
			command: "# prepare: don't split me\n" +
				"echo a # b\n" +
				"   # indented comment, it's skipped too\n" +
				"echo c",
			env:    instance,
			mutate: linesWithLogs,
			want: func(mp string) [][]string {
				return lines(mp, func(logs string) [][]string {
					return [][]string{submitLine(logs, "1", "echo", "a", "#", "b"), submitLine(logs, "3", "echo", "c")}
				})
			},
		},
		"Script": {
			reason:  "batch with commands.script: the script is the batch script flux batch runs (it was never run before), with a #! added when it has none.",
			command: "",
			env:     instance,
			mutate: func(mc *v1alpha2.MiniCluster, _ *sandbox) {
				mc.Spec.Containers[0].Batch = true
				mc.Spec.Containers[0].Commands.Script = "# the user's batch script\nflux submit -N2 hostname\nflux queue idle\n"
			},
			want: func(mp string) [][]string {
				return [][]string{
					encode(),
					start(mp, std(), nil, "sh", "-c", batchProgram(mp, "-n1")),
					{"batch", "-n1", "--flags", "waitable", mp + "/flux-job.batch"},
					{"submit", "-N2", "hostname"},
					{"queue", "idle"},
					{"job", "wait", "--all"},
				}
			},
			check: func(t *testing.T, sb *sandbox, _ result) {
				t.Helper()
				want := "#!/bin/bash\n# the user's batch script\nflux submit -N2 hostname\nflux queue idle\n"
				if diff := cmp.Diff(want, readFile(t, filepath.Join(sb.mp, "flux-job.batch"))); diff != "" {
					t.Errorf("flux-job.batch: -want, +got:\n%s", diff)
				}
			},
		},
		"ScriptShebang": {
			reason:  "A script with its own #! keeps it.",
			command: "",
			mutate: func(mc *v1alpha2.MiniCluster, _ *sandbox) {
				mc.Spec.Containers[0].Batch = true
				mc.Spec.Containers[0].Commands.Script = "#!/bin/sh\nflux submit hostname"
			},
			check: func(t *testing.T, sb *sandbox, _ result) {
				t.Helper()
				if got, want := readFile(t, filepath.Join(sb.mp, "flux-job.batch")), "#!/bin/sh\nflux submit hostname\n"; got != want {
					t.Errorf("flux-job.batch = %q, want %q", got, want)
				}
			},
		},
		"RawApostrophes": {
			reason: "batchRaw is shell code: a comment and a heredoc with apostrophes (and a blank line in the heredoc) are accepted and kept verbatim.",
			command: "# the user's comment: don't split me\n" +
				"cat > \"${FLUX_OUTPUT_DIR}/notes\" <<'EOF'\n" + rawNotes + "EOF\n" +
				"flux submit hostname # it's a job\n",
			env: instance,
			mutate: func(mc *v1alpha2.MiniCluster, sb *sandbox) {
				mc.Spec.Containers[0].Batch = true
				mc.Spec.Containers[0].BatchRaw = true
				mc.Spec.Containers[0].Logs = filepath.Join(sb.root, "logs")
			},
			want: func(mp string) [][]string {
				return [][]string{
					encode(),
					start(mp, std(), nil, "sh", "-c", batchProgram(mp, "-n1")),
					{"batch", "-n1", "--flags", "waitable", mp + "/flux-job.batch"},
					{"submit", "hostname"},
					{"job", "wait", "--all"},
				}
			},
			check: func(t *testing.T, sb *sandbox, _ result) {
				t.Helper()
				if diff := cmp.Diff(rawNotes, readFile(t, filepath.Join(sb.root, "logs/notes"))); diff != "" {
					t.Errorf("the heredoc of the batch script: -want, +got:\n%s", diff)
				}
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			runRunner(t, tc)
		})
	}
}

// TestRunnerWithoutFlux: an image without Flux (a view that was not copied,
// or flux.container.disable with an image that has none) ends the runner
// for good, saying why, instead of running on into failed flux commands.
func TestRunnerWithoutFlux(t *testing.T) {
	cases := map[string]struct {
		reason  string
		disable bool
		want    string
	}{
		"View":    {reason: "The view is missing.", want: "the Flux view was not copied"},
		"Disable": {reason: "With the view disabled, the image must bring Flux.", disable: true, want: "the application image must bring Flux"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			sb := newSandbox(t)
			if err := os.Remove(filepath.Join(sb.bin, "flux")); err != nil {
				t.Fatal(err)
			}
			mc := claim(2, "echo hello world", func(mc *v1alpha2.MiniCluster) { mc.Spec.Flux.Container.Disable = tc.disable })
			r := sb.run(t, runner(t, mc, sb.paths), leadHost, nil)
			if r.exit != JobFailedExitCode {
				t.Errorf("%s\nexit %d, want %d\nstderr:\n%s", tc.reason, r.exit, JobFailedExitCode, r.stderr)
			}
			if got := readFile(t, sb.paths.TerminationLog); !strings.Contains(got, tc.want) {
				t.Errorf("%s\ntermination message %q, want it to contain %q", tc.reason, got, tc.want)
			}
		})
	}
}
