package entrypoint

// Batch mode (container.batch): the lead runs flux batch with a batch
// script of the command's lines, or of commands.script, or of the command
// verbatim with batchRaw.

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// TestRunnerBatch: in batch mode the lead's initial program is flux batch of
// flux-job.batch, which holds one flux submit per line of the command (or
// the command itself with batchRaw).
func TestRunnerBatch(t *testing.T) {
	t.Parallel()
	runCases(t, map[string]runCase{
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
	})
}

// batchCheck checks flux-job.batch, the batch script of batch mode: its
// text, that it is executable, and, when wantJobs is set, the flux calls it
// makes when flux batch runs it with the logs of the run r.
func batchCheck(wantFile string, wantJobs func(logs string) [][]string) func(t *testing.T, sb *sandbox, r result) {
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
	runCases(t, cases)
}
