package function

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/runtime"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/observe/observetest"
)

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
			job:    observetest.Job(4),
			want:   want{phase: "Running", ready: fnv1.Ready_READY_TRUE, finished: fnv1.Status_STATUS_CONDITION_FALSE},
		},
		"LeadFailed": {
			reason: "The job failed on the lead: the claim is Failed, and its Finished condition carries the Job's reason and message.",
			job:    observetest.Job(0, [3]string{"FailureTarget", "PodFailurePolicy", observetest.FailJobMessage}, [3]string{"Failed", "PodFailurePolicy", observetest.FailJobMessage}),
			want:   want{phase: "Failed", ready: fnv1.Ready_READY_FALSE, finished: fnv1.Status_STATUS_CONDITION_TRUE, message: observetest.FailJobMessage},
		},
		"LeadSucceeded": {
			reason: "The lead succeeded while followers shut down: the claim is Succeeded and stays ready.",
			job:    observetest.Job(2, [3]string{"SuccessCriteriaMet", "SuccessPolicy", "Matched rules at index 0"}),
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
				if c.GetType() == string(v1alpha2.ConditionFinished) {
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
