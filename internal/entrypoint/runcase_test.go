package entrypoint

// runCase and runRunner: one run of a runner script under bash with the
// fake flux, and what to check of it; runCases runs a table of them.

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

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

// runCases runs each case in parallel, as a subtest of its name.
func runCases(t *testing.T, cases map[string]runCase) {
	t.Helper()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			runRunner(t, tc)
		})
	}
}

// quiet sets logging.quiet: the runner prints only the job's output.
func quiet(mc *v1alpha2.MiniCluster, _ *sandbox) { mc.Spec.Logging.Quiet = true }

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
