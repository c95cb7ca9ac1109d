package function

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/structpb"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// queuedJob is flux-sample's Job as Kueue's webhook created it: with a
// queue name, suspended, parallelism 4.
func queuedJob() *batchv1.Job {
	job := observedJobWith(0)
	job.UID = types.UID(jobUID)
	job.Labels = map[string]string{LabelKueueQueueName: "user-queue"}
	job.Spec.Suspend = ptr.To(true)
	job.Spec.Parallelism = ptr.To[int32](4)
	return job
}

func structOf(t *testing.T, m map[string]any) *structpb.Struct {
	t.Helper()
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestQueuedStatus: a suspended Job with a queue name is Queued, reads the
// Workload (by the Job's UID) and the LocalQueue, and the Brokers
// condition names both queues and Kueue's reason, in words that do not
// change while the cause does not.
func TestQueuedStatus(t *testing.T) {
	p := helloPlan(t)
	job := queuedJob()
	st := status(p, nil, job)
	if st.Phase != v1alpha2.PhaseQueued {
		t.Fatalf("phase %q, want %q", st.Phase, v1alpha2.PhaseQueued)
	}
	workload := map[string]any{
		"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
		"metadata": map[string]any{
			"name": "job-flux-sample-1a2b3", "namespace": "tenant-a",
			"labels":          map[string]any{labelKueueJobUID: jobUID},
			"ownerReferences": []any{map[string]any{"apiVersion": "batch/v1", "kind": "Job", "name": "flux-sample", "uid": jobUID, "controller": true}},
		},
		"status": map[string]any{"conditions": []any{map[string]any{
			"type": "QuotaReserved", "status": "False", "reason": "Pending",
			"message":            "couldn't assign flavors to pod set main: insufficient unused quota for pods in flavor default-flavor, 4 more needed",
			"lastTransitionTime": "2024-01-01T00:00:09Z",
		}}},
	}
	lq := map[string]any{
		"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
		"metadata": map[string]any{"name": "user-queue", "namespace": "tenant-a"},
		"spec":     map[string]any{"clusterQueue": "hpc"},
	}
	cases := map[string]struct {
		req  *fnv1.RunFunctionRequest
		want string
	}{
		"NotAnswered": {
			req:  &fnv1.RunFunctionRequest{},
			want: "queued by Kueue in LocalQueue tenant-a/user-queue, 4 pods: LocalQueue user-queue does not exist in namespace tenant-a",
		},
		"Answered": {
			req: &fnv1.RunFunctionRequest{RequiredResources: map[string]*fnv1.Resources{
				requiredWorkloads:  {Items: []*fnv1.Resource{{Resource: structOf(t, workload)}}},
				requiredLocalQueue: {Items: []*fnv1.Resource{{Resource: structOf(t, lq)}}},
			}},
			want: "queued by Kueue in LocalQueue tenant-a/user-queue (ClusterQueue hpc), 4 pods: Pending: couldn't assign flavors to pod set main: insufficient unused quota for pods in flavor default-flavor, 4 more needed",
		},
		"NoWorkloadYet": {
			req: &fnv1.RunFunctionRequest{RequiredResources: map[string]*fnv1.Resources{
				requiredWorkloads:  {},
				requiredLocalQueue: {Items: []*fnv1.Resource{{Resource: structOf(t, lq)}}},
			}},
			want: "queued by Kueue in LocalQueue tenant-a/user-queue (ClusterQueue hpc), 4 pods: waiting for Kueue to create the Job's Workload",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := &fnv1.RunFunctionResponse{}
			if err := st.observeBrokers(tc.req, rsp, p, job, nil); err != nil {
				t.Fatal(err)
			}
			var got []string
			for name := range rsp.GetRequirements().GetResources() {
				got = append(got, name)
			}
			if d := cmp.Diff([]string{requiredLocalQueue, requiredWorkloads}, got, sortStrings); d != "" {
				t.Errorf("requirements: -want +got:\n%s", d)
			}
			sel := rsp.GetRequirements().GetResources()[requiredWorkloads]
			if sel.GetMatchLabels().GetLabels()[labelKueueJobUID] != jobUID || sel.GetNamespace() != "tenant-a" {
				t.Errorf("the Workload's selector %v, want the Job's UID label in its namespace", sel)
			}
			var brokers *fnv1.Condition
			for _, c := range rsp.GetConditions() {
				if c.GetType() == ConditionBrokers {
					brokers = c
				}
			}
			if brokers == nil || brokers.GetReason() != ReasonQueued || brokers.GetStatus() != fnv1.Status_STATUS_CONDITION_FALSE {
				t.Fatalf("Brokers %v, want False, %s", brokers, ReasonQueued)
			}
			if !strings.HasPrefix(brokers.GetMessage(), tc.want) {
				t.Errorf("Brokers message\n%q\nwant it to start with\n%q", brokers.GetMessage(), tc.want)
			}
		})
	}
}

// TestAdmittedReadsNoQueue: once Kueue unsuspends the Job, the MiniCluster
// is not Queued and reads neither the Workload nor the LocalQueue.
func TestAdmittedReadsNoQueue(t *testing.T) {
	p := helloPlan(t)
	job := queuedJob()
	job.Spec.Suspend = ptr.To(false)
	st := status(p, nil, job)
	if st.Phase != v1alpha2.PhasePending {
		t.Fatalf("phase %q, want Pending", st.Phase)
	}
	rsp := &fnv1.RunFunctionResponse{}
	if err := st.observeBrokers(&fnv1.RunFunctionRequest{}, rsp, p, job, nil); err != nil {
		t.Fatal(err)
	}
	for name := range rsp.GetRequirements().GetResources() {
		if name == requiredWorkloads || name == requiredLocalQueue {
			t.Errorf("an admitted Job reads %s", name)
		}
	}
}

// TestKeepAdmittedSize: an admitted Job keeps its size; a queued one takes
// the new size (Kueue queues it again at that size).
func TestKeepAdmittedSize(t *testing.T) {
	mc := &v1alpha2.MiniCluster{Spec: v1alpha2.MiniClusterSpec{Size: ptr.To[int32](2)}}
	queued := queuedJob()
	if msg := keepAdmittedSize(mc, queued); msg != "" || *mc.Spec.Size != 2 {
		t.Errorf("queued: %q, size %d; want the new size 2", msg, *mc.Spec.Size)
	}
	admitted := queuedJob()
	admitted.Spec.Suspend = ptr.To(false)
	msg := keepAdmittedSize(mc, admitted)
	if *mc.Spec.Size != 4 || !strings.Contains(msg, "Kueue admitted this MiniCluster with 4 pods") {
		t.Errorf("admitted: %q, size %d; want the admitted size 4 and why", msg, *mc.Spec.Size)
	}
	plain := observedJobWith(2)
	plain.Spec.Parallelism = ptr.To[int32](4)
	mc.Spec.Size = ptr.To[int32](2)
	if msg := keepAdmittedSize(mc, plain); msg != "" || *mc.Spec.Size != 2 {
		t.Errorf("without Kueue: %q, size %d; want the new size", msg, *mc.Spec.Size)
	}
}

// TestQueueName: the queue of jobLabels, else of the pods' labels; two
// different ones are an error.
func TestQueueName(t *testing.T) {
	mc := &v1alpha2.MiniCluster{}
	mc.Spec.Pod.Labels = map[string]string{LabelKueueQueueName: "pods-queue"}
	if q := QueueName(mc); q != "pods-queue" {
		t.Errorf("from the pods' labels: %q", q)
	}
	mc.Spec.JobLabels = map[string]string{LabelKueueQueueName: "job-queue"}
	if q := QueueName(mc); q != "job-queue" {
		t.Errorf("from jobLabels: %q", q)
	}
	if msg := queueConflict(mc); !strings.Contains(msg, "spec.pod.labels[kueue.x-k8s.io/queue-name]") {
		t.Errorf("conflict: %q", msg)
	}
}
