package observe

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/plan"
)

// status is the MiniCluster's status: size, maximumSize and selector from
// the plan; phase and counts from the observed Job; the lead broker's
// Service and NodePort from the observed Service.
func status(p *plan.Plan, o Observed) v1alpha2.MiniClusterStatus {
	st := v1alpha2.MiniClusterStatus{
		Size:        p.Size,
		MaximumSize: p.MaximumSize,
		Selector:    p.Names.Selector,
		Phase:       phase(p, o.Job),
	}
	if job := o.Job; job != nil {
		st.Job = v1alpha2.JobStatus{Succeeded: job.Status.Succeeded, Failed: job.Status.Failed}
		if job.Status.Ready != nil {
			st.Job.Ready = *job.Status.Ready
		}
	}
	switch {
	case o.LeadBroker != nil:
		lb := &v1alpha2.LeadBrokerStatus{Service: o.LeadBroker.Name}
		for _, port := range o.LeadBroker.Spec.Ports {
			if port.Port == v1alpha2.BrokerPort {
				lb.NodePort = port.NodePort
			}
		}
		st.LeadBroker = lb
	case p.ComposesLeadBroker:
		st.LeadBroker = &v1alpha2.LeadBrokerStatus{Service: p.Names.LeadBroker}
	}
	return st
}

// phase is the MiniCluster's phase. A cluster spec.cleanup has removed
// keeps the phase it finished with.
func phase(p *plan.Plan, job *batchv1.Job) string {
	if p.CleanedUp {
		return p.MiniCluster.Status.Phase
	}
	if job == nil {
		return v1alpha2.PhasePending
	}
	// FailureTarget and SuccessCriteriaMet come first, while the job
	// controller still stops the remaining pods; Failed and Complete
	// follow once they are gone.
	switch {
	case failed(job):
		return v1alpha2.PhaseFailed
	case succeeded(job):
		return v1alpha2.PhaseSucceeded
	case brokersUp(job, p.ReadyQuorum):
		return v1alpha2.PhaseRunning
	case Queued(job):
		return v1alpha2.PhaseQueued
	}
	return v1alpha2.PhasePending
}

// finishedCondition is the Finished condition. A finished cluster keeps
// the message it was first given (the lead's last words are read once),
// also once its Job is gone (spec.cleanup).
func finishedCondition(o Observed, phase string) Condition {
	switch phase {
	case v1alpha2.PhaseSucceeded, v1alpha2.PhaseFailed:
	default:
		return Condition{Type: v1alpha2.ConditionFinished, Reason: v1alpha2.ConditionReason(phase)}
	}
	msg := keptFinished(o.Finished, phase)
	if msg == "" && o.Job != nil {
		msg = jobEndMessage(o.Job)
		if lw := lastWords(o.Pods); lw.words != "" && msg != "" {
			msg = finishedMessage(o.Job, lw)
		}
	}
	if msg == "" {
		msg = fmt.Sprintf("the MiniCluster finished: %s", phase)
	}
	return Condition{Type: v1alpha2.ConditionFinished, True: true, Reason: v1alpha2.ConditionReason(phase), Message: msg}
}

// keptFinished is the message of the Finished condition last written when
// it says the cluster ended in phase, "" otherwise.
func keptFinished(c *Condition, phase string) string {
	if c == nil || !c.True || c.Reason != v1alpha2.ConditionReason(phase) {
		return ""
	}
	return c.Message
}

// jobEndMessage says how the Job ended, in the claim's terms, followed by
// the Job condition's own reason and message.
func jobEndMessage(job *batchv1.Job) string {
	switch {
	case failed(job):
		return failedMessage(job)
	case succeeded(job):
		return succeededMessage(job)
	}
	return ""
}

// failedMessage says why the Job failed.
func failedMessage(job *batchv1.Job) string {
	c := endCondition(job, batchv1.JobFailed, batchv1.JobFailureTarget)
	if c == nil {
		return "Job " + job.Name + " failed"
	}
	var why string
	switch c.Reason {
	case batchv1.JobReasonPodFailurePolicy:
		why = "the job on the lead broker failed"
	case batchv1.JobReasonMaxFailedIndexesExceeded, batchv1.JobReasonFailedIndexes:
		why = "a broker failed more often than spec.backoffLimit allows (with spec.pod.restartPolicy Never, once)"
	case batchv1.JobReasonBackoffLimitExceeded:
		why = "the brokers failed more often than the Job's backoffLimit allows"
	case batchv1.JobReasonDeadlineExceeded:
		why = "the cluster ran longer than spec.deadlineSeconds"
	default:
		why = "Job " + job.Name + " failed"
	}
	return why + jobDetail(c)
}

// succeededMessage says that the lead's job succeeded.
func succeededMessage(job *batchv1.Job) string {
	c := endCondition(job, batchv1.JobComplete, batchv1.JobSuccessCriteriaMet)
	if c == nil {
		return "Job " + job.Name + " completed"
	}
	return "the job on the lead broker succeeded" + jobDetail(c)
}

// podReady: the pod's Ready condition is true.
func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
