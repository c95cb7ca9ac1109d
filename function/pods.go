package function

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/response"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/plan"
)

// ConditionBrokers says how many brokers are up and, while some are not, why
// not: the pod, the Kubernetes reason and its message. It is a condition of
// the MiniCluster's own because Crossplane reserves Ready: it drops a Ready
// condition a function returns, and writes its own without a message.
const ConditionBrokers = "Brokers"

// Reasons of ConditionBrokers besides the Kubernetes reasons it carries.
const (
	ReasonBrokersUp       = "Up"
	ReasonBrokersStarting = "Starting"
	ReasonBrokersFinished = "Finished"
	// ReasonFailedCreate: the Job cannot create its pods (the job
	// controller's event reason).
	ReasonFailedCreate = "FailedCreate"
)

// Requirement names of what the function reads while the brokers are not up.
const (
	requiredPods   = "broker-pods"
	requiredEvents = "namespace-events"
)

// observeBrokers reports the Brokers condition and, for a finished cluster,
// puts the lead's last words into the Finished message.
//
// What it reads costs Crossplane a cluster-wide informer of the kind (its
// cached client serves required resources), and every change to a read
// object wakes the MiniCluster. So it reads only while the answer can change
// the status:
//   - the broker pods while the Job is neither ready nor finished, and once
//     it has finished until the Finished message is written (it is kept
//     from then on: observedFinishedMessage);
//   - the namespace's Events only while the Job has fewer pods than it
//     should (the job controller says why only in FailedCreate events,
//     which carry no labels to select by).
//
// A ready MiniCluster reads nothing: its condition comes from the Job alone.
func (s *ClusterStatus) observeBrokers(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, p *plan.Plan, job *batchv1.Job, xr map[string]any) error {
	switch s.Phase {
	case v1alpha2.PhaseSucceeded, v1alpha2.PhaseFailed:
		response.ConditionFalse(rsp, ConditionBrokers, ReasonBrokersFinished).
			WithMessage(fmt.Sprintf("the cluster has finished (%s): see the Finished condition", s.Phase)).TargetCompositeAndClaim()
		if kept := observedFinishedMessage(xr, s.Phase); kept != "" {
			s.Message = kept
			return nil
		}
		if job == nil {
			return nil
		}
		pods, err := brokerPods(req, rsp, p, job)
		if err != nil {
			return err
		}
		if words, code := lastWords(pods); words != "" {
			s.Message = finishedMessage(job, words, code)
		}
		return nil
	}
	if job == nil {
		return nil
	}
	if s.Phase == v1alpha2.PhaseQueued {
		// No pods yet: Kueue says why (the Workload and the LocalQueue
		// are read only while the Job waits).
		r, err := queueReport(req, rsp, p, job)
		if err != nil {
			return err
		}
		response.ConditionFalse(rsp, ConditionBrokers, r.reason).WithMessage(r.message).TargetCompositeAndClaim()
		return nil
	}
	if jobReady(job, p.ReadyQuorum) {
		response.ConditionTrue(rsp, ConditionBrokers, ReasonBrokersUp).
			WithMessage(upMessage(ptr.Deref(job.Status.Ready, 0), p.Size)).TargetCompositeAndClaim()
		return nil
	}
	pods, err := brokerPods(req, rsp, p, job)
	if err != nil {
		return err
	}
	var events []corev1.Event
	if missingPods(job) {
		if events, err = jobEvents(req, rsp, p); err != nil {
			return err
		}
	}
	r := brokersReport(p, job, pods, events)
	c := response.ConditionFalse(rsp, ConditionBrokers, r.reason).WithMessage(r.message)
	c.TargetCompositeAndClaim()
	if r.reason != ReasonBrokersStarting {
		response.Warning(rsp, errors.New(r.message)).TargetCompositeAndClaim()
	}
	return nil
}

// jobReady is the Job's side of ready: enough brokers are up.
func jobReady(job *batchv1.Job, quorum int32) bool {
	return job.Status.Ready != nil && *job.Status.Ready >= quorum
}

// upMessage counts the brokers up. A full cluster's needs no count (its
// status has size and job.ready), which keeps the steady response the same
// size whatever the cluster's.
func upMessage(up, size int32) string {
	if up == size {
		return "all brokers up"
	}
	return fmt.Sprintf("%d of %d brokers up", up, size)
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

// brokerPods asks for the MiniCluster's broker pods, nil until Crossplane
// answers.
func brokerPods(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, p *plan.Plan, job *batchv1.Job) ([]corev1.Pod, error) {
	require(rsp, requiredPods, &fnv1.ResourceSelector{
		ApiVersion: "v1",
		Kind:       "Pod",
		Match: &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: map[string]string{
			plan.LabelSelector: p.MiniCluster.Name,
		}}},
		Namespace: ptr.To(p.Namespace),
	})
	found, _, err := request.GetRequiredResource(req, requiredPods)
	if err != nil {
		return nil, errors.Wrap(err, "cannot read the broker pods Crossplane returned")
	}
	var pods []corev1.Pod
	for _, r := range found {
		pod := corev1.Pod{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(r.Resource.UnstructuredContent(), &pod); err != nil {
			return nil, errors.Wrapf(err, "cannot read pod %s", r.Resource.GetName())
		}
		pods = append(pods, pod)
	}
	return pods, nil
}

func ownerUID(pod *corev1.Pod) types.UID {
	for _, o := range pod.OwnerReferences {
		if o.Controller != nil && *o.Controller {
			return o.UID
		}
	}
	return ""
}

// jobEvents asks for the Events of the MiniCluster's namespace: the only
// place the job controller says why it cannot create a pod.
func jobEvents(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, p *plan.Plan) ([]corev1.Event, error) {
	require(rsp, requiredEvents, &fnv1.ResourceSelector{
		ApiVersion: "v1",
		Kind:       "Event",
		Match:      &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: map[string]string{}}},
		Namespace:  ptr.To(p.Namespace),
	})
	found, _, err := request.GetRequiredResource(req, requiredEvents)
	if err != nil {
		return nil, errors.Wrap(err, "cannot read the Events Crossplane returned")
	}
	events := make([]corev1.Event, 0, len(found))
	for _, r := range found {
		ev := corev1.Event{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(r.Resource.UnstructuredContent(), &ev); err != nil {
			continue // an Event is a hint: one that does not decode says nothing
		}
		events = append(events, ev)
	}
	return events, nil
}
