package entrypoint

// Persistent clusters: interactive, or no command at all.

import (
	"testing"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// TestRunnerInteractive: interactive (rc2_none) and empty commands keep the
// instance up without running a job, on the lead and on workers.
func TestRunnerInteractive(t *testing.T) {
	t.Parallel()
	runCases(t, map[string]runCase{
		"InteractiveNoCommand": {
			reason: "interactive with no command: the lead runs flux broker directly, with rc2_none.",
			mutate: func(mc *v1alpha2.MiniCluster, _ *sandbox) { mc.Spec.Interactive = true },
			want: func(mp string) [][]string {
				o := std()
				o.rc2none = true
				return [][]string{encode(), broker(mp, o)}
			},
			contains: []string{"interactive"},
		},
		"InteractiveWorker": {
			reason: "interactive workers run flux start with rc2_none.",
			mutate: func(mc *v1alpha2.MiniCluster, _ *sandbox) { mc.Spec.Interactive = true },
			host:   workHost,
			want: func(mp string) [][]string {
				o := std()
				o.rc2none = true
				return [][]string{encode(), start(mp, o, nil)}
			},
		},
		"InteractiveWithCommand": {
			reason:  "interactive with a command still passes it, but rc2_none means Flux never runs it (reference §3.3 lead 5).",
			command: "echo hello world",
			mutate:  func(mc *v1alpha2.MiniCluster, _ *sandbox) { mc.Spec.Interactive = true },
			want: func(mp string) [][]string {
				o := std()
				o.rc2none = true
				return [][]string{encode(), start(mp, o, nil, submit(hello...)...)}
			},
		},
		"EmptyCommand": {
			reason:  "No command means a persistent cluster even without interactive.",
			command: "  ",
			mutate:  quiet,
			want: func(mp string) [][]string {
				return [][]string{encode(), broker(mp, quietOpts())}
			},
			absent: []string{"interactive"},
		},
	})
}
