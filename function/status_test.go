package function

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/flux-framework/minicluster-crossplane/internal/observe"
)

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
				if c.GetType() == observe.ConditionFinished {
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
