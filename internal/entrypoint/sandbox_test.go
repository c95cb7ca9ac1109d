package entrypoint

// The sandbox the script tests run in: the generated scripts run outside a
// pod with fake flux, hostname and sleep commands, and helpers read back
// what the fakes saw. The claim and its scripts are in claim_test.go, the
// flux calls the tests expect in argv_test.go, and the table runner of the
// runner tests in runcase_test.go.
//
// Everything lives in t.TempDir() except two paths the generator hard-codes
// and Paths does not relocate: /tmp/custom-entrypoint.sh (commands.script;
// only tests that do not run in parallel with each other write it) and the
// default logs directory /tmp/fluxout (mkdir -p only).

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// tool finds an external program the tests need. It is a failure when
// envVar names it (the caller insists) or in CI, a skip otherwise.
func tool(t *testing.T, name, envVar string) string {
	t.Helper()
	if envVar != "" {
		if p := os.Getenv(envVar); p != "" {
			if _, err := exec.LookPath(p); err != nil {
				t.Fatalf("%s=%s is set but not an executable: %v", envVar, p, err)
			}
			return p
		}
	}
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is required in CI: %v", name, err)
	}
	t.Skipf("%s is not installed (set CI or %s to make this a failure)", name, envVar)
	return ""
}

// sandbox is a temporary directory laid out like a pod: the Paths of the
// entrypoint ConfigMap, curve Secret, software and home, a mount path with
// the host list the init container would have installed, a working
// directory, and a bin directory with fake flux, hostname and sleep first on
// PATH.
type sandbox struct {
	root  string
	mp    string // spec.flux.container.mountPath
	work  string // working directory of the script
	bin   string // fakes
	log   string // what the fakes record
	paths Paths
	bash  string
	// cred, when set, is the user the scripts run as.
	cred *syscall.Credential
}

// fakeFlux records argv (NUL-separated) and environment of every call but
// flux version. flux R decode prints FAKE_FLUX_CORES (4 when unset).
// flux start and flux broker exit with the next code of FAKE_FLUX_RC, after
// running FAKE_FLUX_CHECK (a script that sees their argv; its failure is
// theirs). With FAKE_FLUX_INITIAL set, flux start runs its initial program
// (the words after its options) and flux batch runs its script, so what a
// job would run inside the instance reaches the fake too; with
// FAKE_BROKER_LOG set too, flux start logs to stderr around its initial
// program as a broker does. With FAKE_FLUX_WATCH set, flux submit --watch
// runs that shell code as the job it watches, printing what it prints.
// Each flux start or broker writes the time it ended (date +%s%N) to
// broker-ended.
const fakeFlux = `#!/bin/bash
# The runner's view check (viewfit_test.go tests it with fakes of its own).
if [ "$*" = version ]; then exit 0; fi
log="${FAKE_FLUX_LOG:?}"
n=0
while [ -e "${log}/call-${n}" ]; do n=$((n+1)); done
: > "${log}/call-${n}"
if [ "$#" -gt 0 ]; then printf '%s\0' "$@" > "${log}/call-${n}"; fi
env -0 > "${log}/env-${n}"
printf 'flux %s\n' "${1:-}" >> "${log}/events"
case "${1:-}" in
R)
  # flux R decode --count=core: FAKE_FLUX_CORES, the node's cores.
  if [ "${2:-}" = decode ]; then cat > /dev/null; echo "${FAKE_FLUX_CORES-4}"; exit 0; fi
  echo '{"version": 1, "execution": {"R_lite": [], "nodelist": ["fake"]}}' ;;
batch)
  if [ -n "${FAKE_FLUX_INITIAL:-}" ]; then bash "${@: -1}"; exit; fi ;;
submit)
  for a in "$@"; do
    if [ "${a}" = --watch ] && [ -n "${FAKE_FLUX_WATCH:-}" ]; then bash -c "${FAKE_FLUX_WATCH}"; exit; fi
  done ;;
start|broker)
  trap 'date +%s%N > "${log}/broker-ended"' EXIT
  if [ -n "${FAKE_FLUX_CHECK:-}" ]; then bash "${FAKE_FLUX_CHECK}" "$@" || exit; fi
  if [ "$1" = start ] && [ -n "${FAKE_FLUX_INITIAL:-}" ]; then
    shift
    while [ "$#" -gt 0 ]; do
      case "$1" in -S*|-o*|--config-path=*|--wrap=*) shift ;; *) break ;; esac
    done
    if [ "$#" -gt 0 ]; then
      if [ -n "${FAKE_BROKER_LOG:-}" ]; then echo "00:40:03.991403 broker.info[0]: quorum reached" >&2; fi
      rc=0
      "$@" || rc=$?
      if [ -n "${FAKE_BROKER_LOG:-}" ]; then echo "00:40:04.120001 broker.info[0]: shutdown complete" >&2; fi
      exit "${rc}"
    fi
  fi
  k=0
  while [ -e "${log}/start-${k}" ]; do k=$((k+1)); done
  : > "${log}/start-${k}"
  read -r -a rcs <<< "${FAKE_FLUX_RC:-0}"
  i=${k}
  if [ "${i}" -ge "${#rcs[@]}" ]; then i=$(( ${#rcs[@]} - 1 )); fi
  echo "FAKE-FLUX-OUTPUT"
  exit "${rcs[${i}]}" ;;
esac
exit 0
`

const fakeHostname = `#!/bin/sh
printf '%s\n' "${FAKE_HOSTNAME:?}"
`

func newSandbox(t *testing.T) *sandbox {
	t.Helper()
	bash := tool(t, "bash", "")
	root := t.TempDir()
	sb := &sandbox{
		root: root,
		mp:   filepath.Join(root, "mp"),
		work: filepath.Join(root, "work"),
		bin:  filepath.Join(root, "bin"),
		log:  filepath.Join(root, "log"),
		paths: Paths{
			Entrypoints:    filepath.Join(root, "flux_operator"),
			Curve:          filepath.Join(root, "curve"),
			Software:       filepath.Join(root, "opt-software"),
			Home:           filepath.Join(root, "home-flux-operator"),
			TerminationLog: filepath.Join(root, "termination-log"),
		},
		bash: bash,
	}
	realSleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatalf("no sleep: %v", err)
	}
	for _, d := range []string{sb.work, sb.bin, sb.log, sb.paths.Entrypoints, sb.paths.Curve,
		filepath.Join(sb.mp, "config/etc/flux/system"), filepath.Join(sb.mp, "software/bin")} {
		mustMkdir(t, d)
	}
	mustWrite(t, filepath.Join(sb.mp, "config/etc/flux/system/hostlist"), "flux-sample-[0-3]", 0o644)
	mustWrite(t, filepath.Join(sb.mp, "software/bin/tool"), "spack", 0o755)
	mustWrite(t, filepath.Join(sb.paths.Curve, CurveFile), "#   ZeroMQ CURVE **Secret** Certificate\ncurve\n", 0o644)
	mustWrite(t, sb.paths.TerminationLog, "", 0o666)
	mustWrite(t, filepath.Join(sb.bin, "flux"), fakeFlux, 0o755)
	mustWrite(t, filepath.Join(sb.bin, "hostname"), fakeHostname, 0o755)
	// The worker loop sleeps 15s between retries: record it and return at
	// once (FAKE_SLEEP makes it really sleep, for polling loops).
	mustWrite(t, filepath.Join(sb.bin, "sleep"), fmt.Sprintf("#!/bin/sh\necho \"$*\" >> \"${FAKE_FLUX_LOG:?}/sleeps\"\nexec %s \"${FAKE_SLEEP:-0}\"\n", realSleep), 0o755)
	return sb
}

func mustMkdir(t *testing.T, d string) {
	t.Helper()
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
}

func mustWrite(t *testing.T, file, content string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(file, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func exists(file string) bool {
	_, err := os.Lstat(file)
	return err == nil
}

// use points mc at the sandbox: its mount path becomes sb.mp.
func (sb *sandbox) use(mc *v1alpha2.MiniCluster) {
	mc.Spec.Flux.Container.MountPath = sb.mp
}

// result of one script run.
type result struct {
	exit   int
	stdout string
	stderr string
	calls  [][]string          // argv of every flux call, without "flux"
	envs   []map[string]string // environment of every flux call
	events []string            // "flux <sub>" per call, plus whatever hooks append
	sleeps []string            // arguments of every sleep
}

// run runs script under bash in the sandbox as pod host, with extra
// environment. It fails the test if the script runs for more than 10s.
func (sb *sandbox) run(t *testing.T, script, host string, extra map[string]string) result {
	t.Helper()
	file := filepath.Join(sb.root, fmt.Sprintf("script-%d.sh", time.Now().UnixNano()))
	mustWrite(t, file, script, 0o755)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, sb.bash, file)
	cmd.Dir = sb.work
	cmd.Env = sb.env(host, extra)
	if sb.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: sb.cred}
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("script did not finish in 10s\nstdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr):
		r.exit = exitErr.ExitCode()
	case err != nil:
		t.Fatalf("cannot run bash: %v", err)
	}
	r.calls, r.envs = sb.calls(t)
	if b, err := os.ReadFile(filepath.Join(sb.log, "events")); err == nil {
		r.events = strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	}
	if b, err := os.ReadFile(filepath.Join(sb.log, "sleeps")); err == nil {
		r.sleeps = strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	}
	return r
}

// env is a small, fixed environment: the fakes first on PATH, a real HOME.
// PATH leaves out /usr/local/bin, where a host may have a flux of its own.
func (sb *sandbox) env(host string, extra map[string]string) []string {
	env := map[string]string{
		"PATH":          sb.bin + ":/usr/bin:/bin",
		"HOME":          filepath.Join(sb.root, "home"),
		"LANG":          "C",
		"FAKE_FLUX_LOG": sb.log,
		"FAKE_HOSTNAME": host,
		"EVENTS":        filepath.Join(sb.log, "events"),
	}
	for k, v := range extra {
		env[k] = v
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// reset forgets what the fakes recorded, to run another script.
func (sb *sandbox) reset(t *testing.T) {
	t.Helper()
	if err := os.RemoveAll(sb.log); err != nil {
		t.Fatal(err)
	}
	mustMkdir(t, sb.log)
}

func (sb *sandbox) calls(t *testing.T) ([][]string, []map[string]string) {
	t.Helper()
	var calls [][]string
	var envs []map[string]string
	for n := 0; ; n++ {
		b, err := os.ReadFile(filepath.Join(sb.log, fmt.Sprintf("call-%d", n)))
		if err != nil {
			break
		}
		calls = append(calls, splitNUL(string(b)))
		env := map[string]string{}
		if e, err := os.ReadFile(filepath.Join(sb.log, fmt.Sprintf("env-%d", n))); err == nil {
			for _, kv := range splitNUL(string(e)) {
				if k, v, ok := strings.Cut(kv, "="); ok {
					env[k] = v
				}
			}
		}
		envs = append(envs, env)
	}
	return calls, envs
}

func splitNUL(s string) []string {
	if s == "" {
		return []string{}
	}
	return strings.Split(strings.TrimSuffix(s, "\x00"), "\x00")
}
