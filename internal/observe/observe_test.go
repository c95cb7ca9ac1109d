package observe

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/observe/observetest"
	"github.com/flux-framework/minicluster-crossplane/internal/plan/plantest"
	"github.com/flux-framework/minicluster-crossplane/internal/render"
)

// condition is the condition of type typ that r reports, the zero
// Condition when it reports none.
func condition(r Report, typ v1alpha2.ConditionType) Condition {
	for _, c := range r.Conditions {
		if c.Type == typ {
			return c
		}
	}
	return Condition{}
}

func TestStatusLifecycle(t *testing.T) {
	type want struct {
		phase   string
		ready   bool
		message []string // substrings; none means no message
	}
	cases := map[string]struct {
		reason string
		job    *batchv1.Job
		want   want
	}{
		"Starting": {
			reason: "Fewer brokers than the quorum: pending, not ready.",
			job:    observetest.Job(2),
			want:   want{phase: v1alpha2.PhasePending, ready: false},
		},
		"Running": {
			reason: "Every broker up: running and ready.",
			job:    observetest.Job(4),
			want:   want{phase: v1alpha2.PhaseRunning, ready: true},
		},
		"LeadFailedTarget": {
			reason: "The lead's runner exited with the failed-job code: the pod failure policy marks the Job FailureTarget, which is already Failed, and not ready while the brokers are still up.",
			job:    observetest.Job(4, [3]string{"FailureTarget", "PodFailurePolicy", observetest.FailJobMessage}),
			want:   want{phase: v1alpha2.PhaseFailed, ready: false, message: []string{"the job on the lead broker failed", "PodFailurePolicy", "exit code 42"}},
		},
		"LeadFailed": {
			reason: "A failed Job is a failed MiniCluster, with the Job's reason and message.",
			job:    observetest.Job(0, [3]string{"FailureTarget", "PodFailurePolicy", observetest.FailJobMessage}, [3]string{"Failed", "PodFailurePolicy", observetest.FailJobMessage}),
			want:   want{phase: v1alpha2.PhaseFailed, ready: false, message: []string{"the job on the lead broker failed", "PodFailurePolicy: " + observetest.FailJobMessage}},
		},
		"BrokerGaveUp": {
			reason: "A broker that failed more than its retries fails the MiniCluster, naming spec.backoffLimit.",
			job:    observetest.Job(0, [3]string{"Failed", "MaxFailedIndexesExceeded", "Job has exceeded the specified maximal number of failed indexes"}),
			want:   want{phase: v1alpha2.PhaseFailed, ready: false, message: []string{"spec.backoffLimit", "MaxFailedIndexesExceeded"}},
		},
		"Deadline": {
			reason: "A cluster past its deadline failed, naming spec.deadlineSeconds.",
			job:    observetest.Job(0, [3]string{"Failed", "DeadlineExceeded", "Job was active longer than specified deadline"}),
			want:   want{phase: v1alpha2.PhaseFailed, ready: false, message: []string{"spec.deadlineSeconds", "DeadlineExceeded"}},
		},
		"LeadSucceededFollowersRunning": {
			reason: "The lead succeeded while followers still run (SuccessCriteriaMet): succeeded, and still ready though brokers are going away.",
			job:    observetest.Job(1, [3]string{"SuccessCriteriaMet", "SuccessPolicy", "Matched rules at index 0"}),
			want:   want{phase: v1alpha2.PhaseSucceeded, ready: true, message: []string{"the job on the lead broker succeeded", "SuccessPolicy"}},
		},
		"Complete": {
			reason: "A completed Job is a succeeded, ready MiniCluster.",
			job:    observetest.Job(0, [3]string{"SuccessCriteriaMet", "SuccessPolicy", "Matched rules at index 0"}, [3]string{"Complete", "SuccessPolicy", "Matched rules at index 0"}),
			want:   want{phase: v1alpha2.PhaseSucceeded, ready: true, message: []string{"succeeded"}},
		},
		"CompleteWithoutPolicy": {
			reason: "A Job completed without a success policy (made before it had one) is still a succeeded MiniCluster.",
			job:    observetest.Job(0, [3]string{"Complete", "", ""}),
			want:   want{phase: v1alpha2.PhaseSucceeded, ready: true, message: []string{"succeeded"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := plantest.HelloPlan(t)
			r := Observe(p, Observed{Composed: map[string]bool{render.KeyJob: true}, Job: tc.job}, []string{render.KeyJob})
			finished := condition(r, v1alpha2.ConditionFinished)
			got := want{phase: r.Status.Phase, ready: r.Ready}
			if diff := cmp.Diff(tc.want.phase, got.phase); diff != "" {
				t.Errorf("%s\nphase: -want, +got:\n%s", tc.reason, diff)
			}
			if got.ready != tc.want.ready {
				t.Errorf("%s\njob ready %v, want %v", tc.reason, got.ready, tc.want.ready)
			}
			if len(tc.want.message) == 0 && finished.Message != "" {
				t.Errorf("%s\nFinished message %q, want none", tc.reason, finished.Message)
			}
			for _, m := range tc.want.message {
				if !strings.Contains(finished.Message, m) {
					t.Errorf("%s\nFinished message %q does not contain %q", tc.reason, finished.Message, m)
				}
			}
		})
	}
}

func TestFinishedCondition(t *testing.T) {
	failed := observetest.Job(0, [3]string{"Failed", "PodFailurePolicy", observetest.FailJobMessage})
	succeeded := observetest.Job(0, [3]string{"Complete", "SuccessPolicy", ""})
	kept := &Condition{Type: v1alpha2.ConditionFinished, True: true, Reason: v1alpha2.ReasonFailed, Message: "the job on the lead broker failed (PodFailurePolicy)"}
	cases := map[string]struct {
		reason string
		o      Observed
		phase  string
		want   Condition
	}{
		"Running": {
			reason: "A running cluster has not finished.",
			o:      Observed{Job: observetest.Job(4)}, phase: v1alpha2.PhaseRunning,
			want: Condition{Type: v1alpha2.ConditionFinished, Reason: v1alpha2.ReasonRunning},
		},
		"Failed": {
			reason: "A failed cluster says why.",
			o:      Observed{Job: failed}, phase: v1alpha2.PhaseFailed,
			want: Condition{Type: v1alpha2.ConditionFinished, True: true, Reason: v1alpha2.ReasonFailed, Message: "the job on the lead broker failed (PodFailurePolicy: " + observetest.FailJobMessage + ")"},
		},
		"Succeeded": {
			reason: "A succeeded cluster says so.",
			o:      Observed{Job: succeeded}, phase: v1alpha2.PhaseSucceeded,
			want: Condition{Type: v1alpha2.ConditionFinished, True: true, Reason: v1alpha2.ReasonSucceeded, Message: "the job on the lead broker succeeded (SuccessPolicy)"},
		},
		"Kept": {
			reason: "The message written first is kept (the lead's last words are read once).",
			o:      Observed{Job: failed, Finished: kept}, phase: v1alpha2.PhaseFailed,
			want: Condition{Type: v1alpha2.ConditionFinished, True: true, Reason: v1alpha2.ReasonFailed, Message: kept.Message},
		},
		"CleanedUp": {
			reason: "spec.cleanup removed the Job: the message it had is kept.",
			o:      Observed{Finished: kept}, phase: v1alpha2.PhaseFailed,
			want: Condition{Type: v1alpha2.ConditionFinished, True: true, Reason: v1alpha2.ReasonFailed, Message: kept.Message},
		},
		"KeptOfAnotherEnd": {
			reason: "A kept message of another phase is not this end's.",
			o:      Observed{Job: succeeded, Finished: kept}, phase: v1alpha2.PhaseSucceeded,
			want: Condition{Type: v1alpha2.ConditionFinished, True: true, Reason: v1alpha2.ReasonSucceeded, Message: "the job on the lead broker succeeded (SuccessPolicy)"},
		},
		"CleanedUpNoMessage": {
			reason: "Without an earlier message, the condition still says how the cluster ended.",
			phase:  v1alpha2.PhaseSucceeded,
			want:   Condition{Type: v1alpha2.ConditionFinished, True: true, Reason: v1alpha2.ReasonSucceeded, Message: "the MiniCluster finished: Succeeded"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, finishedCondition(tc.o, tc.phase)); d != "" {
				t.Errorf("%s\nfinishedCondition: -want +got:\n%s", tc.reason, d)
			}
		})
	}
}

// TestReadsFor: what the function reads in each state. A ready or a
// finished cluster whose message is kept reads nothing.
func TestReadsFor(t *testing.T) {
	started := func(job *batchv1.Job) *batchv1.Job {
		job.Spec.Parallelism = ptr.To[int32](4)
		job.Status.StartTime = ptr.To(metav1.NewTime(time.Date(2024, 1, 1, 0, 0, 1, 0, time.UTC)))
		return job
	}
	kept := &Condition{Type: v1alpha2.ConditionFinished, True: true, Reason: v1alpha2.ReasonFailed, Message: "kept"}
	failed := observetest.Job(0, [3]string{"Failed", "PodFailurePolicy", observetest.FailJobMessage})
	// young is a Job whose brokers started 2 seconds before now.
	now := time.Date(2024, 1, 1, 0, 1, 0, 0, time.UTC)
	young := func(j *batchv1.Job) *batchv1.Job {
		j = started(j)
		j.Status.StartTime = ptr.To(metav1.NewTime(now.Add(-2 * time.Second)))
		j.Status.Active = 4
		return j
	}
	cases := map[string]struct {
		reason string
		o      Observed
		want   Reads
		// brokers is the status of the Brokers condition.
		brokers bool
	}{
		"NoJob": {
			reason: "Nothing composed yet: nothing to explain.",
		},
		"Ready": {
			reason: "Every broker up: nothing read.",
			o:      Observed{Job: started(observetest.Job(4))}, brokers: true,
		},
		"NotReady": {
			reason: "Brokers not up, all pods created: the pods only.",
			o: Observed{Job: func() *batchv1.Job {
				j := started(observetest.Job(2))
				j.Status.Active = 4
				return j
			}()},
			want: Reads{Pods: true},
		},
		"StartingNormally": {
			reason: "Brokers coming up within StartGrace of the Job's start: nothing read, but a look once the grace is over.",
			o:      Observed{Job: young(observetest.Job(1))},
			want:   Reads{LookAgainAfter: StartGrace - 2*time.Second},
		},
		"PodFailedWhileStarting": {
			reason: "A pod failed: its pods at once, whatever the Job's age.",
			o: Observed{Job: func() *batchv1.Job {
				j := young(observetest.Job(1))
				j.Status.Failed = 1
				return j
			}()},
			want: Reads{Pods: true},
		},
		"StartingTooLong": {
			reason: "Brokers still not up StartGrace after the start: the pods, to say why.",
			o: Observed{Job: func() *batchv1.Job {
				j := young(observetest.Job(1))
				j.Status.StartTime = ptr.To(metav1.NewTime(now.Add(-StartGrace)))
				return j
			}()},
			want: Reads{Pods: true},
		},
		"NotSynced": {
			reason: "A Job the job controller has not acted on yet: no Events (a cluster-wide informer) for every new MiniCluster.",
			o:      Observed{Job: observetest.Job(0)}, want: Reads{Pods: true},
		},
		"MissingPods": {
			reason: "Fewer pods than the Job runs: its FailedCreate events too.",
			o: Observed{Job: func() *batchv1.Job {
				j := started(observetest.Job(0))
				j.Status.Active = 2
				return j
			}()},
			want: Reads{Pods: true, Events: true},
		},
		"FinishedFirst": {
			reason: "Just finished: the lead pod's termination message, once.",
			o:      Observed{Job: failed}, want: Reads{Pods: true},
		},
		"FinishedKept": {
			reason: "The Finished message is written: nothing read.",
			o:      Observed{Job: failed, Finished: kept},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := plantest.HelloPlan(t)
			if d := cmp.Diff(tc.want, ReadsFor(p, tc.o, now)); d != "" {
				t.Errorf("%s\nReadsFor: -want +got:\n%s", tc.reason, d)
			}
			r := Observe(p, tc.o, nil)
			if b := condition(r, v1alpha2.ConditionBrokers); tc.o.Job != nil && b.True != tc.brokers {
				t.Errorf("%s\n%s condition %+v, want True=%v", tc.reason, v1alpha2.ConditionBrokers, b, tc.brokers)
			}
			if tc.o.Finished != nil && condition(r, v1alpha2.ConditionFinished).Message != "kept" {
				t.Errorf("%s\nFinished %+v, want the kept message", tc.reason, condition(r, v1alpha2.ConditionFinished))
			}
		})
	}
}

// TestObserveSaysWhy: with the pods Crossplane returns, the Brokers
// condition says why they are not up, and a warning says it too.
func TestObserveSaysWhy(t *testing.T) {
	p := plantest.HelloPlan(t)
	job := observetest.Job(0)
	job.UID = jobUID
	pod := brokerPod("0", "a", 1, waitingMain("ErrImageNeverPull", neverPull))
	r := Observe(p, Observed{Job: job, Pods: []corev1.Pod{pod}}, nil)
	want := "0 of 4 brokers up; flux-sample-0: ErrImageNeverPull: " + neverPull
	if d := cmp.Diff(Condition{Type: v1alpha2.ConditionBrokers, Reason: "ErrImageNeverPull", Message: want}, condition(r, v1alpha2.ConditionBrokers)); d != "" {
		t.Errorf("Brokers: -want +got:\n%s", d)
	}
	if d := cmp.Diff([]string{want}, r.Warnings); d != "" {
		t.Errorf("warnings: -want +got:\n%s", d)
	}
	if r.Status.Phase != v1alpha2.PhasePending {
		t.Errorf("phase %s, want Pending", r.Status.Phase)
	}
}
