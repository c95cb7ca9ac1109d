package observe

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/observe/observetest"
	"github.com/flux-framework/minicluster-crossplane/internal/plan"
	"github.com/flux-framework/minicluster-crossplane/internal/plan/plantest"
)

// queuedJob is flux-sample's Job as Kueue's webhook created it: with a
// queue name, suspended, parallelism 4.
func queuedJob() *batchv1.Job {
	job := observetest.Job(0)
	job.UID = types.UID(jobUID)
	job.Labels = map[string]string{plan.LabelKueueQueueName: "user-queue"}
	job.Spec.Suspend = ptr.To(true)
	job.Spec.Parallelism = ptr.To[int32](4)
	return job
}

// TestQueued: a suspended Job with a queue name is Queued, reads Kueue's
// objects, and the Brokers condition names both queues and Kueue's
// reason, in words that do not change while the cause does not.
func TestQueued(t *testing.T) {
	p := plantest.HelloPlan(t)
	job := queuedJob()
	workload := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
		"metadata": map[string]any{
			"name": "job-flux-sample-1a2b3", "namespace": "tenant-a",
			"ownerReferences": []any{map[string]any{"apiVersion": "batch/v1", "kind": "Job", "name": "flux-sample", "uid": jobUID, "controller": true}},
		},
		"status": map[string]any{"conditions": []any{map[string]any{
			"type": "QuotaReserved", "status": "False", "reason": "Pending",
			"message":            "couldn't assign flavors to pod set main: insufficient unused quota for pods in flavor default-flavor, 4 more needed",
			"lastTransitionTime": "2024-01-01T00:00:09Z",
		}}},
	}}
	lq := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
		"metadata": map[string]any{"name": "user-queue", "namespace": "tenant-a"},
		"spec":     map[string]any{"clusterQueue": "hpc"},
	}}
	cases := map[string]struct {
		o    Observed
		want string
	}{
		"NotAnswered": {
			o:    Observed{Job: job},
			want: "queued by Kueue in LocalQueue tenant-a/user-queue, 4 pods: LocalQueue user-queue does not exist in namespace tenant-a: the platform creates the queues (kueue.x-k8s.io LocalQueue), ask it which to name in spec.jobLabels",
		},
		"Answered": {
			o:    Observed{Job: job, LocalQueue: lq, Workloads: []*unstructured.Unstructured{workload}},
			want: "queued by Kueue in LocalQueue tenant-a/user-queue (ClusterQueue hpc), 4 pods: Pending: couldn't assign flavors to pod set main: insufficient unused quota for pods in flavor default-flavor, 4 more needed",
		},
		"NoWorkloadYet": {
			o:    Observed{Job: job, LocalQueue: lq},
			want: "queued by Kueue in LocalQueue tenant-a/user-queue (ClusterQueue hpc), 4 pods: waiting for Kueue to create the Job's Workload",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if d := cmp.Diff(Reads{Queue: true}, ReadsFor(p, tc.o, time.Now())); d != "" {
				t.Errorf("ReadsFor: -want +got:\n%s", d)
			}
			r := Observe(p, tc.o, nil)
			if r.Status.Phase != v1alpha2.PhaseQueued {
				t.Errorf("phase %q, want %q", r.Status.Phase, v1alpha2.PhaseQueued)
			}
			if d := cmp.Diff(Condition{Type: v1alpha2.ConditionBrokers, Reason: v1alpha2.ReasonQueued, Message: tc.want}, condition(r, v1alpha2.ConditionBrokers)); d != "" {
				t.Errorf("Brokers: -want +got:\n%s", d)
			}
		})
	}
}

// TestAdmittedReadsNoQueue: once Kueue unsuspends the Job, the MiniCluster
// is not Queued and reads no Kueue object.
func TestAdmittedReadsNoQueue(t *testing.T) {
	p := plantest.HelloPlan(t)
	job := queuedJob()
	job.Spec.Suspend = ptr.To(false)
	o := Observed{Job: job}
	if phase := Observe(p, o, nil).Status.Phase; phase != v1alpha2.PhasePending {
		t.Fatalf("phase %q, want Pending", phase)
	}
	if r := ReadsFor(p, o, time.Now()); r.Queue {
		t.Errorf("an admitted Job reads Kueue's objects: %+v", r)
	}
}
