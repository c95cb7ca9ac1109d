package entrypoint

import (
	"testing"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// RunnerResult is what RunRunner saw.
type RunnerResult struct {
	Exit   int
	Stderr string
	// Calls are the argv of every flux call, without "flux".
	Calls [][]string
}

// RunRunner runs the runner script of mc's container 0, with the resources
// r, as pod host in a sandbox with a fake flux (env reaches the script and
// the fake, e.g. FAKE_FLUX_CORES). It is for entrypoint_test, whose tests
// take r from internal/plan, which imports this package. mc's mount path
// moves into the sandbox.
func RunRunner(t *testing.T, mc *v1alpha2.MiniCluster, r Resources, host string, env map[string]string) RunnerResult {
	t.Helper()
	sb := newSandbox(t)
	sb.use(mc)
	pl := plan(t, mc, sb.paths)
	pl.Resources = r
	res := sb.run(t, Runner(mc, 0, pl), host, env)
	return RunnerResult{Exit: res.exit, Stderr: res.stderr, Calls: res.calls}
}
