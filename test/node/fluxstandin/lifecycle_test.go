package main

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func socketExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode()&os.ModeSocket != 0
}

// TestSocketAtQuorum: the local socket, which the readiness probe tests,
// appears on rank 0 only at quorum, on a follower once its parent took it,
// and goes away on exit.
func TestSocketAtQuorum(t *testing.T) {
	if testing.Short() {
		t.Skip("runs brokers")
	}
	cases := map[string]struct {
		reason      string
		quorum      []string
		upBeforeAll bool
	}{
		"AllBrokers": {
			reason: "By default the quorum is every broker: rank 0 has no socket while one is missing.",
		},
		"QuorumTwo": {
			reason:      "-Sbroker.quorum=2 (spec.flux.minimalService's elastic start): two brokers are enough.",
			quorum:      []string{"-Sbroker.quorum=2"},
			upBeforeAll: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := newInstance(t, 3, "")
			opts := append([]string{"-Stbon.fanout=256", "-Sbroker.rc2_none"}, tc.quorum...)
			in.start(0, opts)
			in.start(1, opts)
			in.waitSocket(1, 10*time.Second)
			time.Sleep(time.Second)
			if got := socketExists(in.socket(0)); got != tc.upBeforeAll {
				t.Errorf("%s\nrank 0 socket with 2 of 3 brokers: %v, want %v\n%s", tc.reason, got, tc.upBeforeAll, in.logs())
			}
			in.start(2, opts)
			in.waitSocket(0, 10*time.Second)
			in.waitSocket(2, 10*time.Second)
			out, errs, code := in.client(2, "overlay", "status")
			want := "0 node-0: full\n├─ 1 node-1: full\n└─ 2 node-2: full\n"
			if diff := cmp.Diff(want, out); diff != "" || code != 0 {
				t.Errorf("%s\nflux overlay status from rank 2 (exit %d, %s): -want, +got:\n%s", tc.reason, code, errs, diff)
			}
			if _, errs, code := in.client(1, "shutdown", "--quiet"); code != 0 {
				t.Fatalf("flux shutdown: %d %s", code, errs)
			}
			for i := 0; i < 3; i++ {
				if code := in.wait(i, 20*time.Second); code != 0 {
					t.Errorf("%s\nbroker %d exited %d after flux shutdown, want 0\n%s", tc.reason, i, code, in.logs())
				}
				if socketExists(in.socket(i)) {
					t.Errorf("broker %d left its socket behind", i)
				}
			}
		})
	}
}

// TestInteractiveInstance: an instance without initial program stays up;
// clients on any broker use it; flux shutdown ends it.
func TestInteractiveInstance(t *testing.T) {
	if testing.Short() {
		t.Skip("runs brokers")
	}
	in := newInstance(t, 3, "")
	opts := []string{"-Stbon.topo=kary:1", "-Sbroker.rc2_none"}
	for i := 0; i < 3; i++ {
		in.start(i, opts)
	}
	in.waitSocket(0, 10*time.Second)
	in.waitSocket(2, 10*time.Second)
	cases := map[string]struct {
		reason   string
		broker   int
		args     []string
		want     string
		wantCode int
	}{
		"RunFromFollower": {
			reason: "A job submitted on rank 2 goes to rank 0 and runs on every broker, through the chain 0-1-2.",
			broker: 2,
			args:   []string{"run", "-N3", "--label-io", "sh", "-c", "flux getattr rank"},
			want:   "0: 0\n1: 1\n2: 2\n",
		},
		"Getattr": {
			reason: "getattr answers for the broker asked.",
			broker: 1,
			args:   []string{"getattr", "hostname"},
			want:   "node-1\n",
		},
		"Proxy": {
			reason: "flux proxy runs its command against the URI given.",
			broker: 0,
			args:   []string{"proxy", "local://SOCKET1", "flux", "getattr", "rank"},
			want:   "1\n",
		},
		"ProxyExitStatus": {
			reason:   "flux proxy exits with its command's status.",
			broker:   0,
			args:     []string{"proxy", "local://SOCKET1", "sh", "-c", "exit 7"},
			wantCode: 7,
		},
		"FailedRun": {
			reason:   "flux run exits with the job's status; a signal is 128+signal.",
			broker:   1,
			args:     []string{"run", "-n1", "sh", "-c", "kill -9 $$"},
			wantCode: 137,
		},
		"CommandNotFound": {
			reason:   "A task that cannot start exits 127, as from a shell.",
			broker:   0,
			args:     []string{"run", "-n1", "no-such-command-xyz"},
			wantCode: 127,
		},
		"Unsatisfiable": {
			reason:   "More nodes than the instance has: the job fails at once instead of waiting for ever.",
			broker:   0,
			args:     []string{"run", "-N4", "true"},
			wantCode: 1,
		},
		"NotImplemented": {
			reason:   "What the double does not do fails, saying so.",
			broker:   0,
			args:     []string{"submit", "--dependency=afterok:1", "true"},
			wantCode: 1,
		},
		"ResourceList": {
			reason: "R was not configured: each broker's own cores; all three brokers free.",
			broker: 2,
			args:   []string{"resource", "list", "-s", "free", "-n"},
			want:   "", // checked below
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			args := make([]string, len(tc.args))
			for i, a := range tc.args {
				args[i] = strings.ReplaceAll(a, "SOCKET1", in.socket(1))
			}
			out, errs, code := in.client(tc.broker, args...)
			if diff := cmp.Diff(tc.wantCode, code); diff != "" {
				t.Errorf("%s\nexit status: -want, +got:\n%s\nstderr: %s", tc.reason, diff, errs)
			}
			if name == "ResourceList" {
				if !strings.HasPrefix(strings.TrimSpace(out), "free      3") || !strings.HasSuffix(strings.TrimSpace(out), "node-[0-2]") {
					t.Errorf("%s\ngot %q", tc.reason, out)
				}
				return
			}
			if name == "NotImplemented" {
				if !strings.Contains(errs, "is not implemented by the test double") {
					t.Errorf("%s\nstderr %q", tc.reason, errs)
				}
				return
			}
			// Tasks on different brokers write in any order.
			if diff := cmp.Diff(sortLines(tc.want), sortLines(out)); diff != "" {
				t.Errorf("%s\nstdout: -want, +got:\n%s\nstderr: %s", tc.reason, diff, errs)
			}
		})
	}
	in.client(0, "shutdown")
	for i := 0; i < 3; i++ {
		if code := in.wait(i, 20*time.Second); code != 0 {
			t.Errorf("broker %d exited %d, want 0\n%s", i, code, in.logs())
		}
	}
}

// TestBatchMode runs the batch golden's lead command: flux batch of a
// script submitting waitable jobs, then flux job wait --all.
func TestBatchMode(t *testing.T) {
	if testing.Short() {
		t.Skip("runs brokers")
	}
	cases := map[string]struct {
		reason   string
		jobs     []string
		wantExit int
		wantOut  map[string]string
	}{
		"AllSucceed": {
			reason:   "Every job succeeds: the batch job, then flux start, exit 0; each job's output is in its file.",
			jobs:     []string{"echo hello world 1", "echo hello world 2"},
			wantExit: 0,
			wantOut:  map[string]string{"job-0.out": "hello world 1\n", "job-1.out": "hello world 2\n"},
		},
		"OneFails": {
			reason:   "A failing job fails flux job wait --all in the script, so the batch job, so the outer wait: 1.",
			jobs:     []string{"echo hello world 1", "false"},
			wantExit: 1,
			wantOut:  map[string]string{"job-0.out": "hello world 1\n", "job-1.out": ""},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := newInstance(t, 2, "")
			outDir := filepath.Join(in.dir, "fluxout")
			must(t, os.MkdirAll(outDir, 0o755))
			script := "#!/bin/bash\n"
			for i, j := range tc.jobs {
				script += "flux submit --flags waitable --error=\"${FLUX_OUTPUT_DIR}/job-" + strconv.Itoa(i) + ".err\" --output=\"${FLUX_OUTPUT_DIR}/job-" + strconv.Itoa(i) + ".out\" " + j + "\n"
			}
			script += "flux queue idle\nflux jobs -a\nflux job wait --all\n"
			batch := filepath.Join(in.dir, "flux-job.batch")
			must(t, os.WriteFile(batch, []byte(script), 0o755))
			in.extraEnv = []string{"FLUX_OUTPUT_DIR=" + outDir}
			opts := []string{"-Stbon.fanout=256"}
			in.start(1, opts)
			in.start(0, opts, "sh", "-c", "flux batch -n1 --flags waitable "+batch+" && flux job wait --all")
			if diff := cmp.Diff(tc.wantExit, in.wait(0, 60*time.Second)); diff != "" {
				t.Errorf("%s\nexit status: -want, +got:\n%s\n%s", tc.reason, diff, in.logs())
			}
			for f, want := range tc.wantOut {
				got, err := os.ReadFile(filepath.Join(outDir, f))
				if err != nil || string(got) != want {
					t.Errorf("%s\n%s: %q, %v; want %q\n%s", tc.reason, f, got, err, want, in.logs())
				}
			}
			// flux batch's own output: flux-<id>.out in the working directory.
			if m, _ := filepath.Glob(filepath.Join(in.dir, "flux-f*.out")); len(m) != 1 {
				t.Errorf("%s\nthe batch job's output file: found %v", tc.reason, m)
			}
		})
	}
}

func sortLines(s string) []string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	sort.Strings(l)
	return l
}

// TestBrokerFailures: a broker that cannot start, or loses its parent,
// exits non-zero, saying why in Flux's words.
func TestBrokerFailures(t *testing.T) {
	if testing.Short() {
		t.Skip("runs brokers")
	}
	cases := map[string]struct {
		reason  string
		extra   string // appended to broker.toml
		mutate  func(in *instance)
		opts    []string
		wantErr string
	}{
		"UnknownBootstrapKey": {
			reason:  "broker.toml with a key Flux does not know.",
			mutate:  func(in *instance) { appendFile(in.t, filepath.Join(in.config, "broker.toml"), "enable_ipv4 = true\n") },
			wantErr: "flux-standin: flux-broker: Config file error [bootstrap]: 1 object item(s) left unpacked: enable_ipv4",
		},
		"GroupReadableCert": {
			reason:  "The certificate as the Secret mounts it (0444).",
			mutate:  func(in *instance) { must(in.t, os.Chmod(filepath.Join(in.dir, "curve.cert"), 0o444)) }, //nolint:gosec // G302: the group-readable mode is what the case tests
			wantErr: "flux-standin: flux-broker: Error loading certificate: DIR/curve.cert: readable by group/other",
		},
		"UnknownAttribute": {
			reason:  "-S of an attribute Flux does not have.",
			opts:    []string{"-Stbon.topology=kary:2"},
			wantErr: "flux-standin: flux-broker: tbon.topology: unknown attribute",
		},
		"BadQuorum": {
			reason:  "A quorum larger than the instance.",
			opts:    []string{"-Sbroker.quorum=9"},
			wantErr: "flux-standin: flux-broker: Error parsing broker.quorum attribute",
		},
		"NoRundir": {
			reason:  "The rundir must exist (the runner makes it).",
			opts:    []string{"-Srundir=/nonexistent/run"},
			wantErr: "flux-standin: flux-broker: rundir /nonexistent/run: No such file or directory",
		},
		"BindNoSuchInterface": {
			reason: "Rank 0 binds an interface that does not exist: ZeroMQ's ENODEV.",
			mutate: func(in *instance) {
				must(in.t, os.WriteFile(filepath.Join(in.config, "broker.toml"), []byte("[bootstrap]\ncurve_cert = '"+filepath.Join(in.dir, "curve.cert")+
					"'\ndefault_port = 1\ndefault_bind = 'tcp://nosuchif0:%p'\ndefault_connect = 'tcp://%h:%p'\nhosts = [{host = 'node-[0-1]'}]\n"), 0o644))
			},
			wantErr: "flux-standin: flux-broker: error binding to tcp://nosuchif0:1: No such device",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := newInstance(t, 2, "")
			if tc.mutate != nil {
				tc.mutate(in)
			}
			in.start(0, append([]string{"-Slog-stderr-level=0"}, tc.opts...), "true")
			if code := in.wait(0, 20*time.Second); code != 1 {
				t.Errorf("%s\nexit status %d, want 1", tc.reason, code)
			}
			want := strings.ReplaceAll(tc.wantErr, "DIR", in.dir)
			if diff := cmp.Diff(want, strings.TrimSpace(in.errs[0].String())); diff != "" {
				t.Errorf("%s\nstderr: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
	t.Run("LostParent", func(t *testing.T) {
		in := newInstance(t, 2, "")
		opts := []string{"-Sbroker.rc2_none", "-Stbon.tcp_user_timeout=3s"}
		in.start(0, opts)
		in.start(1, opts)
		in.waitSocket(0, 10*time.Second)
		must(t, in.cmds[0].Process.Signal(syscall.SIGKILL))
		if code := in.wait(1, 20*time.Second); code == 0 {
			t.Errorf("a follower whose parent died exited 0\n%s", in.logs())
		}
		if !strings.Contains(in.errs[1].String(), "lost connection to parent (rank 0)") {
			t.Errorf("the follower does not say it lost its parent:\n%s", in.logs())
		}
	})
	t.Run("SignalledProgram", func(t *testing.T) {
		in := newInstance(t, 1, "")
		in.start(0, nil, "sleep", "60")
		in.waitSocket(0, 10*time.Second)
		must(t, in.cmds[0].Process.Signal(syscall.SIGTERM))
		if diff := cmp.Diff(129, in.wait(0, 20*time.Second)); diff != "" {
			t.Errorf("SIGTERM to flux start aborts the initial program with SIGHUP, as flux-core's runat does, and its 128+1 is the exit status: -want, +got:\n%s\n%s", diff, in.logs())
		}
	})
	t.Run("SignalledFollower", func(t *testing.T) {
		in := newInstance(t, 2, "")
		opts := []string{"-Sbroker.rc2_none"}
		in.start(0, opts)
		in.start(1, opts)
		in.waitSocket(1, 10*time.Second)
		must(t, in.cmds[1].Process.Signal(syscall.SIGTERM))
		if code := in.wait(1, 20*time.Second); code != 0 {
			t.Errorf("a follower stopped by SIGTERM leaves the instance and exits 0, as flux-core's does: exit %d\n%s", code, in.logs())
		}
		if strings.Contains(in.errs[0].String(), "lost") {
			t.Errorf("the lead must see the follower leave, not lose it:\n%s", in.logs())
		}
		must(t, in.cmds[0].Process.Signal(syscall.SIGTERM))
		if code := in.wait(0, 20*time.Second); code != 0 {
			t.Errorf("an interactive lead stopped by SIGTERM shuts down and exits 0: exit %d\n%s", code, in.logs())
		}
	})
}

func appendFile(t *testing.T, path, s string) {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteString(s)
	must(t, errors.Join(err, f.Close()))
}
