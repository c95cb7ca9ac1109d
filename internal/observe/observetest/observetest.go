// Package observetest holds the fixtures the tests of observe and of the
// function share: hello-world's Job as the job controller reports it
// (its plan is plantest.HelloPlan).
package observetest

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// FailJobMessage is the job controller's message when the lead's runner
// exits with the failed-job code.
const FailJobMessage = "Container flux-sample for pod tenant-a/flux-sample-0-x7k2p failed with exit code 42 matching FailJob rule at index 0"

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
