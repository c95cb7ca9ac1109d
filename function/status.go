package function

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/crossplane/function-sdk-go/resource"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/render"
)

// ClusterStatus is the MiniCluster status the function reports.
type ClusterStatus struct {
	v1alpha2.MiniClusterStatus
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
// maximumSize and selector are known from the first run; phase and counts
// come from the observed Job.
func Status(mc *v1alpha2.MiniCluster, observed map[resource.Name]resource.ObservedComposed, size, maximumSize, quorum int32) ClusterStatus {
	return status(mc, observed, observedJob(observed), size, maximumSize, quorum)
}

// status is Status with the observed Job already converted (see ready).
func status(mc *v1alpha2.MiniCluster, observed map[resource.Name]resource.ObservedComposed, job *batchv1.Job, size, maximumSize, quorum int32) ClusterStatus {
	st := ClusterStatus{v1alpha2.MiniClusterStatus{
		Size:        size,
		MaximumSize: maximumSize,
		Selector:    render.Selector(mc),
		Phase:       v1alpha2.PhasePending,
	}}
	if job != nil {
		st.Job = v1alpha2.JobStatus{Active: job.Status.Active, Succeeded: job.Status.Succeeded, Failed: job.Status.Failed}
		if job.Status.Ready != nil {
			st.Job.Ready = *job.Status.Ready
		}
		switch {
		case jobCondition(job, batchv1.JobComplete):
			st.Phase = v1alpha2.PhaseSucceeded
		case jobCondition(job, batchv1.JobFailed):
			st.Phase = v1alpha2.PhaseFailed
		case st.Job.Ready >= quorum:
			st.Phase = v1alpha2.PhaseRunning
		}
	}
	if o, ok := observed[render.KeyLeadBroker]; ok && o.Resource != nil {
		svc := &corev1.Service{}
		if err := fromObserved(o, svc); err == nil {
			lb := &v1alpha2.LeadBrokerStatus{Service: svc.Name}
			for _, p := range svc.Spec.Ports {
				if p.Port == render.BrokerPort {
					lb.NodePort = p.NodePort
				}
			}
			st.LeadBroker = lb
		}
	} else if len(mc.Spec.Flux.Bursting.Clusters) > 0 && mc.Spec.Flux.Bursting.LeadBroker == nil {
		st.LeadBroker = &v1alpha2.LeadBrokerStatus{Service: render.LeadBrokerServiceName(mc)}
	}
	return st
}
