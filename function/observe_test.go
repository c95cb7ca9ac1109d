package function

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/structpb"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/response"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/observe"
	"github.com/flux-framework/minicluster-crossplane/internal/observe/observetest"
	"github.com/flux-framework/minicluster-crossplane/internal/plan"
	"github.com/flux-framework/minicluster-crossplane/internal/plan/plantest"
)

// TestReadForStatus: the adapter asks Crossplane for what observe.ReadsFor
// names, with selectors confined to the MiniCluster's namespace (its pods
// by label, Kueue's Workload by the Job's UID), and converts what
// Crossplane answers.
func TestReadForStatus(t *testing.T) {
	p := plantest.HelloPlan(t)
	starting := observetest.Job(1)
	starting.UID = "job-uid"
	queued := observetest.Job(0)
	queued.UID = "job-uid"
	queued.Labels = map[string]string{plan.LabelKueueQueueName: "user-queue"}
	queued.Spec.Suspend = ptr.To(true)

	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "flux-sample-0-abcde", Namespace: "tenant-a", Labels: map[string]string{plan.LabelSelector: "flux-sample"}}}
	podContent, err := runtime.DefaultUnstructuredConverter.ToUnstructured(pod)
	if err != nil {
		t.Fatal(err)
	}
	podStruct, err := structpb.NewStruct(podContent)
	if err != nil {
		t.Fatal(err)
	}

	now := time.Date(2024, 1, 1, 0, 1, 0, 0, time.UTC)
	young := observetest.Job(1)
	young.Status.StartTime = ptr.To(metav1.NewTime(now.Add(-time.Second)))

	type want struct {
		selectors map[string]string // requirement name -> kind/namespace/match
		pods      int
		ttl       time.Duration
	}
	cases := map[string]struct {
		reason string
		job    observe.Observed
		req    *fnv1.RunFunctionRequest
		want   want
	}{
		"Starting": {
			reason: "Brokers not up: the MiniCluster's pods, by its selector label.",
			job:    observe.Observed{Job: starting},
			req:    &fnv1.RunFunctionRequest{},
			want:   want{selectors: map[string]string{requiredPods: "Pod/tenant-a/" + plan.LabelSelector + "=flux-sample"}},
		},
		"StartingAnswered": {
			reason: "What Crossplane returned is converted once.",
			job:    observe.Observed{Job: starting},
			req:    &fnv1.RunFunctionRequest{RequiredResources: map[string]*fnv1.Resources{requiredPods: {Items: []*fnv1.Resource{{Resource: podStruct}}}}},
			want:   want{selectors: map[string]string{requiredPods: "Pod/tenant-a/" + plan.LabelSelector + "=flux-sample"}, pods: 1},
		},
		"Queued": {
			reason: "A queued Job: its LocalQueue by name and its Workload by the Job's UID.",
			job:    observe.Observed{Job: queued},
			req:    &fnv1.RunFunctionRequest{},
			want: want{selectors: map[string]string{
				requiredLocalQueue: "LocalQueue/tenant-a/user-queue",
				requiredWorkloads:  "Workload/tenant-a/" + labelKueueJobUID + "=job-uid",
			}},
		},
		"Running": {
			reason: "Every broker up: nothing read.",
			job:    observe.Observed{Job: observetest.Job(4)},
			req:    &fnv1.RunFunctionRequest{},
			want:   want{selectors: map[string]string{}},
		},
		"StartingNormally": {
			reason: "Brokers coming up: no pods read, and the next run when observe wants to look (9 s from now), not sooner under Crossplane's 10 % jitter: a TTL of 10 s.",
			job:    observe.Observed{Job: young},
			req:    &fnv1.RunFunctionRequest{},
			want:   want{selectors: map[string]string{}, ttl: 10 * time.Second},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := response.To(tc.req, TTL)
			o := tc.job
			if err := readForStatus(tc.req, rsp, p, &o, now); err != nil {
				t.Fatal(err)
			}
			got := want{selectors: map[string]string{}, pods: len(o.Pods)}
			if ttl := rsp.GetMeta().GetTtl().AsDuration(); ttl != TTL {
				got.ttl = ttl
			}
			for name, sel := range rsp.GetRequirements().GetResources() {
				match := sel.GetMatchName()
				for k, v := range sel.GetMatchLabels().GetLabels() {
					match = k + "=" + v
				}
				got.selectors[name] = sel.GetKind() + "/" + sel.GetNamespace() + "/" + match
			}
			if d := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); d != "" {
				t.Errorf("%s\nreadForStatus: -want +got:\n%s", tc.reason, d)
			}
		})
	}
}

// TestWrittenOf: what the observed composite's status said is read back as
// observe's Written, so that a report that differs only in what is not
// news leaves the status as it was (observe/quiet.go).
func TestWrittenOf(t *testing.T) {
	cases := map[string]struct {
		reason string
		xr     map[string]any
		want   *observe.Written
	}{
		"Running": {
			reason: "The status, the Brokers condition and Crossplane's Ready condition as written.",
			xr: map[string]any{"status": map[string]any{
				"size": int64(4), "phase": "Running", "job": map[string]any{"ready": int64(4), "succeeded": int64(0), "failed": int64(0)},
				"conditions": []any{
					map[string]any{"type": "Brokers", "status": "True", "reason": "Up", "message": "all brokers up"},
					map[string]any{"type": "Ready", "status": "True", "reason": "Available"},
				},
			}},
			want: &observe.Written{
				Status:  v1alpha2.MiniClusterStatus{Size: 4, Phase: v1alpha2.PhaseRunning, Job: v1alpha2.JobStatus{Ready: 4}},
				Brokers: &observe.Condition{Type: v1alpha2.ConditionBrokers, True: true, Reason: v1alpha2.ReasonBrokersUp, Message: "all brokers up"},
				Ready:   ptr.To(true),
			},
		},
		"New": {
			reason: "A composite with no status yet: nothing was written.",
			xr:     map[string]any{},
			want:   &observe.Written{},
		},
		"Unreadable": {
			reason: "A status that does not convert says nothing, so every change is news.",
			xr:     map[string]any{"status": map[string]any{"job": "four"}},
			want:   nil,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, writtenOf(tc.xr)); d != "" {
				t.Errorf("%s\nwrittenOf: -want +got:\n%s", tc.reason, d)
			}
		})
	}
}
