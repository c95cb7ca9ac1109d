package observe

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/observe/observetest"
	"github.com/flux-framework/minicluster-crossplane/internal/plan/plantest"
	"github.com/flux-framework/minicluster-crossplane/internal/render"
)

// written is what Crossplane writes of r: the status, the Brokers
// condition and the readiness, as the next run observes them.
func written(r Report) *Written {
	w := &Written{Status: r.Status, Ready: ptr.To(r.Ready)}
	if c := brokersOf(r); c != nil {
		w.Brokers = ptr.To(*c)
	}
	return w
}

// step is one observation of hello-world's Job: ready brokers, succeeded
// and failed pods, its end conditions, and the broker pods read.
type step struct {
	ready, succeeded, failed int32
	conds                    [][3]string
	pods                     []corev1.Pod
}

func (s step) observed(w *Written) Observed {
	job := observetest.Job(s.ready, s.conds...)
	job.UID = jobUID
	job.Status.Succeeded, job.Status.Failed = s.succeeded, s.failed
	return Observed{Composed: map[string]bool{render.KeyJob: true}, Job: job, Pods: s.pods, Written: w}
}

var (
	successCriteriaMet = [3]string{string(batchv1.JobSuccessCriteriaMet), "SuccessPolicy", "Matched rules at index 0"}
	jobComplete        = [3]string{string(batchv1.JobComplete), "SuccessPolicy", "Matched rules at index 0"}
)

// TestStatusChangesForNews runs hello-world's Job through the states the
// job controller reports and counts the times the status changes: each
// costs Crossplane three composition runs.
func TestStatusChangesForNews(t *testing.T) {
	type said struct {
		Phase string
		Ready int32
		Brk   string
	}
	cases := map[string]struct {
		reason string
		steps  []step
		want   []said // the status after each change
	}{
		"RealFluxHelloWorld": {
			reason: "Under real Flux hello-world's count went 0, 3, 0 and then Complete: the brokers end within seconds of quorum. The count before the quorum and the fall while they end with success say nothing; the end does.",
			steps: []step{
				{ready: 0}, {ready: 3}, {ready: 1, succeeded: 2}, {ready: 0, succeeded: 3},
				{succeeded: 4, conds: [][3]string{successCriteriaMet}}, {succeeded: 4, conds: [][3]string{successCriteriaMet, jobComplete}},
			},
			want: []said{
				{Phase: v1alpha2.PhasePending, Brk: "0 of 4 brokers up"},
				{Phase: v1alpha2.PhaseSucceeded, Brk: "the cluster has finished (Succeeded): see the Finished condition"},
			},
		},
		"StartRunEnd": {
			reason: "A cluster that reaches its quorum says so, keeps saying it while its brokers end, and then says it ended.",
			steps: []step{
				{ready: 0}, {ready: 2}, {ready: 4}, {ready: 4}, {ready: 2, succeeded: 2}, {ready: 0, succeeded: 3},
				{succeeded: 4, conds: [][3]string{successCriteriaMet, jobComplete}},
			},
			want: []said{
				{Phase: v1alpha2.PhasePending, Brk: "0 of 4 brokers up"},
				{Phase: v1alpha2.PhaseRunning, Ready: 4, Brk: "all brokers up"},
				{Phase: v1alpha2.PhaseSucceeded, Brk: "the cluster has finished (Succeeded): see the Finished condition"},
			},
		},
		"QuorumLost": {
			reason: "A running cluster that loses a broker, none having ended, has lost its quorum: news, and so is its return.",
			steps:  []step{{ready: 4}, {ready: 3}, {ready: 3}, {ready: 4}},
			want: []said{
				{Phase: v1alpha2.PhaseRunning, Ready: 4, Brk: "all brokers up"},
				{Phase: v1alpha2.PhasePending, Ready: 3, Brk: "3 of 4 brokers up"},
				{Phase: v1alpha2.PhaseRunning, Ready: 4, Brk: "all brokers up"},
			},
		},
		"CauseBringsTheCount": {
			reason: "A broker that cannot come up is news, and the count of that moment comes with it; a count that moves under the same cause is not.",
			steps: []step{
				{ready: 0},
				{ready: 1},
				{ready: 2, pods: []corev1.Pod{brokerPod("3", "a", 1, waitingMain("ErrImageNeverPull", neverPull))}},
				{ready: 3, pods: []corev1.Pod{brokerPod("3", "a", 1, waitingMain("ErrImageNeverPull", neverPull))}},
			},
			want: []said{
				{Phase: v1alpha2.PhasePending, Brk: "0 of 4 brokers up"},
				{Phase: v1alpha2.PhasePending, Ready: 2, Brk: "2 of 4 brokers up; flux-sample-3: ErrImageNeverPull: " + neverPull},
			},
		},
		"FailureWhileEnding": {
			reason: "A broker that fails while the others end is news: the failed count changes, the rest stays as written.",
			steps: []step{
				{ready: 4}, {ready: 2, succeeded: 2}, {ready: 1, succeeded: 2, failed: 1},
			},
			want: []said{
				{Phase: v1alpha2.PhaseRunning, Ready: 4, Brk: "all brokers up"},
				{Phase: v1alpha2.PhaseRunning, Ready: 4, Brk: "all brokers up"},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := plantest.HelloPlan(t)
			var w *Written
			var got []said
			for _, s := range tc.steps {
				r := Observe(p, s.observed(w), []string{render.KeyJob})
				if w != nil && equality.Semantic.DeepEqual(written(r), w) {
					continue
				}
				w = written(r)
				got = append(got, said{Phase: r.Status.Phase, Ready: r.Status.Job.Ready, Brk: w.Brokers.Message})
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("%s\nthe status after each change: -want +got:\n%s", tc.reason, d)
			}
		})
	}
}

func TestQuietHolds(t *testing.T) {
	running := &Written{
		Status:  v1alpha2.MiniClusterStatus{Size: 4, MaximumSize: 4, Selector: "hpa-selector=flux-sample", Phase: v1alpha2.PhaseRunning, Job: v1alpha2.JobStatus{Ready: 4}},
		Brokers: &Condition{Type: v1alpha2.ConditionBrokers, True: true, Reason: v1alpha2.ReasonBrokersUp, Message: "all brokers up"},
		Ready:   ptr.To(true),
	}
	cases := map[string]struct {
		reason  string
		step    step
		written *Written
		want    v1alpha2.MiniClusterStatus
		ready   bool
	}{
		"EndingKeepsRunning": {
			reason:  "While brokers end with success the phase, the counts and the readiness stay as written.",
			step:    step{ready: 1, succeeded: 3},
			written: running,
			want:    running.Status,
			ready:   true,
		},
		"NothingWritten": {
			reason: "Without what was written (the first run, or a status that does not convert) every change is news.",
			step:   step{ready: 1, succeeded: 3},
			want:   v1alpha2.MiniClusterStatus{Size: 4, MaximumSize: 4, Selector: "hpa-selector=flux-sample", Phase: v1alpha2.PhasePending, Job: v1alpha2.JobStatus{Ready: 1, Succeeded: 3}},
		},
		"TheEnd": {
			reason:  "The lead succeeded: the end is news at once.",
			step:    step{ready: 1, succeeded: 3, conds: [][3]string{successCriteriaMet}},
			written: running,
			want:    v1alpha2.MiniClusterStatus{Size: 4, MaximumSize: 4, Selector: "hpa-selector=flux-sample", Phase: v1alpha2.PhaseSucceeded, Job: v1alpha2.JobStatus{Ready: 1, Succeeded: 3}},
			ready:   true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := plantest.HelloPlan(t)
			r := Observe(p, tc.step.observed(tc.written), []string{render.KeyJob})
			if d := cmp.Diff(tc.want, r.Status); d != "" {
				t.Errorf("%s\nstatus: -want +got:\n%s", tc.reason, d)
			}
			if r.Ready != tc.ready {
				t.Errorf("%s\nready %v, want %v", tc.reason, r.Ready, tc.ready)
			}
		})
	}
}

func TestReadsNothingWhileEnding(t *testing.T) {
	p := plantest.HelloPlan(t)
	o := step{ready: 0, succeeded: 3}.observed(nil)
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	o.Job.Status.StartTime = &metav1.Time{Time: start}
	if got := ReadsFor(p, o, start.Add(time.Minute)); got != (Reads{}) {
		t.Errorf("ReadsFor while the brokers end with success: %+v, want nothing: each pod that leaves would run the composition", got)
	}
}
