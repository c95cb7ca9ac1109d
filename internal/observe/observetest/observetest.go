// Package observetest holds the fixtures the tests of observe and of the
// function share: hello-world's plan and its Job as the job controller
// reports it.
package observetest

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/plan"
)

// FailJobMessage is the job controller's message when the lead's runner
// exits with the failed-job code.
const FailJobMessage = "Container flux-sample for pod tenant-a/flux-sample-0-x7k2p failed with exit code 42 matching FailJob rule at index 0"

// HelloPlan plans the hello-world MiniCluster flux-sample in tenant-a: 4
// brokers, all of which the cluster waits for.
func HelloPlan(t *testing.T) *plan.Plan {
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

// Job is the Job flux-sample as the job controller reports it: ready of 4
// pods ready, and conditions (type, reason, message) that are true.
func Job(ready int32, conds ...[3]string) *batchv1.Job {
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
