package entrypoint

// How a runner ends (endings.go, lifecycle.go): its exit code and the
// lead's termination message.

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// TestRunnerExitCode checks the lifecycle contract: a job that fails on the
// lead exits the runner with JobFailedExitCode, after commands.post, with
// the job's own code in the termination message; everything else keeps the
// broker's code.
func TestRunnerExitCode(t *testing.T) {
	t.Parallel()
	// message checks the termination message: its first line, then the
	// lead's last words, the job's own output (TestLeadLastWords has more).
	message := func(t *testing.T, sb *sandbox, first, words string) {
		t.Helper()
		got := readFile(t, sb.paths.TerminationLog)
		line, rest, _ := strings.Cut(got, "\n")
		if diff := cmp.Diff(first, line); diff != "" {
			t.Errorf("termination message, first line: -want, +got:\n%s", diff)
		}
		if diff := cmp.Diff(words, rest); diff != "" {
			t.Errorf("the lead's last words after the first line: -want, +got:\n%s", diff)
		}
	}
	failed := func(code, words string) func(t *testing.T, sb *sandbox, r result) {
		return func(t *testing.T, sb *sandbox, _ result) {
			t.Helper()
			message(t, sb, "flux job on flux-sample-0 exited with "+code, words)
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
	// job runs the instance's initial program, and its flux submit --watch
	// prints what the watched job does.
	job := func(watch string) map[string]string {
		return map[string]string{"FAKE_FLUX_INITIAL": "1", "FAKE_FLUX_WATCH": watch}
	}
	cases := map[string]runCase{
		"SubmitFails": {
			reason:   "A failed job in submit mode: post runs, then the runner exits with JobFailedExitCode and says the job's code and output.",
			command:  "echo hello world",
			mutate:   post(""),
			env:      job("echo JOB-OUT; exit 3"),
			wantExit: JobFailedExitCode,
			contains: []string{"JOB-OUT", "POST-HOOK-OUT"},
			check:    failed("3", "JOB-OUT\n"),
		},
		"FailingPostAfterFailedJob": {
			reason:   "A failing commands.post does not hide the job's failure.",
			command:  "echo hello world",
			mutate:   post("; false"),
			env:      job("echo JOB-OUT; exit 7"),
			wantExit: JobFailedExitCode,
			contains: []string{"POST-HOOK-OUT"},
			check:    failed("7", "JOB-OUT\n"),
		},
		"StrictFails": {
			reason:  "strict mode: the same after a failed job.",
			command: "echo hello world",
			mutate: func(mc *v1alpha2.MiniCluster, sb *sandbox) {
				mc.Spec.Logging.Strict = true
				post("")(mc, sb)
			},
			env:      job("echo JOB-OUT; exit 7"),
			wantExit: JobFailedExitCode,
			contains: []string{"POST-HOOK-OUT"},
			check:    failed("7", "JOB-OUT\n"),
		},
		"LauncherFails": {
			reason:   "Launcher mode: the command is the job.",
			command:  `bash -c "echo JOB-OUT; exit 5"`,
			mutate:   func(mc *v1alpha2.MiniCluster, _ *sandbox) { mc.Spec.Containers[0].Launcher = true },
			env:      job(""),
			wantExit: JobFailedExitCode,
			check:    failed("5", "JOB-OUT\n"),
		},
		"BatchFails": {
			reason:  "Batch mode: flux batch and flux job wait are the job.",
			command: "echo JOB-OUT\nexit 1",
			mutate: func(mc *v1alpha2.MiniCluster, _ *sandbox) {
				mc.Spec.Containers[0].Batch = true
				mc.Spec.Containers[0].BatchRaw = true
			},
			env:      job(""),
			wantExit: JobFailedExitCode,
			check:    failed("1", "JOB-OUT\n"),
		},
		"ScriptFails": {
			reason:  "commands.script is the job (not run here: the fake broker fails first, so there are no last words).",
			command: "",
			mutate: func(mc *v1alpha2.MiniCluster, _ *sandbox) {
				mc.Spec.Containers[0].Commands.Script = "#!/bin/bash\nexit 4\n"
			},
			fluxRC:   "4",
			wantExit: JobFailedExitCode,
			check:    failed("4", ""),
		},
		"BrokerFails": {
			reason:   "A broker that fails before its initial program: the job's code is its, and the last words are empty, not the broker's output.",
			command:  "echo hello world",
			mutate:   post(""),
			fluxRC:   "3",
			wantExit: JobFailedExitCode,
			contains: []string{"FAKE-FLUX-OUTPUT", "POST-HOOK-OUT"},
			check:    failed("3", ""),
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
			env:      job("echo JOB-OUT"),
			wantExit: 0,
			check: func(t *testing.T, sb *sandbox, _ result) {
				t.Helper()
				message(t, sb, "flux job on flux-sample-0 exited with 0", "JOB-OUT\n")
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
			env:      job("echo JOB-OUT"),
			wantExit: JobFailedExitCode,
			contains: []string{"copying results"},
			check: func(t *testing.T, sb *sandbox, _ result) {
				t.Helper()
				message(t, sb, "flux job on flux-sample-0 exited with 0; commands.post then failed with 1 (logging.strict)", "JOB-OUT\n")
			},
		},
		"StrictPostFailsAfterFailedJob": {
			reason:  "strict mode: the job's code stays first when commands.post fails too.",
			command: "echo hello world",
			mutate: func(mc *v1alpha2.MiniCluster, _ *sandbox) {
				mc.Spec.Logging.Strict = true
				mc.Spec.Containers[0].Commands.Post = "echo POST; exit 9"
			},
			env:      job("echo JOB-OUT; exit 3"),
			wantExit: JobFailedExitCode,
			check: func(t *testing.T, sb *sandbox, _ result) {
				t.Helper()
				message(t, sb, "flux job on flux-sample-0 exited with 3; commands.post then failed with 9 (logging.strict)", "JOB-OUT\n")
			},
		},
		"PostExitsOnLead": {
			reason:   "Without strict mode only a hook's own exit ends the runner: the same ending, not blamed on strict mode.",
			command:  "echo hello world",
			mutate:   post("; exit 6"),
			env:      job("echo JOB-OUT"),
			wantExit: JobFailedExitCode,
			check: func(t *testing.T, sb *sandbox, _ result) {
				t.Helper()
				message(t, sb, "flux job on flux-sample-0 exited with 0; commands.post then failed with 6", "JOB-OUT\n")
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
			reason:   "The last words are bounded: the kubelet keeps 4096 bytes of a termination message.",
			command:  "echo hello world",
			env:      job("for i in $(seq 1 200); do printf 'line %0100d\\n' \"${i}\"; done; head -c 20000 /dev/zero | tr '\\0' x; echo; exit 3"),
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
	runCases(t, cases)
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

// TestLeadLastWords: the lines after the first of the lead's termination
// message are the job's own output, stdout and stderr, never R, the runner's
// lines or hooks, or the brokers' log; the container's log keeps all of it,
// the job's output before what the runner prints after it. A runner with no
// job output to wait for ends as soon as its broker has.
func TestLeadLastWords(t *testing.T) {
	t.Parallel()
	realSleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	// The job of most cases: a line on each stream, then a failure.
	const watch = "echo JOB-STDOUT hello; echo JOB-STDERR oops >&2; exit 3"
	const script = "echo JOB-STDOUT hello\necho JOB-STDERR oops >&2\nexit 3"
	jobLines := []string{"JOB-STDERR oops", "JOB-STDOUT hello"}
	// notJob are never in the last words: R, the runner's own lines and
	// hooks, the brokers' log and output, the broker's wall time.
	notJob := []string{`"R_lite"`, "Hostname: ", "Submit mode", "Launcher mode", "Batch mode", "broker.info[0]", "POST-HOOK-OUT", "FAKE-FLUX-OUTPUT", "FLUXTIME fluxstart"}
	instance := map[string]string{"FAKE_FLUX_INITIAL": "1", "FAKE_BROKER_LOG": "1", "FAKE_FLUX_WATCH": watch}
	batchRaw := func(mc *v1alpha2.MiniCluster) {
		mc.Spec.Containers[0].Batch = true
		mc.Spec.Containers[0].BatchRaw = true
	}
	cases := map[string]struct {
		reason  string
		command string // "echo hello world" unless set
		mutate  func(mc *v1alpha2.MiniCluster)
		host    string            // lead unless set
		env     map[string]string // instance unless set
		noFifo  bool              // mkfifo fails
		exit    int
		first   string   // the message's first line; "": no message
		words   []string // the lines after it, sorted: the two streams come in either order
		stdout  []string // in the log's stdout, in this order
		stderr  []string // in the log's stderr, in this order
		hidden  []string // nowhere in the log
		within  time.Duration
		start   func(mp string) []string // flux start's argv, when set
	}{
		"Submit": {
			reason: "Submit mode: flux submit --watch prints the job's output, which alone follows the first line; the log has everything, the job's output before commands.post's.",
			mutate: func(mc *v1alpha2.MiniCluster) { mc.Spec.Containers[0].Commands.Post = "echo POST-HOOK-OUT" },
			exit:   JobFailedExitCode,
			first:  "flux job on flux-sample-0 exited with 3",
			words:  jobLines,
			stdout: []string{`"R_lite"`, "Hostname: flux-sample-0", "Submit mode", "JOB-STDOUT hello", "POST-HOOK-OUT"},
			stderr: []string{"broker.info[0]: quorum reached", "JOB-STDERR oops"},
			start:  func(mp string) []string { return start(mp, std(), nil, submit(hello...)...) },
		},
		"Launcher": {
			reason:  "Launcher mode: the command's own output.",
			command: `bash -c "echo JOB-STDOUT hello; echo JOB-STDERR oops >&2; exit 3"`,
			mutate:  func(mc *v1alpha2.MiniCluster) { mc.Spec.Containers[0].Launcher = true },
			exit:    JobFailedExitCode,
			first:   "flux job on flux-sample-0 exited with 3",
			words:   jobLines,
			stdout:  []string{`"R_lite"`, "Hostname: flux-sample-0", "Launcher mode", "JOB-STDOUT hello"},
			stderr:  []string{"broker.info[0]: quorum reached", "JOB-STDERR oops"},
		},
		"Batch": {
			reason:  "Batch mode: what flux batch and flux job wait print.",
			command: script,
			mutate:  batchRaw,
			exit:    JobFailedExitCode,
			first:   "flux job on flux-sample-0 exited with 3",
			words:   jobLines,
			stdout:  []string{`"R_lite"`, "Hostname: flux-sample-0", "Batch mode", "JOB-STDOUT hello"},
			stderr:  []string{"broker.info[0]: quorum reached", "JOB-STDERR oops"},
		},
		"BatchQuiet": {
			reason:  "Quiet batch mode keeps flux batch's output out of the log, not out of the last words.",
			command: script,
			mutate: func(mc *v1alpha2.MiniCluster) {
				batchRaw(mc)
				mc.Spec.Logging.Quiet = true
			},
			exit:   JobFailedExitCode,
			first:  "flux job on flux-sample-0 exited with 3",
			words:  jobLines,
			hidden: []string{"JOB-STDOUT", "JOB-STDERR", `"R_lite"`, "Hostname: ", "broker.info[0]"},
		},
		"Quiet": {
			reason: "logging.quiet: the log has the job's output (and the broker's), the last words the job's.",
			mutate: func(mc *v1alpha2.MiniCluster) { mc.Spec.Logging.Quiet = true },
			exit:   JobFailedExitCode,
			first:  "flux job on flux-sample-0 exited with 3",
			words:  jobLines,
			stdout: []string{"JOB-STDOUT hello"},
			stderr: []string{"JOB-STDERR oops"},
			hidden: []string{`"R_lite"`, "Hostname: "},
		},
		"Timed": {
			reason: "logging.timed: time's line about the job is the job's output; its line about the broker is not.",
			mutate: func(mc *v1alpha2.MiniCluster) { mc.Spec.Logging.Timed = true },
			exit:   JobFailedExitCode,
			first:  "flux job on flux-sample-0 exited with 3",
			words:  []string{"Command exited with non-zero status 3", "FLUXTIME fluxsubmit wall time", "JOB-STDERR oops", "JOB-STDOUT hello"},
			stdout: []string{"JOB-STDOUT hello"},
			stderr: []string{"FLUXTIME fluxstart wall time"},
		},
		"PrefixAndWrap": {
			reason: "The capture is outermost in the initial program, before the prefix; flux.wrap wraps the broker, not the job.",
			mutate: func(mc *v1alpha2.MiniCluster) {
				mc.Spec.Containers[0].Commands.Prefix = "env A=1"
				mc.Spec.Flux.Wrap = "env,B=2"
			},
			exit:  JobFailedExitCode,
			first: "flux job on flux-sample-0 exited with 3",
			words: jobLines,
			start: func(mp string) []string {
				return start(mp, std(), words("--wrap=env,B=2"), cat(words("env", "A=1"), submit(hello...))...)
			},
		},
		"NoFifo": {
			reason: "Without fifos the job's output goes to the log alone, uncaptured, and the message is its first line.",
			mutate: func(mc *v1alpha2.MiniCluster) { mc.Spec.Containers[0].Commands.Post = "echo POST-HOOK-OUT" },
			noFifo: true,
			exit:   JobFailedExitCode,
			first:  "flux job on flux-sample-0 exited with 3",
			stdout: []string{"Hostname: flux-sample-0", "JOB-STDOUT hello", "POST-HOOK-OUT"},
			stderr: []string{"broker.info[0]: quorum reached", "JOB-STDERR oops"},
			start:  func(mp string) []string { return uncaptured(mp, std(), nil, submit(hello...)...) },
		},
		"BrokerFailsFirst": {
			reason: "A broker that fails before its initial program: no job output, no wait for it.",
			env:    map[string]string{"FAKE_FLUX_RC": "1"},
			exit:   JobFailedExitCode,
			first:  "flux job on flux-sample-0 exited with 1",
			stdout: []string{"Hostname: flux-sample-0", "FAKE-FLUX-OUTPUT"},
		},
		"JobLeavesProcess": {
			reason:  "A process the job left running holds its output open: the runner waits 2s for it, not until it ends.",
			command: `bash -c "echo JOB-STDOUT hello; ` + realSleep + ` 8 &"`,
			mutate:  func(mc *v1alpha2.MiniCluster) { mc.Spec.Containers[0].Launcher = true },
			first:   "flux job on flux-sample-0 exited with 0",
			words:   []string{"JOB-STDOUT hello"},
			stdout:  []string{"JOB-STDOUT hello"},
			within:  6 * time.Second,
		},
		"Follower": {
			reason: "A follower captures nothing and writes no message: it ends as soon as its broker has.",
			host:   workHost,
			stdout: []string{"Goodbye"},
		},
		"Interactive": {
			reason: "interactive (rc2_none): no job, no capture, no message.",
			mutate: func(mc *v1alpha2.MiniCluster) { mc.Spec.Interactive = true },
			// The broker never runs its initial program.
			env: map[string]string{},
			start: func(mp string) []string {
				o := std()
				o.rc2none = true
				return start(mp, o, nil, submit(hello...)...)
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			sb := newSandbox(t)
			command := tc.command
			if command == "" {
				command = "echo hello world"
			}
			mc := claim(4, command, func(mc *v1alpha2.MiniCluster) {
				sb.use(mc)
				if tc.mutate != nil {
					tc.mutate(mc)
				}
			})
			if mc.Spec.Logging.Timed {
				if _, err := os.Stat(timeBin); err != nil {
					t.Skipf("%s is not installed", timeBin)
				}
			}
			if tc.noFifo {
				mustWrite(t, filepath.Join(sb.bin, "mkfifo"), "#!/bin/sh\nexit 1\n", 0o755)
			}
			env := tc.env
			if env == nil {
				env = instance
			}
			host := tc.host
			if host == "" {
				host = leadHost
			}
			r := sb.run(t, runner(t, mc, sb.paths), host, env)
			ended := time.Now()
			if r.exit != tc.exit {
				t.Errorf("%s\nexit %d, want %d\nstdout:\n%s\nstderr:\n%s", tc.reason, r.exit, tc.exit, r.stdout, r.stderr)
			}

			msg := readFile(t, sb.paths.TerminationLog)
			first, rest, _ := strings.Cut(msg, "\n")
			if diff := cmp.Diff(tc.first, first); diff != "" {
				t.Errorf("%s\ntermination message, first line: -want, +got:\n%s", tc.reason, diff)
			}
			var got []string
			for _, l := range strings.Split(strings.TrimSuffix(rest, "\n"), "\n") {
				if strings.HasPrefix(l, "FLUXTIME fluxsubmit wall time ") {
					l = "FLUXTIME fluxsubmit wall time"
				}
				if l != "" {
					got = append(got, l)
				}
			}
			slices.Sort(got)
			if diff := cmp.Diff(tc.words, got); diff != "" {
				t.Errorf("%s\nthe last words: -want, +got:\n%s\nmessage:\n%s", tc.reason, diff, msg)
			}
			for _, s := range notJob {
				if strings.Contains(rest, s) {
					t.Errorf("%s\nthe last words carry %q, which is not the job's output:\n%s", tc.reason, s, msg)
				}
			}
			if tc.first == "" && exists(filepath.Join(sb.mp, "job-output")) {
				t.Errorf("%s\na runner without a job must make no fifos for it", tc.reason)
			}

			inOrder(t, tc.reason, "stdout", r.stdout, tc.stdout)
			inOrder(t, tc.reason, "stderr", r.stderr, tc.stderr)
			for _, s := range tc.hidden {
				if strings.Contains(r.stdout+r.stderr, s) {
					t.Errorf("%s\nthe log must not carry %q:\nstdout:\n%s\nstderr:\n%s", tc.reason, s, r.stdout, r.stderr)
				}
			}
			if tc.start != nil {
				if len(r.calls) < 2 {
					t.Fatalf("%s\nno flux start: %q", tc.reason, r.calls)
				}
				if diff := cmp.Diff(tc.start(sb.mp), r.calls[1]); diff != "" {
					t.Errorf("%s\nflux start: -want, +got:\n%s", tc.reason, diff)
				}
			}

			within := tc.within
			if within == 0 {
				// Under the 2s a runner gives a job's leftover processes.
				within = 1500 * time.Millisecond
			}
			ns, err := strconv.ParseInt(strings.TrimSpace(readFile(t, filepath.Join(sb.log, "broker-ended"))), 10, 64)
			if err != nil {
				t.Fatalf("when the broker ended: %v", err)
			}
			if took := ended.Sub(time.Unix(0, ns)); took > within {
				t.Errorf("%s\nthe runner ended %v after its broker, over %v", tc.reason, took, within)
			}
		})
	}
}

// inOrder checks that out holds each of want, in that order.
func inOrder(t *testing.T, reason, what, out string, want []string) {
	t.Helper()
	rest := out
	for _, w := range want {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Errorf("%s\nthe log's %s must carry %q after %q:\n%s", reason, what, w, want, out)
			return
		}
		rest = rest[i+len(w):]
	}
}
