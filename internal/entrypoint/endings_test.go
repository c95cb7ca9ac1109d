package entrypoint

// How a runner ends (endings.go, lifecycle.go): its exit code and the
// lead's termination message.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
