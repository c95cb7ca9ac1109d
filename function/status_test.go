package function

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/plan"
	"github.com/flux-framework/minicluster-crossplane/internal/render"
)

// helloPlan plans the hello-world MiniCluster: flux-sample, 4 brokers, all
// of which the cluster waits for.
func helloPlan(t *testing.T) *plan.Plan {
	t.Helper()
	mc := &v1alpha2.MiniCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "flux-sample", Namespace: "tenant-a"},
		Spec: v1alpha2.MiniClusterSpec{
			Size:       ptr.To[int32](4),
			Containers: []v1alpha2.MiniClusterContainer{{Image: "rockylinux:9", Command: "echo hello world"}},
		},
	}
	v1alpha2.SetDefaults(mc, v1alpha2.PlatformDefaults{})
	p, errs := plan.New(mc, plan.Facts{Namespace: "tenant-a"})
	if len(errs) > 0 {
		t.Fatalf("cannot plan hello-world: %v", errs)
	}
	return p
}

// observedJobWith is the Job flux-sample as the job controller reports it:
// ready of 4 pods ready, and conditions (type, reason, message) that are
// true.
func observedJobWith(ready int32, conds ...[3]string) *batchv1.Job {
	job := &batchv1.Job{}
	job.APIVersion, job.Kind = "batch/v1", "Job"
	job.Name, job.Namespace = "flux-sample", "tenant-a"
	job.Status.Ready = ptr.To(ready)
	job.Status.Active = ready
	for _, c := range conds {
		job.Status.Conditions = append(job.Status.Conditions, batchv1.JobCondition{
			Type: batchv1.JobConditionType(c[0]), Status: corev1.ConditionTrue, Reason: c[1], Message: c[2],
		})
	}
	return job
}

const failJobMessage = "Container flux-sample for pod tenant-a/flux-sample-0-x7k2p failed with exit code 42 matching FailJob rule at index 0"

func TestStatusLifecycle(t *testing.T) {
	type want struct {
		phase   string
		ready   resource.Ready
		message []string // substrings; none means no message
	}
	cases := map[string]struct {
		reason string
		job    *batchv1.Job
		want   want
	}{
		"Starting": {
			reason: "Fewer brokers than the quorum: pending, not ready.",
			job:    observedJobWith(2),
			want:   want{phase: v1alpha2.PhasePending, ready: resource.ReadyFalse},
		},
		"Running": {
			reason: "Every broker up: running and ready.",
			job:    observedJobWith(4),
			want:   want{phase: v1alpha2.PhaseRunning, ready: resource.ReadyTrue},
		},
		"LeadFailedTarget": {
			reason: "The lead's runner exited with the failed-job code: the pod failure policy marks the Job FailureTarget, which is already Failed, and not ready while the brokers are still up.",
			job:    observedJobWith(4, [3]string{"FailureTarget", "PodFailurePolicy", failJobMessage}),
			want:   want{phase: v1alpha2.PhaseFailed, ready: resource.ReadyFalse, message: []string{"the job on the lead broker failed", "PodFailurePolicy", "exit code 42"}},
		},
		"LeadFailed": {
			reason: "A failed Job is a failed MiniCluster, with the Job's reason and message.",
			job:    observedJobWith(0, [3]string{"FailureTarget", "PodFailurePolicy", failJobMessage}, [3]string{"Failed", "PodFailurePolicy", failJobMessage}),
			want:   want{phase: v1alpha2.PhaseFailed, ready: resource.ReadyFalse, message: []string{"the job on the lead broker failed", "PodFailurePolicy: " + failJobMessage}},
		},
		"BrokerGaveUp": {
			reason: "A broker that failed more than its retries fails the MiniCluster, naming spec.backoffLimit.",
			job:    observedJobWith(0, [3]string{"Failed", "MaxFailedIndexesExceeded", "Job has exceeded the specified maximal number of failed indexes"}),
			want:   want{phase: v1alpha2.PhaseFailed, ready: resource.ReadyFalse, message: []string{"spec.backoffLimit", "MaxFailedIndexesExceeded"}},
		},
		"Deadline": {
			reason: "A cluster past its deadline failed, naming spec.deadlineSeconds.",
			job:    observedJobWith(0, [3]string{"Failed", "DeadlineExceeded", "Job was active longer than specified deadline"}),
			want:   want{phase: v1alpha2.PhaseFailed, ready: resource.ReadyFalse, message: []string{"spec.deadlineSeconds", "DeadlineExceeded"}},
		},
		"LeadSucceededFollowersRunning": {
			reason: "The lead succeeded while followers still run (SuccessCriteriaMet): succeeded, and still ready though brokers are going away.",
			job:    observedJobWith(1, [3]string{"SuccessCriteriaMet", "SuccessPolicy", "Matched rules at index 0"}),
			want:   want{phase: v1alpha2.PhaseSucceeded, ready: resource.ReadyTrue, message: []string{"the job on the lead broker succeeded", "SuccessPolicy"}},
		},
		"Complete": {
			reason: "A completed Job is a succeeded, ready MiniCluster.",
			job:    observedJobWith(0, [3]string{"SuccessCriteriaMet", "SuccessPolicy", "Matched rules at index 0"}, [3]string{"Complete", "SuccessPolicy", "Matched rules at index 0"}),
			want:   want{phase: v1alpha2.PhaseSucceeded, ready: resource.ReadyTrue, message: []string{"succeeded"}},
		},
		"CompleteWithoutPolicy": {
			reason: "A Job completed without a success policy (made before it had one) is still a succeeded MiniCluster.",
			job:    observedJobWith(0, [3]string{"Complete", "", ""}),
			want:   want{phase: v1alpha2.PhaseSucceeded, ready: resource.ReadyTrue, message: []string{"succeeded"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := helloPlan(t)
			st := status(p, nil, tc.job)
			got := want{phase: st.Phase, ready: ready(render.KeyJob, observedOf(t, tc.job), tc.job, p.ReadyQuorum)}
			if diff := cmp.Diff(tc.want.phase, got.phase); diff != "" {
				t.Errorf("%s\nphase: -want, +got:\n%s", tc.reason, diff)
			}
			if got.ready != tc.want.ready {
				t.Errorf("%s\njob ready %v, want %v", tc.reason, got.ready, tc.want.ready)
			}
			if len(tc.want.message) == 0 && st.Message != "" {
				t.Errorf("%s\nmessage %q, want none", tc.reason, st.Message)
			}
			for _, m := range tc.want.message {
				if !strings.Contains(st.Message, m) {
					t.Errorf("%s\nmessage %q does not contain %q", tc.reason, st.Message, m)
				}
			}
		})
	}
}

func observedOf(t *testing.T, job *batchv1.Job) resource.ObservedComposed {
	t.Helper()
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(job)
	if err != nil {
		t.Fatal(err)
	}
	return resource.ObservedComposed{Resource: &composed.Unstructured{Unstructured: unstructured.Unstructured{Object: u}}}
}

func TestReportFinished(t *testing.T) {
	type want struct {
		status  fnv1.Status
		reason  string
		message []string
	}
	cases := map[string]struct {
		reason string
		status ClusterStatus
		xr     map[string]any
		want   want
	}{
		"Running": {
			reason: "A running cluster has not finished.",
			status: ClusterStatus{MiniClusterStatus: v1alpha2.MiniClusterStatus{Phase: v1alpha2.PhaseRunning}},
			want:   want{status: fnv1.Status_STATUS_CONDITION_FALSE, reason: "Running"},
		},
		"Failed": {
			reason: "A failed cluster says why on the claim.",
			status: ClusterStatus{MiniClusterStatus: v1alpha2.MiniClusterStatus{Phase: v1alpha2.PhaseFailed}, Message: "the job on the lead broker failed (PodFailurePolicy: " + failJobMessage + ")"},
			want:   want{status: fnv1.Status_STATUS_CONDITION_TRUE, reason: "Failed", message: []string{"the job on the lead broker failed", failJobMessage}},
		},
		"Succeeded": {
			reason: "A succeeded cluster says so.",
			status: ClusterStatus{MiniClusterStatus: v1alpha2.MiniClusterStatus{Phase: v1alpha2.PhaseSucceeded}, Message: "the job on the lead broker succeeded"},
			want:   want{status: fnv1.Status_STATUS_CONDITION_TRUE, reason: "Succeeded", message: []string{"succeeded"}},
		},
		"CleanedUp": {
			reason: "spec.cleanup removed the Job: the message it had is kept from the composite.",
			status: ClusterStatus{MiniClusterStatus: v1alpha2.MiniClusterStatus{Phase: v1alpha2.PhaseFailed}},
			xr: map[string]any{"status": map[string]any{"phase": "Failed", "conditions": []any{
				map[string]any{"type": "Ready", "status": "False", "reason": "Creating"},
				map[string]any{"type": ConditionFinished, "status": "True", "reason": "Failed", "message": "the job on the lead broker failed (PodFailurePolicy)"},
			}}},
			want: want{status: fnv1.Status_STATUS_CONDITION_TRUE, reason: "Failed", message: []string{"the job on the lead broker failed (PodFailurePolicy)"}},
		},
		"CleanedUpNoMessage": {
			reason: "Without an earlier message, the condition still says how the cluster ended.",
			status: ClusterStatus{MiniClusterStatus: v1alpha2.MiniClusterStatus{Phase: v1alpha2.PhaseSucceeded}},
			want:   want{status: fnv1.Status_STATUS_CONDITION_TRUE, reason: "Succeeded", message: []string{"Succeeded"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := &fnv1.RunFunctionResponse{}
			tc.status.ReportFinished(rsp, tc.xr)
			var got *fnv1.Condition
			for _, c := range rsp.GetConditions() {
				if c.GetType() == ConditionFinished {
					got = c
				}
			}
			if got == nil {
				t.Fatalf("%s\nno %s condition in %v", tc.reason, ConditionFinished, rsp.GetConditions())
			}
			if got.GetStatus() != tc.want.status || got.GetReason() != tc.want.reason || got.GetTarget() != fnv1.Target_TARGET_COMPOSITE_AND_CLAIM {
				t.Errorf("%s\ncondition %s=%v reason %q target %v, want %v reason %q on the composite and claim", tc.reason, ConditionFinished, got.GetStatus(), got.GetReason(), got.GetTarget(), tc.want.status, tc.want.reason)
			}
			for _, m := range tc.want.message {
				if !strings.Contains(got.GetMessage(), m) {
					t.Errorf("%s\nmessage %q does not contain %q", tc.reason, got.GetMessage(), m)
				}
			}
		})
	}
}

func TestRunFunctionLifecycle(t *testing.T) {
	type want struct {
		phase    string
		ready    fnv1.Ready
		finished fnv1.Status
		message  string
	}
	cases := map[string]struct {
		reason string
		job    *batchv1.Job
		want   want
	}{
		"Running": {
			reason: "Every broker up: Running, ready, not finished.",
			job:    observedJobWith(4),
			want:   want{phase: "Running", ready: fnv1.Ready_READY_TRUE, finished: fnv1.Status_STATUS_CONDITION_FALSE},
		},
		"LeadFailed": {
			reason: "The job failed on the lead: the claim is Failed, and its Finished condition carries the Job's reason and message.",
			job:    observedJobWith(0, [3]string{"FailureTarget", "PodFailurePolicy", failJobMessage}, [3]string{"Failed", "PodFailurePolicy", failJobMessage}),
			want:   want{phase: "Failed", ready: fnv1.Ready_READY_FALSE, finished: fnv1.Status_STATUS_CONDITION_TRUE, message: failJobMessage},
		},
		"LeadSucceeded": {
			reason: "The lead succeeded while followers shut down: the claim is Succeeded and stays ready.",
			job:    observedJobWith(2, [3]string{"SuccessCriteriaMet", "SuccessPolicy", "Matched rules at index 0"}),
			want:   want{phase: "Succeeded", ready: fnv1.Ready_READY_TRUE, finished: fnv1.Status_STATUS_CONDITION_TRUE, message: "the job on the lead broker succeeded"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(tc.job)
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(u)
			if err != nil {
				t.Fatal(err)
			}
			rsp := run(t, req(xr(helloSpec, ""), observedWithJob(string(b)), ""))
			got := want{ready: rsp.GetDesired().GetComposite().GetReady()}
			got.phase, _ = rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)["phase"].(string)
			for _, c := range rsp.GetConditions() {
				if c.GetType() == ConditionFinished {
					got.finished = c.GetStatus()
					if tc.want.message != "" && strings.Contains(c.GetMessage(), tc.want.message) {
						got.message = tc.want.message
					}
				}
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nRunFunction(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
