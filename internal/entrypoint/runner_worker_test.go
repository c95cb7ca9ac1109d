package entrypoint

// The runner of a follower (a worker): it starts its broker without a job
// and, unless completeWorkers, restarts it until it exits 0.

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// TestRunnerWorker: a follower's runner (reference §3.3 workers): its broker
// without an initial program, restarted after a failure unless
// completeWorkers, whatever the lead's options.
func TestRunnerWorker(t *testing.T) {
	t.Parallel()
	runCases(t, map[string]runCase{
		"HelloWorldWorker": {
			reason:  "A worker starts the same broker without an initial program and retries after a failure, sleeping 15s.",
			command: "echo hello world",
			mutate:  quiet,
			host:    workHost,
			fluxRC:  "1 0",
			want: func(mp string) [][]string {
				return [][]string{encode(), start(mp, quietOpts(), nil), start(mp, quietOpts(), nil)}
			},
			contains: []string{"Goodbye"},
			check: func(t *testing.T, _ *sandbox, r result) {
				t.Helper()
				if diff := cmp.Diff([]string{"15"}, r.sleeps); diff != "" {
					t.Errorf("the worker must sleep 15s once between its two brokers: -want, +got:\n%s", diff)
				}
			},
		},
		"WorkerRetriesUntilClean": {
			reason:  "Without completeWorkers a worker restarts its broker until it exits 0.",
			command: "echo hello world",
			host:    workHost,
			fluxRC:  "2 143 0",
			want: func(mp string) [][]string {
				return [][]string{encode(), start(mp, std(), nil), start(mp, std(), nil), start(mp, std(), nil)}
			},
			check: func(t *testing.T, _ *sandbox, r result) {
				t.Helper()
				if diff := cmp.Diff([]string{"15", "15"}, r.sleeps); diff != "" {
					t.Errorf("sleeps: -want, +got:\n%s", diff)
				}
			},
		},
		"WorkerCompleteWorkers": {
			reason:  "With completeWorkers a worker is done after its broker's first exit, whatever the code.",
			command: "echo hello world",
			mutate:  func(mc *v1alpha2.MiniCluster, _ *sandbox) { mc.Spec.Flux.CompleteWorkers = true },
			host:    workHost,
			fluxRC:  "3",
			want: func(mp string) [][]string {
				return [][]string{encode(), start(mp, std(), nil)}
			},
			check: func(t *testing.T, _ *sandbox, r result) {
				t.Helper()
				if len(r.sleeps) != 0 {
					t.Errorf("a completed worker must not sleep: %q", r.sleeps)
				}
			},
		},
		"WorkerIgnoresLeadOptions": {
			reason:  "Workers run no wrap, prefix or initial program (reference §3.3 workers 3), in every mode.",
			command: "echo hello world",
			mutate: func(mc *v1alpha2.MiniCluster, _ *sandbox) {
				mc.Spec.Flux.Wrap = "strace,-f"
				mc.Spec.Containers[0].Commands.Prefix = "mpirun -x"
				mc.Spec.Containers[0].Launcher = true
			},
			host: workHost,
			want: func(mp string) [][]string {
				return [][]string{encode(), start(mp, std(), nil)}
			},
		},
		"StrictWorker": {
			reason:  "strict mode does not abort the worker's retry loop.",
			command: "echo hello world",
			host:    workHost,
			fluxRC:  "1 0",
			mutate:  func(mc *v1alpha2.MiniCluster, _ *sandbox) { mc.Spec.Logging.Strict = true },
			want: func(mp string) [][]string {
				return [][]string{encode(), start(mp, std(), nil), start(mp, std(), nil)}
			},
		},
	})
}
