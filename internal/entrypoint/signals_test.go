package entrypoint

import (
	"bytes"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// stoppableFlux is a fake flux whose brokers run until a signal, as
// flux-core's do: on SIGTERM a follower leaves the instance and
// exits 0; the lead aborts its initial program (SIGHUP) and exits with its
// status, 129 (FAKE_LEAD_RC in this fake). It records each signal it got.
// The lead's flux start first runs its initial program, whose flux submit
// prints a line on stdout and one on stderr: the job's output before the
// stop.
const stoppableFlux = `#!/bin/bash
log="${FAKE_FLUX_LOG:?}"
case "${1:-}" in
R) echo '{"version": 1, "execution": {"R_lite": [], "nodelist": ["fake"]}}' ;;
submit) echo "JOB-OUT before the stop"; echo "JOB-ERR before the stop" >&2 ;;
start|broker)
  rc=0
  if [ "${FAKE_HOSTNAME}" = flux-sample-0 ]; then rc="${FAKE_LEAD_RC:-129}"; fi
  if [ "$1" = start ] && [ "${FAKE_HOSTNAME}" = flux-sample-0 ]; then
    shift
    while [ "$#" -gt 0 ]; do
      case "$1" in -S*|-o*|--config-path=*|--wrap=*) shift ;; *) break ;; esac
    done
    "$@" || true
  fi
  trap "echo TERM >> '${log}/signals'; echo 'broker: leaving the instance'; kill \$! 2> /dev/null; exit ${rc}" TERM
  echo "broker $$ running"
  : > "${log}/running"
  SLEEP 30 &
  wait
  echo "no signal came" >> "${log}/signals"
  exit 99 ;;
esac
exit 0
`

// TestRunnerStops: a signal to the runner, the container's first process,
// reaches the broker, which leaves as Flux means it to, and the runner ends
// at once with a code that says so (the lead's fails the MiniCluster, with
// its reason in the termination message).
func TestRunnerStops(t *testing.T) {
	t.Parallel()
	realSleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		reason   string
		host     string
		signal   syscall.Signal
		mutate   func(*v1alpha2.MiniCluster)
		wantExit int
		// message is the termination message's first line ("": none).
		message string
	}{
		"Follower": {
			reason:   "A follower's broker gets the SIGTERM and leaves; the runner ends 143 (SIGTERM), so a deleted follower is replaced as a killed one was.",
			host:     workHost,
			signal:   syscall.SIGTERM,
			wantExit: 128 + 15,
		},
		"FollowerSIGINT": {
			reason:   "SIGINT stops the runner too; the broker gets SIGTERM, which it takes alike (a background process starts with SIGINT ignored).",
			host:     workHost,
			signal:   syscall.SIGINT,
			wantExit: 128 + 2,
		},
		"FollowerPost": {
			reason:   "A stopped follower does not run commands.post: the pod is going away.",
			host:     workHost,
			signal:   syscall.SIGTERM,
			mutate:   func(mc *v1alpha2.MiniCluster) { mc.Spec.Containers[0].Commands.Post = "echo POST >> \"${EVENTS}\"" },
			wantExit: 128 + 15,
		},
		"Lead": {
			reason:   "The lead's broker aborts the job; the runner fails the MiniCluster and says why.",
			host:     leadHost,
			signal:   syscall.SIGTERM,
			wantExit: JobFailedExitCode,
			message:  "flux job on flux-sample-0 exited with 129; SIGTERM stopped the lead",
		},
		"LeadStrict": {
			reason:   "The same under logging.strict.",
			host:     leadHost,
			signal:   syscall.SIGTERM,
			mutate:   func(mc *v1alpha2.MiniCluster) { mc.Spec.Logging.Strict = true },
			wantExit: JobFailedExitCode,
			message:  "flux job on flux-sample-0 exited with 129; SIGTERM stopped the lead",
		},
		"TimedLead": {
			reason: "logging.timed: time runs flux start and would die of the SIGTERM, leaving the broker behind; " +
				"the broker under it gets the signal instead.",
			host:     leadHost,
			signal:   syscall.SIGTERM,
			mutate:   func(mc *v1alpha2.MiniCluster) { mc.Spec.Logging.Timed = true },
			wantExit: JobFailedExitCode,
			message:  "flux job on flux-sample-0 exited with 129; SIGTERM stopped the lead",
		},
		"Interactive": {
			reason:   "An interactive lead has no job: it ends 143 like a follower.",
			host:     leadHost,
			signal:   syscall.SIGTERM,
			mutate:   func(mc *v1alpha2.MiniCluster) { mc.Spec.Containers[0].Command = "" },
			wantExit: 128 + 15,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			sb := newSandbox(t)
			mustWrite(t, filepath.Join(sb.bin, "flux"), strings.ReplaceAll(stoppableFlux, "SLEEP", realSleep), 0o755)
			mc := claim(4, "echo hello world", func(mc *v1alpha2.MiniCluster) {
				sb.use(mc)
				if tc.mutate != nil {
					tc.mutate(mc)
				}
			})
			script := runner(t, mc, sb.paths)
			if mc.Spec.Logging.Timed {
				if _, err := os.Stat(timeBin); err != nil {
					t.Skipf("%s is not installed", timeBin)
				}
			}
			file := filepath.Join(sb.root, "wait-0.sh")
			mustWrite(t, file, script, 0o755)
			cmd := exec.Command(sb.bash, file)
			cmd.Dir = sb.work
			cmd.Env = sb.env(tc.host, nil)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			running := filepath.Join(sb.log, "running")
			for deadline := time.Now().Add(10 * time.Second); !exists(running); time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					_ = cmd.Process.Kill()
					t.Fatalf("the broker did not start:\n%s", out.String())
				}
			}
			sent := time.Now()
			if err := cmd.Process.Signal(tc.signal); err != nil {
				t.Fatal(err)
			}
			var waitErr error
			select {
			case waitErr = <-done:
			case <-time.After(5 * time.Second):
				_ = cmd.Process.Kill()
				t.Fatalf("%s\nthe runner did not end within 5s of %v (then killed: %v):\n%s", tc.reason, tc.signal, <-done, out.String())
			}
			code := 0
			var ee *exec.ExitError
			switch {
			case errors.As(waitErr, &ee):
				code = ee.ExitCode()
			case waitErr != nil:
				t.Fatal(waitErr)
			}
			if code != tc.wantExit {
				t.Errorf("%s\nexit %d, want %d\n%s", tc.reason, code, tc.wantExit, out.String())
			}
			if took := time.Since(sent); took > 3*time.Second {
				t.Errorf("%s\nthe runner took %v to end", tc.reason, took)
			}
			if diff := cmp.Diff("TERM\n", readOrEmpty(filepath.Join(sb.log, "signals"))); diff != "" {
				t.Errorf("%s\nsignals the broker got: -want, +got:\n%s\n%s", tc.reason, diff, out.String())
			}
			if events := readOrEmpty(filepath.Join(sb.log, "events")); strings.Contains(events, "POST") {
				t.Errorf("%s\ncommands.post ran after the stop", tc.reason)
			}
			msg := readOrEmpty(sb.paths.TerminationLog)
			first, words, _ := strings.Cut(msg, "\n")
			if diff := cmp.Diff(tc.message, first); diff != "" {
				t.Errorf("%s\ntermination message: -want, +got:\n%s", tc.reason, diff)
			}
			if tc.message == "" {
				return
			}
			// The job's two lines come through two tees, in either order.
			lines := strings.Split(strings.TrimSuffix(words, "\n"), "\n")
			slices.Sort(lines)
			want := []string{"JOB-ERR before the stop", "JOB-OUT before the stop"}
			if mc.Spec.Logging.Timed {
				// time's line on the job is the job's output too.
				lines = slices.DeleteFunc(lines, func(l string) bool { return strings.HasPrefix(l, "FLUXTIME fluxsubmit ") })
			}
			if diff := cmp.Diff(want, lines); diff != "" {
				t.Errorf("%s\nthe last words must be the job's output, not the runner's or the broker's (leaving the instance): -want, +got:\n%s\n%s", tc.reason, diff, msg)
			}
			if !strings.Contains(out.String(), "broker: leaving the instance") || !strings.Contains(out.String(), "JOB-OUT before the stop") {
				t.Errorf("%s\nthe log must carry the broker's and the job's output:\n%s", tc.reason, out.String())
			}
		})
	}
}

func readOrEmpty(file string) string {
	b, err := os.ReadFile(file)
	if err != nil {
		return ""
	}
	return string(b)
}

// TestSidecarStops: a sidecar's wrapper, its container's first process too,
// passes SIGTERM on to what it runs and ends at once, while it waits for the
// broker's socket and while its command runs.
func TestSidecarStops(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		reason string
		socket bool // the broker's socket exists: the command runs
	}{
		"WaitingForSocket": {reason: "A pod deleted before its broker is up: the wrapper ends at once."},
		"CommandRunning":   {reason: "The command gets SIGTERM, and the wrapper ends when it has.", socket: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			sb := newSandbox(t)
			mc := sidecarClaim(sb, `echo "command running"; trap 'echo TERM >> "${EVENTS}"; exit 0' TERM; sleep 30 & wait`, nil)
			if tc.socket {
				socket := filepath.Join(sb.mp, "config/run/flux/local")
				mustMkdir(t, filepath.Dir(socket))
				l, err := net.Listen("unix", socket)
				if err != nil {
					t.Fatal(err)
				}
				defer func() { _ = l.Close() }()
			}
			file := filepath.Join(sb.root, "start-1.sh")
			mustWrite(t, file, Sidecar(mc, 1, plan(t, mc, sb.paths)), 0o755)
			cmd := exec.Command(sb.bash, file)
			cmd.Dir = sb.work
			cmd.Env = sb.env(leadHost, map[string]string{"FAKE_SLEEP": "1"})
			// Its own process group, as a container's: the wrapper signals its group.
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			for deadline := time.Now().Add(5 * time.Second); tc.socket && !strings.Contains(out.String(), "command running"); time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
					t.Fatalf("the command did not start:\n%s", out.String())
				}
			}
			time.Sleep(300 * time.Millisecond)
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.ExitCode() != 143 {
					t.Errorf("%s\nexit %v, want 143\n%s", tc.reason, err, out.String())
				}
			case <-time.After(3 * time.Second):
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				t.Fatalf("%s\nthe wrapper did not end within 3s of SIGTERM (then killed: %v):\n%s", tc.reason, <-done, out.String())
			}
			if got := readOrEmpty(filepath.Join(sb.log, "events")); tc.socket && !strings.Contains(got, "TERM") {
				t.Errorf("%s\nthe command did not get SIGTERM: events %q", tc.reason, got)
			}
		})
	}
}
