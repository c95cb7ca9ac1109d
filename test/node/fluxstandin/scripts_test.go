package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/entrypoint"
)

// TestRunnerScripts runs the project's own runner scripts (as
// internal/entrypoint writes them) against the double, one bash per pod on
// this machine: each "pod" has its own Flux view volume with the double as
// view/bin/flux, the certificate as the Secret mounts it (0444), and a fake
// hostname command; broker.toml points the overlay at 127.0.0.1 ports
// instead of eth0 and the headless Service. It is what the node tier runs
// on a real node, minus the node.
func TestRunnerScripts(t *testing.T) {
	if testing.Short() {
		t.Skip("runs brokers")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	cases := map[string]struct {
		reason    string
		size      int32
		mutate    func(mc *v1alpha2.MiniCluster, logs string)
		wantExit  int
		wantLines []string // the lead's stdout lines with this prefix, sorted
		prefix    string
		wantFiles map[string]string // in the logs directory
		wantTerm  string            // the termination message's first line; the lead's last words follow
	}{
		"SubmitOnEveryPod": {
			reason: "tasks: 3 on 3 pods: flux submit -N 3 -n3 runs a task on each broker; every runner exits 0.",
			size:   3,
			mutate: func(mc *v1alpha2.MiniCluster, _ string) {
				mc.Spec.Tasks = ptr(int32(3))
				mc.Spec.Containers[0].Command = `sh -c 'echo "task $FLUX_TASK_RANK on $(flux getattr hostname)"'`
			},
			prefix:    "task ",
			wantLines: []string{"task 0 on flux-sample-0", "task 1 on flux-sample-1", "task 2 on flux-sample-2"},
			wantTerm:  "flux job on flux-sample-0 exited with 0",
		},
		"FailingJob": {
			reason: "A failing job fails the lead runner with 42, the job's code in the termination message.",
			size:   2,
			mutate: func(mc *v1alpha2.MiniCluster, _ string) {
				mc.Spec.Containers[0].Command = "sh -c 'exit 5'"
			},
			wantExit: entrypoint.JobFailedExitCode,
			wantTerm: "flux job on flux-sample-0 exited with 5",
		},
		"BatchMode": {
			reason: "Batch mode: flux batch of the jobs, each line's output in job-<line>.out of the logs directory.",
			size:   2,
			mutate: func(mc *v1alpha2.MiniCluster, logs string) {
				c := &mc.Spec.Containers[0]
				c.Batch, c.Logs = true, logs
				c.Command = "echo one\n\nsh -c 'echo two on $(flux getattr hostname)'"
			},
			wantFiles: map[string]string{"job-0.out": "one\n", "job-2.out": "two on flux-sample-0\n", "job-0.err": "", "job-2.err": ""},
			wantTerm:  "flux job on flux-sample-0 exited with 0",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			root := shortTempDir(t)
			logs := filepath.Join(root, "fluxout")
			mc := &v1alpha2.MiniCluster{}
			mc.Name = "flux-sample"
			mc.Spec.Size = ptr(tc.size)
			mc.Spec.Containers = []v1alpha2.MiniClusterContainer{{Name: "app", RunFlux: true}}
			tc.mutate(mc, logs)
			v1alpha2.SetDefaults(mc, v1alpha2.PlatformDefaults{})

			cert, _, _ := testCert(t)
			var hosts []string
			for i := 0; i < int(tc.size); i++ {
				uri := fmt.Sprintf("tcp://127.0.0.1:%d", freePort(t))
				hosts = append(hosts, fmt.Sprintf("{host = 'flux-sample-%d', bind = '%s', connect = '%s'}", i, uri, uri))
			}
			pods := make([]*pod, tc.size)
			for i := range pods {
				pods[i] = startPod(t, bash, root, i, mc, cert, strings.Join(hosts, ", "))
			}
			logsOf := func() string {
				var b strings.Builder
				for i, p := range pods {
					fmt.Fprintf(&b, "--- pod %d stdout:\n%s--- pod %d stderr:\n%s", i, p.out, i, p.err)
				}
				return b.String()
			}
			for i, p := range pods {
				select {
				case code := <-p.done:
					want := 0
					if i == 0 {
						want = tc.wantExit
					}
					if code != want {
						t.Errorf("%s\npod %d's runner exited %d, want %d\n%s", tc.reason, i, code, want, logsOf())
					}
				case <-time.After(60 * time.Second):
					t.Fatalf("%s\npod %d's runner did not finish\n%s", tc.reason, i, logsOf())
				}
			}
			if testing.Verbose() {
				t.Log(logsOf())
			}
			if tc.prefix != "" {
				var got []string
				for _, l := range strings.Split(pods[0].out.String(), "\n") {
					if strings.HasPrefix(l, tc.prefix) {
						got = append(got, l)
					}
				}
				sort.Strings(got)
				if diff := cmp.Diff(tc.wantLines, got); diff != "" {
					t.Errorf("%s\njob output: -want, +got:\n%s\n%s", tc.reason, diff, logsOf())
				}
			}
			for f, want := range tc.wantFiles {
				b, err := os.ReadFile(filepath.Join(logs, f))
				if diff := cmp.Diff(want, string(b)); err != nil || diff != "" {
					t.Errorf("%s\n%s (%v): -want, +got:\n%s\n%s", tc.reason, f, err, diff, logsOf())
				}
			}
			term, _ := os.ReadFile(filepath.Join(root, "pod0", "termination-log"))
			first, _, _ := strings.Cut(string(term), "\n")
			if diff := cmp.Diff(tc.wantTerm, first); diff != "" {
				t.Errorf("%s\ntermination message: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// pod is one pod's runner script running.
type pod struct {
	cmd  *exec.Cmd
	out  *syncBuffer
	err  *syncBuffer
	done chan int
}

// startPod lays out pod i under root as the init container would have
// (config, host list, view with the double, certificate Secret) and runs
// its runner script.
func startPod(t *testing.T, bash, root string, i int, mc *v1alpha2.MiniCluster, cert, hosts string) *pod {
	t.Helper()
	dir := filepath.Join(root, fmt.Sprintf("pod%d", i))
	mp := filepath.Join(dir, "mp")
	paths := entrypoint.Paths{
		Entrypoints: filepath.Join(dir, "ep"), Curve: filepath.Join(dir, "curve"),
		Software: filepath.Join(dir, "software"), Home: filepath.Join(dir, "home"),
		TerminationLog: filepath.Join(dir, "termination-log"),
	}
	pmc := mc.DeepCopy()
	pmc.Spec.Flux.Container.MountPath = mp
	pl := entrypoint.Plan{Layout: entrypoint.Layout{MountPath: mp, Fixed: paths}, Name: pmc.Name,
		Size: pmc.Spec.SizeValue(), Tasks: pmc.Spec.TasksValue(), Quorum: pmc.Spec.MinSize, LogLevel: pmc.Spec.Flux.LogLevelValue()}
	cmds, errs := entrypoint.Prepare(pmc, 0, pl)
	if len(errs) > 0 {
		t.Fatal(errs.ToAggregate())
	}
	pl.Commands = cmds
	script := entrypoint.Runner(pmc, 0, pl)
	l := pl.Layout

	for _, d := range []string{paths.Entrypoints, paths.Curve, paths.Software, paths.Home, l.ConfigDir(), l.SystemDir(),
		filepath.Join(mp, "software"), filepath.Join(l.View(), "bin"), filepath.Join(dir, "bin"), filepath.Join(l.Config(), "run"),
		filepath.Join(l.Config(), "var/lib"), filepath.Join(l.Config(), "curve")} {
		must(t, os.MkdirAll(d, 0o755))
	}
	must(t, os.WriteFile(paths.TerminationLog, nil, 0o666))
	must(t, os.WriteFile(filepath.Join(l.SystemDir(), entrypoint.HostlistKey), []byte(fmt.Sprintf("flux-sample-[0-%d]", pmc.Spec.SizeValue()-1)), 0o644))
	toml := fmt.Sprintf("[resource]\npath = '%s'\n\n[bootstrap]\ncurve_cert = '%s'\ndefault_port = 8050\nhosts = [%s]\n", l.Resources(), l.CurveCert(), hosts)
	must(t, os.WriteFile(filepath.Join(l.ConfigDir(), entrypoint.BrokerConfigKey), []byte(toml), 0o644))
	must(t, os.WriteFile(l.CurveSecret(), []byte(cert), 0o444)) // as the Secret volume mounts it
	self, err := os.ReadFile(filepath.Join(fluxBinary(t), "flux"))
	must(t, err)
	must(t, os.WriteFile(filepath.Join(l.View(), "bin", "flux"), self, 0o755))
	host := fmt.Sprintf("flux-sample-%d", i)
	must(t, os.WriteFile(filepath.Join(dir, "bin", "hostname"), []byte("#!/bin/sh\necho "+host+"\n"), 0o755))
	file := filepath.Join(dir, "wait-0.sh")
	must(t, os.WriteFile(file, []byte(script), 0o755))

	cmd := exec.Command(bash, file)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + filepath.Join(dir, "bin") + ":/usr/bin:/bin", "HOME=" + paths.Home,
		"LANG=C", hostnameEnvForTests + "=" + host}
	p := &pod{cmd: cmd, out: &syncBuffer{}, err: &syncBuffer{}, done: make(chan int, 1)}
	cmd.Stdout, cmd.Stderr = p.out, p.err
	must(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() }) // an error once it has exited, harmless
	go func() {
		_ = cmd.Wait() // its exit status is in cmd.ProcessState
		p.done <- exitCode(cmd.ProcessState)
	}()
	return p
}
