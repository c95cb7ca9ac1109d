package entrypoint

// Injection safety: hostile user strings neither
// break a script nor run anything, and reach Flux literally.

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/shell"
)

// canary is what a successful injection creates (relative to the script's
// working directory, so the hostile strings need no '/').
const canary = "pwned"

// hostile is one value with every character that could break or inject:
// quotes, expansions, command substitutions, separators, globs, newlines.
const hostile = `a"b'c $HOME ${HOME} $(touch pwned) ` + "`touch pwned`" + ` ; touch pwned & touch pwned | * ? [x] \ ` + "\n" + `x || touch pwned #`

// hostileCommand is a command string (split into words like a shell
// would, without expanding) and hostileWords the words it must become.
var (
	hostileCommand = `echo 'a"b' "c'd" '$HOME' $HOME '$(touch pwned)' $(touch pwned) '` + "`touch pwned`' `touch` ';' ; '*' * 'x\ny' '&&' && \\$x \"$(touch pwned)\" #"
	hostileWords   = []string{"echo", `a"b`, `c'd`, "$HOME", "$HOME", "$(touch pwned)", "$(touch", "pwned)", "`touch pwned`", "`touch`", ";", ";", "*", "*", "x\ny", "&&", "&&", "$x", "$(touch pwned)", "#"}
)

// noCanary fails if any file named canary exists under the sandbox or in
// the script's working directory.
func noCanary(t *testing.T, reason string, sb *sandbox) {
	t.Helper()
	_ = filepath.WalkDir(sb.root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == canary {
			t.Errorf("%s\ninjection: %s was created", reason, p)
		}
		return nil
	})
	if exists(filepath.Join("/tmp", canary)) {
		t.Errorf("%s\ninjection: /tmp/%s exists", reason, canary)
	}
}

func bashSyntax(t *testing.T, reason, script string) {
	t.Helper()
	bash := tool(t, "bash", "")
	cmd := exec.Command(bash, "-n")
	cmd.Stdin = strings.NewReader(script)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("%s\nbash -n: %v\n%s\nscript:\n%s", reason, err, out, script)
	}
}

func TestSplitAgreesWithTestWords(t *testing.T) {
	// Guard for the table below: the expected words are what a shell would
	// make of hostileCommand if it expanded nothing.
	got, err := shell.Split(hostileCommand)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(hostileWords, got); diff != "" {
		t.Fatalf("hostileWords: -want, +got:\n%s", diff)
	}
}

func TestRunnerInjection(t *testing.T) {
	cases := map[string]struct {
		reason string
		mutate func(mc *v1alpha2.MiniCluster, sb *sandbox)
		host   string
		want   func(sb *sandbox) [][]string
		check  func(t *testing.T, sb *sandbox, r result)
	}{
		"Command": {
			reason: "The command's words reach flux submit literally.",
			mutate: func(mc *v1alpha2.MiniCluster, _ *sandbox) { mc.Spec.Containers[0].Command = hostileCommand },
			want: func(sb *sandbox) [][]string {
				return [][]string{encode(), start(sb.mp, std(), nil, submit(hostileWords...)...)}
			},
		},
		"CommandLauncher": {
			reason: "In launcher mode the words are the initial program, literally.",
			mutate: func(mc *v1alpha2.MiniCluster, _ *sandbox) {
				mc.Spec.Containers[0].Command = hostileCommand
				mc.Spec.Containers[0].Launcher = true
			},
			want: func(sb *sandbox) [][]string {
				return [][]string{encode(), start(sb.mp, std(), nil, hostileWords...)}
			},
		},
		"Prefix": {
			reason: "The prefix's words come literally before the initial program.",
			mutate: func(mc *v1alpha2.MiniCluster, _ *sandbox) { mc.Spec.Containers[0].Commands.Prefix = hostileCommand },
			want: func(sb *sandbox) [][]string {
				return [][]string{encode(), start(sb.mp, std(), nil, cat(hostileWords, submit(hello...))...)}
			},
		},
		"OptionFlags": {
			reason: "optionFlags' words are flags of flux submit, literally.",
			mutate: func(mc *v1alpha2.MiniCluster, _ *sandbox) { mc.Spec.Flux.OptionFlags = hostileCommand },
			want: func(sb *sandbox) [][]string {
				return [][]string{encode(), start(sb.mp, std(), nil, cat(words("flux", "submit", "-n1"), hostileWords, words("--quiet", "--watch"), hello)...)}
			},
		},
		"OptionFlagsBatch": {
			reason: "optionFlags inside the sh -c of batch mode stay words.",
			mutate: func(mc *v1alpha2.MiniCluster, _ *sandbox) {
				mc.Spec.Flux.OptionFlags = hostileCommand
				mc.Spec.Containers[0].Batch = true
			},
			check: func(t *testing.T, sb *sandbox, r result) {
				t.Helper()
				argv := r.calls[1]
				if len(argv) < 2 || argv[len(argv)-2] != "-c" {
					t.Fatalf("no sh -c: %q", argv)
				}
				// Run the sh -c program against the fake flux.
				sb.reset(t)
				got := sb.run(t, argv[len(argv)-1], leadHost, nil)
				want := [][]string{cat(words("batch", "-n1"), hostileWords, words("--flags", "waitable", sb.mp+"/flux-job.batch")), {"job", "wait", "--all"}}
				if diff := cmp.Diff(want, got.calls); diff != "" {
					t.Errorf("calls of sh -c: -want, +got:\n%s", diff)
				}
			},
		},
		"SubmitCommand": {
			reason: "submitCommand's words replace flux submit literally.",
			mutate: func(mc *v1alpha2.MiniCluster, _ *sandbox) { mc.Spec.Flux.SubmitCommand = hostileCommand },
			want: func(sb *sandbox) [][]string {
				return [][]string{encode(), start(sb.mp, std(), nil, cat(hostileWords, words("-n1", "--quiet", "--watch"), hello)...)}
			},
		},
		"Wrap": {
			reason: "wrap is one literal --wrap= word.",
			mutate: func(mc *v1alpha2.MiniCluster, _ *sandbox) { mc.Spec.Flux.Wrap = hostile },
			want: func(sb *sandbox) [][]string {
				return [][]string{encode(), start(sb.mp, std(), words("--wrap="+hostile), submit(hello...)...)}
			},
		},
		"ArchivePath": {
			reason: "archive.path is tested and passed literally, to restore and to dump.",
			mutate: func(mc *v1alpha2.MiniCluster, sb *sandbox) {
				mc.Spec.Archive.Path = filepath.Join(sb.root, hostile+".tgz")
				_ = os.WriteFile(mc.Spec.Archive.Path, []byte("x"), 0o644)
			},
			want: func(sb *sandbox) [][]string {
				a := filepath.Join(sb.root, hostile+".tgz")
				return [][]string{encode(), start(sb.mp, std(), nil, cat(words("-Scontent.restore="+a, "-Scontent.dump="+a), submit(hello...))...)}
			},
		},
		"Environment": {
			reason: "flux.environment values are exported literally, in the runner and in flux-view.sh.",
			mutate: func(mc *v1alpha2.MiniCluster, _ *sandbox) {
				mc.Spec.Flux.Environment = map[string]string{"HOSTILE": hostile}
			},
			check: func(t *testing.T, sb *sandbox, r result) {
				t.Helper()
				if got := r.envs[1]["HOSTILE"]; got != hostile {
					t.Errorf("flux saw HOSTILE=%q, want %q", got, hostile)
				}
				if got := sourceView(t, sb, "HOSTILE")["HOSTILE"]; got != hostile {
					t.Errorf("flux-view.sh sets HOSTILE=%q, want %q", got, hostile)
				}
			},
		},
		"PythonPath": {
			reason: "pythonPath is exported literally, in the runner and in flux-view.sh.",
			mutate: func(mc *v1alpha2.MiniCluster, _ *sandbox) { mc.Spec.Flux.Container.PythonPath = hostile },
			check: func(t *testing.T, sb *sandbox, r result) {
				t.Helper()
				if got := r.envs[1]["PYTHONPATH"]; got != ":"+hostile {
					t.Errorf("flux saw PYTHONPATH=%q", got)
				}
				if got := sourceView(t, sb, "PYTHONPATH")["PYTHONPATH"]; got != ":"+hostile {
					t.Errorf("flux-view.sh sets PYTHONPATH=%q", got)
				}
			},
		},
		"LogsDir": {
			reason: "The logs directory is FLUX_OUTPUT_DIR literally, and batch jobs' --error/--output keep it whole.",
			mutate: func(mc *v1alpha2.MiniCluster, sb *sandbox) {
				mc.Spec.Containers[0].Logs = filepath.Join(sb.root, hostile)
				mc.Spec.Containers[0].Batch = true
			},
			check: func(t *testing.T, sb *sandbox, r result) {
				t.Helper()
				logs := filepath.Join(sb.root, hostile)
				if got := r.envs[1]["FLUX_OUTPUT_DIR"]; got != logs {
					t.Errorf("flux saw FLUX_OUTPUT_DIR=%q, want %q", got, logs)
				}
				if !exists(logs) {
					t.Errorf("the logs directory was not created")
				}
				sb.reset(t)
				got := sb.run(t, readFile(t, filepath.Join(sb.mp, "flux-job.batch")), leadHost, map[string]string{"FLUX_OUTPUT_DIR": logs})
				want := [][]string{
					cat(words("submit", "--flags", "waitable", "--error="+logs+"/job-0.err", "--output="+logs+"/job-0.out"), hello),
					{"queue", "idle"}, {"jobs", "-a"}, {"job", "wait", "--all"},
				}
				if diff := cmp.Diff(want, got.calls); diff != "" {
					t.Errorf("calls of flux-job.batch: -want, +got:\n%s", diff)
				}
			},
		},
		"Hooks": {
			reason: "Hooks are shell code: quoting inside them is honoured, so quoted hostile text prints literally and runs nothing.",
			mutate: func(mc *v1alpha2.MiniCluster, _ *sandbox) {
				c := &mc.Spec.Containers[0].Commands
				quoted := shell.Quote(hostile)
				c.Init = "printf 'init=%s\\n' " + quoted
				c.Pre = "printf 'pre=%s\\n' " + quoted
				c.BrokerPre = "printf 'brokerPre=%s\\n' " + quoted
				c.Post = "printf 'post=%s\\n' " + quoted
			},
			want: func(sb *sandbox) [][]string {
				return [][]string{encode(), start(sb.mp, std(), nil, submit(hello...)...)}
			},
			check: func(t *testing.T, _ *sandbox, r result) {
				t.Helper()
				for _, h := range []string{"init", "pre", "brokerPre", "post"} {
					if !strings.Contains(r.stdout, h+"="+hostile+"\n") {
						t.Errorf("%s hook output missing or altered:\n%s", h, r.stdout)
					}
				}
			},
		},
		"BrokenHooks": {
			reason: "Hooks with unbalanced quotes fail alone; the script carries on to flux.",
			mutate: func(mc *v1alpha2.MiniCluster, _ *sandbox) {
				c := &mc.Spec.Containers[0].Commands
				c.Init, c.Pre, c.BrokerPre, c.WorkerPre, c.Post = `echo "a`, `echo 'b`, "echo `c", `echo $(d`, `echo "e'`
			},
			want: func(sb *sandbox) [][]string {
				return [][]string{encode(), start(sb.mp, std(), nil, submit(hello...)...)}
			},
		},
		"BrokenHooksWorker": {
			reason: "A broken workerPre does not stop the worker.",
			host:   workHost,
			mutate: func(mc *v1alpha2.MiniCluster, _ *sandbox) {
				c := &mc.Spec.Containers[0].Commands
				c.WorkerPre = "echo 'x\n$(touch pwned)"
			},
			want: func(sb *sandbox) [][]string {
				return [][]string{encode(), start(sb.mp, std(), nil)}
			},
		},
		"Script": {
			reason: "commands.script is written verbatim; nothing in it runs while writing it.",
			mutate: func(mc *v1alpha2.MiniCluster, _ *sandbox) {
				mc.Spec.Containers[0].Commands.Script = hostile + "\nEOF\n'EOF'\n"
			},
			want: func(sb *sandbox) [][]string {
				return [][]string{encode(), start(sb.mp, std(), nil, submit("/bin/bash", "/tmp/custom-entrypoint.sh")...)}
			},
			check: func(t *testing.T, _ *sandbox, _ result) {
				t.Helper()
				if got := readFile(t, "/tmp/custom-entrypoint.sh"); got != hostile+"\nEOF\n'EOF'\n" {
					t.Errorf("custom script = %q", got)
				}
			},
		},
		"BatchRaw": {
			reason: "batchRaw lines are written verbatim (they are the batch script's own shell code) without running them.",
			mutate: func(mc *v1alpha2.MiniCluster, _ *sandbox) {
				mc.Spec.Containers[0].Command = "echo '$(touch pwned)' \"`x`\"\n'EOF'"
				mc.Spec.Containers[0].Batch = true
				mc.Spec.Containers[0].BatchRaw = true
			},
			check: func(t *testing.T, sb *sandbox, _ result) {
				t.Helper()
				if got, want := readFile(t, filepath.Join(sb.mp, "flux-job.batch")), "#!/bin/bash\necho '$(touch pwned)' \"`x`\"\n'EOF'\n"; got != want {
					t.Errorf("flux-job.batch = %q, want %q", got, want)
				}
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			sb := newSandbox(t)
			mc := claim(4, "echo hello world", func(mc *v1alpha2.MiniCluster) {
				sb.use(mc)
				tc.mutate(mc, sb)
			})
			script := runner(t, mc, sb.paths)
			bashSyntax(t, tc.reason, script)
			host := tc.host
			if host == "" {
				host = leadHost
			}
			r := sb.run(t, script, host, nil)
			if r.exit != 0 {
				t.Errorf("%s\nexit %d\nstderr:\n%s", tc.reason, r.exit, r.stderr)
			}
			if len(r.calls) < 2 || (r.calls[1][0] != "start" && r.calls[1][0] != "broker") {
				t.Fatalf("%s\nthe script did not reach flux start: %q\nstderr:\n%s", tc.reason, r.calls, r.stderr)
			}
			if tc.want != nil {
				if diff := cmp.Diff(tc.want(sb), r.calls); diff != "" {
					t.Errorf("%s\nflux calls: -want, +got:\n%s", tc.reason, diff)
				}
			}
			if tc.check != nil {
				tc.check(t, sb, r)
			}
			noCanary(t, tc.reason, sb)
		})
	}
}

// TestDataFieldsStayData puts injection payloads, one field at a time,
// into every field that reaches a script as data, and runs every script of
// the claim with the fake flux playing the instance (flux start runs its
// initial program, flux batch its script): the init script, the lead's and
// a follower's runner, and a sidecar that sources flux-view.sh. No payload
// may run. Hooks (commands.*), commands.script, batchRaw and a sidecar's
// command are shell code by design and not in the list.
func TestDataFieldsStayData(t *testing.T) {
	t.Parallel()
	// payload is an attack as a raw value and as a command string that
	// still splits into words (a word field with an open quote is refused
	// by Prepare, which TestPrepare covers). mixed breaks out of single
	// quotes, double quotes, unquoted words and heredocs alike, and splits.
	type payload struct{ raw, words string }
	mixed := "x';touch pwned;'y\";touch pwned;\"z $(touch pwned) `touch pwned` ;touch pwned"
	payloads := map[string]payload{
		"Mixed":      {mixed, mixed},
		"Everything": {hostile, hostileCommand},
	}
	// A field is set to v, the payload in the form the field takes, in a
	// claim whose sandbox is sb. Paths get the payload as a file name.
	type fieldCase struct {
		words bool // a command string, split by Prepare
		set   func(mc *v1alpha2.MiniCluster, sb *sandbox, v string)
	}
	batch := func(mc *v1alpha2.MiniCluster) { mc.Spec.Containers[0].Batch = true }
	mountPath := func(mc *v1alpha2.MiniCluster, sb *sandbox, v string) {
		sb.mp = filepath.Join(sb.root, v)
		mc.Spec.Flux.Container.MountPath = sb.mp
	}
	fields := map[string]fieldCase{
		"Name":        {set: func(mc *v1alpha2.MiniCluster, _ *sandbox, v string) { mc.Name = v }},
		"SidecarName": {set: func(mc *v1alpha2.MiniCluster, _ *sandbox, v string) { mc.Spec.Containers[1].Name = v }},
		"MountPath":   {set: mountPath},
		"MountPathBatch": {set: func(mc *v1alpha2.MiniCluster, sb *sandbox, v string) {
			mountPath(mc, sb, v)
			batch(mc)
		}},
		"EnvironmentValue": {set: func(mc *v1alpha2.MiniCluster, _ *sandbox, v string) {
			mc.Spec.Flux.Environment = map[string]string{"VALUE": v}
		}},
		"EnvironmentKey": {set: func(mc *v1alpha2.MiniCluster, _ *sandbox, v string) {
			// Validation refuses such a key; the scripts must not rely on it.
			mc.Spec.Flux.Environment = map[string]string{v: "x"}
		}},
		"PythonPath": {set: func(mc *v1alpha2.MiniCluster, _ *sandbox, v string) { mc.Spec.Flux.Container.PythonPath = v }},
		"Logs": {set: func(mc *v1alpha2.MiniCluster, sb *sandbox, v string) {
			mc.Spec.Containers[0].Logs = filepath.Join(sb.root, v)
			batch(mc) // the batch script uses it too
		}},
		"ArchivePath": {set: func(mc *v1alpha2.MiniCluster, sb *sandbox, v string) {
			mc.Spec.Archive.Path = filepath.Join(sb.root, v, v+".tar")
		}},
		"Wrap":           {set: func(mc *v1alpha2.MiniCluster, _ *sandbox, v string) { mc.Spec.Flux.Wrap = v }},
		"ConnectTimeout": {set: func(mc *v1alpha2.MiniCluster, _ *sandbox, v string) { mc.Spec.Flux.ConnectTimeout = &v }},
		"Topology":       {set: func(mc *v1alpha2.MiniCluster, _ *sandbox, v string) { mc.Spec.Flux.Topology = v }},
		"CurveCertText": {set: func(_ *v1alpha2.MiniCluster, sb *sandbox, v string) {
			mustWrite(t, filepath.Join(sb.paths.Curve, CurveFile), v, 0o644)
		}},
		"HostlistText": {set: func(_ *v1alpha2.MiniCluster, sb *sandbox, v string) {
			mustWrite(t, filepath.Join(sb.paths.Entrypoints, HostlistKey), v, 0o644)
		}},
		"BrokerConfigText": {set: func(_ *v1alpha2.MiniCluster, sb *sandbox, v string) {
			mustWrite(t, filepath.Join(sb.paths.Entrypoints, BrokerConfigKey), v, 0o644)
		}},
		"CommandSubmit": {words: true, set: func(mc *v1alpha2.MiniCluster, _ *sandbox, v string) { mc.Spec.Containers[0].Command = v }},
		"CommandLauncher": {words: true, set: func(mc *v1alpha2.MiniCluster, _ *sandbox, v string) {
			// The words are the initial program, run without a shell.
			mc.Spec.Containers[0].Command = "echo " + v
			mc.Spec.Containers[0].Launcher = true
		}},
		"CommandBatch": {words: true, set: func(mc *v1alpha2.MiniCluster, _ *sandbox, v string) {
			// A line is a job: no quoted newline.
			v = strings.ReplaceAll(v, "\n", " ")
			mc.Spec.Containers[0].Command = "echo " + v + "\n\necho " + v
			batch(mc)
		}},
		"CommandInteractive": {words: true, set: func(mc *v1alpha2.MiniCluster, _ *sandbox, v string) {
			mc.Spec.Containers[0].Command = v
			mc.Spec.Interactive = true
		}},
		"OptionFlags": {words: true, set: func(mc *v1alpha2.MiniCluster, _ *sandbox, v string) { mc.Spec.Flux.OptionFlags = v }},
		"OptionFlagsBatch": {words: true, set: func(mc *v1alpha2.MiniCluster, _ *sandbox, v string) {
			mc.Spec.Flux.OptionFlags = v
			batch(mc)
		}},
		"SubmitCommand": {words: true, set: func(mc *v1alpha2.MiniCluster, _ *sandbox, v string) { mc.Spec.Flux.SubmitCommand = "flux submit " + v }},
		"Prefix": {words: true, set: func(mc *v1alpha2.MiniCluster, _ *sandbox, v string) {
			mc.Spec.Containers[0].Commands.Prefix = "env " + v
			mc.Spec.Containers[0].Launcher = true
		}},
	}
	for fname, fc := range fields {
		for pname, pl := range payloads {
			t.Run(fname+"/"+pname, func(t *testing.T) {
				t.Parallel()
				v := pl.raw
				if fc.words {
					v = pl.words
				}
				sb := newSandbox(t)
				mustWrite(t, filepath.Join(sb.paths.Entrypoints, HostlistKey), "flux-sample-[0-3]", 0o644)
				mustWrite(t, filepath.Join(sb.paths.Entrypoints, BrokerConfigKey), "[bootstrap]\n", 0o644)
				mc := claim(2, "echo hello world", func(mc *v1alpha2.MiniCluster) {
					sb.use(mc)
					mc.Spec.Flux.NoWaitSocket = true
					mc.Spec.Containers = append(mc.Spec.Containers, v1alpha2.MiniClusterContainer{Name: "sidecar", Command: `. "${mp}/flux-view.sh" && flux proxy "${fluxsocket}" true`})
					fc.set(mc, sb, v)
				})
				reason := fmt.Sprintf("%s = %q", fname, v)
				p := plan(t, mc, sb.paths)
				lead := mc.Name + "-0"
				// The init container runs as with flux.container.disable:
				// this machine has no view image to copy from.
				initMC := mc.DeepCopy()
				initMC.Spec.Flux.Container.Disable = true
				scripts := []struct{ what, text, host string }{
					{"init", Init(initMC, p), lead},
					{"lead", Runner(mc, 0, p), lead},
					{"follower", Runner(mc, 0, p), "follower"},
					{"sidecar", Sidecar(mc, 1, p), lead},
				}
				for _, s := range scripts {
					bashSyntax(t, reason+" ("+s.what+")", s.text)
					sb.reset(t)
					r := sb.run(t, s.text, s.host, map[string]string{"FAKE_FLUX_INITIAL": "1"})
					if s.what == "lead" || s.what == "follower" {
						if len(r.calls) < 2 || (r.calls[1][0] != "start" && r.calls[1][0] != "broker") {
							t.Errorf("%s\nthe %s runner did not reach flux start: %q\nstderr:\n%s", reason, s.what, r.calls, r.stderr)
						}
					}
					noCanary(t, reason+" ("+s.what+")", sb)
				}
			})
		}
	}
}
