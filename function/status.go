package function

import (
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/response"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/brokerconfig"
	"github.com/flux-framework/minicluster-crossplane/internal/plan"
	"github.com/flux-framework/minicluster-crossplane/internal/render"
)

// ConditionFinished says how the cluster ended: True once its Job has
// succeeded (reason Succeeded) or failed (reason Failed), with a message
// that carries the Job's own reason and message; False (reason: the phase)
// while it has not.
const ConditionFinished = "Finished"

// Reasons of ConditionFinished when it is True.
const (
	ReasonSucceeded = v1alpha2.PhaseSucceeded
	ReasonFailed    = v1alpha2.PhaseFailed
)

// ClusterStatus is the MiniCluster status the function reports.
type ClusterStatus struct {
	v1alpha2.MiniClusterStatus

	// Message says how the cluster ended, from the observed Job's Failed or
	// Complete condition; "" while the Job runs. It goes into the Finished
	// condition (the MiniCluster status has no field for it).
	Message string
}

// Object is the status as unstructured content for the composite.
func (s ClusterStatus) Object() map[string]any {
	o, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&s.MiniClusterStatus)
	if err != nil {
		// A plain struct of numbers and strings always converts.
		return map[string]any{}
	}
	return o
}

// Status derives the MiniCluster's status from what was observed. size,
// maximumSize and selector come from the plan; phase and counts come from
// the observed Job.
func Status(p *plan.Plan, observed map[resource.Name]resource.ObservedComposed) ClusterStatus {
	return status(p, observed, observedJob(observed))
}

// status is Status with the observed Job already converted (see ready).
func status(p *plan.Plan, observed map[resource.Name]resource.ObservedComposed, job *batchv1.Job) ClusterStatus {
	mc := p.MiniCluster
	st := ClusterStatus{MiniClusterStatus: v1alpha2.MiniClusterStatus{
		Size:        p.Size,
		MaximumSize: p.MaximumSize,
		Selector:    p.Names.Selector,
		Phase:       v1alpha2.PhasePending,
	}}
	if job != nil {
		st.Job = v1alpha2.JobStatus{Succeeded: job.Status.Succeeded, Failed: job.Status.Failed}
		if job.Status.Ready != nil {
			st.Job.Ready = *job.Status.Ready
		}
		// FailureTarget and SuccessCriteriaMet come first, while the job
		// controller still stops the remaining pods; Failed and Complete
		// follow once they are gone.
		switch {
		case jobFailed(job):
			st.Phase = v1alpha2.PhaseFailed
			st.Message = failedMessage(job)
		case jobSucceeded(job):
			st.Phase = v1alpha2.PhaseSucceeded
			st.Message = succeededMessage(job)
		case st.Job.Ready >= p.ReadyQuorum:
			st.Phase = v1alpha2.PhaseRunning
		case jobQueued(job):
			st.Phase = v1alpha2.PhaseQueued
		}
	}
	if o, ok := observed[render.KeyLeadBroker]; ok && o.Resource != nil {
		svc := &corev1.Service{}
		if err := fromObserved(o, svc); err == nil {
			lb := &v1alpha2.LeadBrokerStatus{Service: svc.Name}
			for _, port := range svc.Spec.Ports {
				if port.Port == brokerconfig.DefaultPort {
					lb.NodePort = port.NodePort
				}
			}
			st.LeadBroker = lb
		}
	} else if plan.ComposesLeadBroker(mc) {
		st.LeadBroker = &v1alpha2.LeadBrokerStatus{Service: p.Names.LeadBroker}
	}
	return st
}

// jobFailed: the Job failed, or will once its pods are gone.
func jobFailed(job *batchv1.Job) bool {
	return jobCondition(job, batchv1.JobFailed) || jobCondition(job, batchv1.JobFailureTarget)
}

// jobSucceeded: the Job completed, or will once its pods are gone (a
// successPolicy matched: the lead succeeded).
func jobSucceeded(job *batchv1.Job) bool {
	return jobCondition(job, batchv1.JobComplete) || jobCondition(job, batchv1.JobSuccessCriteriaMet)
}

// jobFinished is the Job's terminal condition of the given types, the first
// that is true.
func jobFinished(job *batchv1.Job, types ...batchv1.JobConditionType) *batchv1.JobCondition {
	for _, t := range types {
		for i := range job.Status.Conditions {
			if c := &job.Status.Conditions[i]; c.Type == t && c.Status == corev1.ConditionTrue {
				return c
			}
		}
	}
	return nil
}

// failedMessage says why the Job failed, in the claim's terms, followed by
// the Job condition's own reason and message.
func failedMessage(job *batchv1.Job) string {
	c := jobFinished(job, batchv1.JobFailed, batchv1.JobFailureTarget)
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
	c := jobFinished(job, batchv1.JobComplete, batchv1.JobSuccessCriteriaMet)
	if c == nil {
		return "Job " + job.Name + " completed"
	}
	return "the job on the lead broker succeeded" + jobDetail(c)
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

// ReportFinished sets the Finished condition on the composite and its claim.
// A finished cluster whose Job is gone (spec.cleanup) keeps the message it
// had, read back from the observed composite xr.
func (s ClusterStatus) ReportFinished(rsp *fnv1.RunFunctionResponse, xr map[string]any) {
	switch s.Phase {
	case v1alpha2.PhaseSucceeded, v1alpha2.PhaseFailed:
		msg := s.Message
		if msg == "" {
			msg = observedFinishedMessage(xr, s.Phase)
		}
		if msg == "" {
			msg = fmt.Sprintf("the MiniCluster finished: %s", s.Phase)
		}
		response.ConditionTrue(rsp, ConditionFinished, s.Phase).WithMessage(msg).TargetCompositeAndClaim()
	default:
		phase := s.Phase
		if phase == "" {
			phase = v1alpha2.PhasePending
		}
		response.ConditionFalse(rsp, ConditionFinished, phase).TargetCompositeAndClaim()
	}
}

// observedFinishedMessage is the message of the composite's Finished
// condition when it says the cluster ended in phase.
func observedFinishedMessage(xr map[string]any, phase string) string {
	if m := observedCondition(xr, ConditionFinished); m["status"] == string(corev1.ConditionTrue) && m["reason"] == phase {
		msg, _ := m["message"].(string)
		return msg
	}
	return ""
}

// observedCondition is the condition of type typ of the composite xr as
// observed, nil if it has none.
func observedCondition(xr map[string]any, typ string) map[string]any {
	st, _ := xr["status"].(map[string]any)
	conds, _ := st["conditions"].([]any)
	for _, c := range conds {
		if m, _ := c.(map[string]any); m["type"] == typ {
			return m
		}
	}
	return nil
}
