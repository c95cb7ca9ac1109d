package main

import (
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestInstance runs real instances of the double: one process per broker,
// TCP between them, jobs on every rank.
func TestInstance(t *testing.T) {
	if testing.Short() {
		t.Skip("runs brokers")
	}
	// The task prints its rank and the hostname its own broker reports,
	// so the output proves which broker ran it.
	task := []string{"sh", "-c", `echo "task $FLUX_TASK_RANK of $FLUX_JOB_SIZE on $(flux getattr hostname)"`}
	cases := map[string]struct {
		reason   string
		brokers  int
		opts     []string
		program  []string
		wantOut  []string
		wantExit int
	}{
		"SubmitWatchOnEveryRank": {
			reason:   "flux submit -N3 --watch runs one task on each of three brokers and streams each task's output back to rank 0.",
			brokers:  3,
			opts:     []string{"-Stbon.fanout=256"},
			program:  append([]string{"flux", "submit", "-N3", "--quiet", "--watch"}, task...),
			wantOut:  []string{"task 0 of 3 on node-0", "task 1 of 3 on node-1", "task 2 of 3 on node-2"},
			wantExit: 0,
		},
		"KaryTreeRelaysThroughRank1": {
			reason:   "With kary:2, rank 3's parent is rank 1: its task output reaches rank 0 through rank 1.",
			brokers:  4,
			opts:     []string{"-Stbon.topo=kary:2"},
			program:  append([]string{"flux", "run", "-N4"}, task...),
			wantOut:  []string{"task 0 of 4 on node-0", "task 1 of 4 on node-1", "task 2 of 4 on node-2", "task 3 of 4 on node-3"},
			wantExit: 0,
		},
		"InitialProgramExitStatus": {
			reason:   "flux start exits with its initial program's status, after the job ran everywhere.",
			brokers:  3,
			opts:     []string{"-Stbon.fanout=256"},
			program:  []string{"sh", "-c", `flux submit -N3 --quiet --watch sh -c 'echo "task $FLUX_TASK_RANK on $(flux getattr hostname)"' && exit 3`},
			wantOut:  []string{"task 0 on node-0", "task 1 on node-1", "task 2 on node-2"},
			wantExit: 3,
		},
		"JobExitStatus": {
			reason:   "A job's exit code is its highest task's: --watch, and so flux start, exit with it.",
			brokers:  3,
			opts:     []string{"-Stbon.fanout=256"},
			program:  []string{"flux", "submit", "-N3", "--quiet", "--watch", "sh", "-c", `echo "rank $FLUX_TASK_RANK"; exit $((FLUX_TASK_RANK + 4))`},
			wantOut:  []string{"rank 0", "rank 1", "rank 2"},
			wantExit: 6,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := newInstance(t, tc.brokers, "")
			// Followers first: they must wait, retrying, for rank 0.
			for i := 1; i < tc.brokers; i++ {
				in.start(i, tc.opts)
			}
			time.Sleep(300 * time.Millisecond)
			in.start(0, tc.opts, tc.program...)
			got := in.wait(0, 60*time.Second)
			if diff := cmp.Diff(tc.wantExit, got); diff != "" {
				t.Errorf("%s\nrank 0 exit status: -want, +got:\n%s\n%s", tc.reason, diff, in.logs())
			}
			lines := strings.Split(strings.TrimSpace(in.outs[0].String()), "\n")
			sort.Strings(lines)
			if diff := cmp.Diff(tc.wantOut, lines); diff != "" {
				t.Errorf("%s\noutput: -want, +got:\n%s\n%s", tc.reason, diff, in.logs())
			}
			for i := 1; i < tc.brokers; i++ {
				if code := in.wait(i, 20*time.Second); code != 0 {
					t.Errorf("%s\nfollower %d exited %d, want 0 after rank 0's shutdown\n%s", tc.reason, i, code, in.logs())
				}
			}
		})
	}
}
