package entrypoint

// The hooks of commands.* (init, pre, brokerPre, workerPre, post): shell
// code run around the broker, each on its own (see script.hook).

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// TestRunnerHooks: the order of the hooks around flux start, on the lead and
// on a worker, what quiet hides, and a broken hook that fails alone.
func TestRunnerHooks(t *testing.T) {
	t.Parallel()
	hooks := func(q bool) func(mc *v1alpha2.MiniCluster, _ *sandbox) {
		return func(mc *v1alpha2.MiniCluster, _ *sandbox) {
			mc.Spec.Logging.Quiet = q
			c := &mc.Spec.Containers[0].Commands
			c.Init = `echo init >> "$EVENTS"; echo INIT-HOOK-OUT`
			c.Pre = "export FOO=bar\necho pre >> \"$EVENTS\"\necho PRE-HOOK-OUT"
			c.BrokerPre = `echo brokerPre >> "$EVENTS"; echo BROKERPRE-HOOK-OUT`
			c.WorkerPre = `echo workerPre >> "$EVENTS"; echo WORKERPRE-HOOK-OUT`
			c.Post = `echo post >> "$EVENTS"; echo POST-HOOK-OUT`
		}
	}
	runCases(t, map[string]runCase{
		"HooksLeadQuiet": {
			reason:  "Hooks run in order init, pre, brokerPre, flux start, post; pre's exports reach flux; quiet hides hook output but not post's.",
			command: "echo hello world",
			mutate:  hooks(true),
			want: func(mp string) [][]string {
				return [][]string{encode(), start(mp, quietOpts(), nil, submit(hello...)...)}
			},
			contains: []string{"POST-HOOK-OUT", "FAKE-FLUX-OUTPUT"},
			absent:   []string{"INIT-HOOK-OUT", "PRE-HOOK-OUT", "BROKERPRE-HOOK-OUT", "WORKERPRE"},
			check: func(t *testing.T, _ *sandbox, r result) {
				t.Helper()
				if diff := cmp.Diff([]string{"init", "flux R", "pre", "brokerPre", "flux start", "post"}, r.events); diff != "" {
					t.Errorf("order of hooks and flux calls: -want, +got:\n%s", diff)
				}
				if got := r.envs[1]["FOO"]; got != "bar" {
					t.Errorf("commands.pre exported FOO=bar, flux saw FOO=%q", got)
				}
			},
		},
		"HooksWorkerQuiet": {
			reason:  "On a worker workerPre replaces brokerPre.",
			command: "echo hello world",
			mutate:  hooks(true),
			host:    workHost,
			want: func(mp string) [][]string {
				return [][]string{encode(), start(mp, quietOpts(), nil)}
			},
			contains: []string{"POST-HOOK-OUT"},
			absent:   []string{"INIT-HOOK-OUT", "PRE-HOOK-OUT", "WORKERPRE-HOOK-OUT"},
			check: func(t *testing.T, _ *sandbox, r result) {
				t.Helper()
				if diff := cmp.Diff([]string{"init", "flux R", "pre", "workerPre", "flux start", "post"}, r.events); diff != "" {
					t.Errorf("order of hooks and flux calls: -want, +got:\n%s", diff)
				}
				if got := r.envs[1]["FOO"]; got != "bar" {
					t.Errorf("commands.pre exported FOO=bar, flux saw FOO=%q", got)
				}
			},
		},
		"HooksNotQuiet": {
			reason:   "Without quiet the hooks' output shows.",
			command:  "echo hello world",
			mutate:   hooks(false),
			contains: []string{"INIT-HOOK-OUT", "PRE-HOOK-OUT", "BROKERPRE-HOOK-OUT", "POST-HOOK-OUT"},
		},
		"BrokenHook": {
			reason:  "A hook with a syntax error fails alone; the broker still starts.",
			command: "echo hello world",
			mutate:  func(mc *v1alpha2.MiniCluster, _ *sandbox) { mc.Spec.Containers[0].Commands.Pre = `echo "unterminated` },
			want: func(mp string) [][]string {
				return [][]string{encode(), start(mp, std(), nil, submit(hello...)...)}
			},
		},
	})
}
