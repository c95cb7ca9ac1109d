package observe

import (
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// brokersUp: enough brokers are up, as the job controller counts ready
// pods: at least the quorum (the cluster is Running, and its Job ready).
func brokersUp(job *batchv1.Job, quorum int32) bool {
	return job.Status.Ready != nil && *job.Status.Ready >= quorum
}

// failed: the Job failed, or will once its pods are gone.
func failed(job *batchv1.Job) bool {
	return endCondition(job, batchv1.JobFailed, batchv1.JobFailureTarget) != nil
}

// succeeded: the Job completed, or will once its pods are gone (a
// successPolicy matched: the lead succeeded).
func succeeded(job *batchv1.Job) bool {
	return endCondition(job, batchv1.JobComplete, batchv1.JobSuccessCriteriaMet) != nil
}

// endCondition is the Job's condition of the first of types that is true,
// nil when none is.
func endCondition(job *batchv1.Job, types ...batchv1.JobConditionType) *batchv1.JobCondition {
	for _, t := range types {
		for i := range job.Status.Conditions {
			if c := &job.Status.Conditions[i]; c.Type == t && c.Status == corev1.ConditionTrue {
				return c
			}
		}
	}
	return nil
}

// jobDetail is " (Reason: message)" of a Job condition, or "".
func jobDetail(c *batchv1.JobCondition) string {
	var parts []string
	for _, p := range []string{c.Reason, strings.TrimSpace(c.Message)} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ": ") + ")"
}

// missingPods tells whether the job controller has synced the Job (it sets
// startTime in the same status update that counts the pods it created) and
// has fewer pods than it runs. That is when FailedCreate events say why;
// a Job just created, whose controller has not acted yet, reads nothing.
func missingPods(job *batchv1.Job) bool {
	if job.Status.StartTime == nil || job.Spec.Parallelism == nil {
		return false
	}
	return job.Status.Active+job.Status.Succeeded < *job.Spec.Parallelism
}
