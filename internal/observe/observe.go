// Package observe is the mirror of render: render turns a plan into the
// objects a MiniCluster composes, observe turns the plan and the objects
// the function observed into what the MiniCluster reports: its status, its
// conditions (Brokers, Finished, Scaled), its readiness and its warnings.
//
// It decides in two steps, both pure. Reads says what must be read, beyond
// the composed objects, to explain the status (the broker pods, the
// namespace's Events, Kueue's Workload and LocalQueue): each is a watch
// Crossplane keeps while the function asks, and every change to a read
// object runs the composition again, so it asks only while the answer can
// change what the MiniCluster says. Observe then makes the report from
// whatever was read. Neither returns an error: an object that is absent or
// does not convert is one not observed, and the report says what is known.
//
// Each predicate is written once here: a broker is up (podReady), enough
// brokers are up (brokersUp), the Job has finished (failed, succeeded),
// it waits in Kueue's queue (Queued), and why a pod is not up (podCause).
// The function (function/) is the adapter: it asks Crossplane for what
// Reads names, converts what it gets into an Observed once, and writes the
// Report into its response.
package observe

import (
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/plan"
	"github.com/flux-framework/minicluster-crossplane/internal/render"
)

// Observed is what the function observed of one MiniCluster, converted to
// typed objects once. A nil object was not observed (or did not convert).
type Observed struct {
	// Composed are the keys (render.Key*) of the composed objects the
	// composite observes.
	Composed map[string]bool
	// Job is the observed Job.
	Job *batchv1.Job
	// LeadBroker is the observed lead broker Service of a burst's root.
	LeadBroker *corev1.Service
	// ServicesPod is the observed services Pod.
	ServicesPod *corev1.Pod

	// Pods are the broker pods, read when Reads says so (nil otherwise,
	// and until Crossplane answers).
	Pods []corev1.Pod
	// Events are the namespace's Events, read when Reads says so.
	Events []corev1.Event
	// LocalQueue is the Job's Kueue LocalQueue, read while it is queued;
	// nil when it does not exist (or was not read).
	LocalQueue *unstructured.Unstructured
	// Workloads are the Kueue Workloads labelled with the Job's UID, read
	// while it is queued.
	Workloads []*unstructured.Unstructured

	// Finished is the composite's Finished condition as last written, nil
	// when it has none: a finished cluster keeps its message, also once
	// spec.cleanup removed the Job.
	Finished *Condition
	// Written is what the status said when it was last written, nil when
	// it is not known: the status changes only for news (quiet.go).
	Written *Written
}

// Condition is a condition of the MiniCluster.
type Condition struct {
	Type    v1alpha2.ConditionType
	True    bool
	Reason  v1alpha2.ConditionReason
	Message string
}

// Report is what the MiniCluster says of itself.
type Report struct {
	// Status is the MiniCluster's status.
	Status v1alpha2.MiniClusterStatus
	// Conditions in the order they are reported.
	Conditions []Condition
	// Warnings are also reported as warning events.
	Warnings []string
	// Ready: every composed object exists, enough brokers are up (or the
	// cluster succeeded), and the services Pod runs.
	Ready bool
}

// StartGrace is how long the brokers of a Job may take to come up before
// their pods are read to say why they are not up: a normal start says
// nothing but the count, from the Job. On a real node hello-world's four
// brokers are up about 3 seconds after the Job starts; image pulls take
// longer, and cost only the reads of a slow start. What is wrong shows
// sooner: a failed pod, or pods the Job cannot create, are read at once.
// Kept well inside the 30 seconds in which a stuck MiniCluster says why
// (test/node/stuck_test.go).
const StartGrace = 10 * time.Second

// Reads are what the function must read, beyond the composed objects, to
// explain the MiniCluster's status.
type Reads struct {
	// Pods: the broker pods (labelled plan.LabelSelector).
	Pods bool
	// Events: the Events of the namespace (FailedCreate of the Job).
	Events bool
	// Queue: the Job's LocalQueue, and its Workload when the Job has a UID.
	Queue bool
	// LookAgainAfter is when to run again to read the pods if the brokers
	// are still not up (0: no need): nothing else may change meanwhile.
	LookAgainAfter time.Duration
}

// ReadsFor says what to read for p given what was observed, at now.
//
//   - the broker pods while the Job is neither ready nor finished and its
//     brokers have been starting for longer than StartGrace, or at once
//     when one of its pods failed or it has fewer pods than it runs; and
//     once it has finished until the Finished message is written (it is
//     kept from then on), but not while its instance shuts down (a broker
//     ended with success, the Job not yet). A MiniCluster that starts and
//     ends normally is not composed again for each change of each of its
//     pods;
//   - the namespace's Events only while the Job has fewer pods than it
//     should (the job controller says why only in FailedCreate events,
//     which carry no labels to select by);
//   - Kueue's Workload and LocalQueue only while the Job waits in a queue.
//
// A ready MiniCluster reads nothing: its condition comes from the Job
// alone.
func ReadsFor(p *plan.Plan, o Observed, now time.Time) Reads {
	job := o.Job
	if job == nil {
		return Reads{}
	}
	switch ph := phase(p, job); ph {
	case v1alpha2.PhaseSucceeded, v1alpha2.PhaseFailed:
		return Reads{Pods: keptFinished(o.Finished, ph) == ""}
	case v1alpha2.PhaseQueued:
		return Reads{Queue: true}
	case v1alpha2.PhaseRunning:
		return Reads{}
	}
	if ending(o) {
		// The status waits for the end (quiet.go); the pods, read then,
		// would run the composition for each broker that leaves.
		return Reads{}
	}
	missing := missingPods(job)
	if missing || job.Status.Failed > 0 {
		return Reads{Pods: true, Events: missing}
	}
	if wait := startedAt(job).Add(StartGrace).Sub(now); wait > 0 {
		return Reads{LookAgainAfter: wait}
	}
	return Reads{Pods: true}
}

// startedAt is when the Job's brokers began to start: its startTime (set
// by the job controller when it first creates its pods), else its
// creation.
func startedAt(job *batchv1.Job) time.Time {
	if job.Status.StartTime != nil {
		return job.Status.StartTime.Time
	}
	return job.CreationTimestamp.Time
}

// Observe reports p's MiniCluster from what was observed; composing are
// the keys of the objects composed now (a cleaned-up cluster composes no
// Job). Where the report differs from what was written only in what tells
// a user nothing, what was written stays (quiet.go).
func Observe(p *plan.Plan, o Observed, composing []string) Report {
	live := reportNow(p, o, composing)
	if held, ok := quiet(p, o, composing, live); ok {
		return held
	}
	return live
}

// reportNow is what the MiniCluster says from what was observed, as it is
// now.
func reportNow(p *plan.Plan, o Observed, composing []string) Report {
	var r Report
	r.Status = status(p, o)
	finished := r.Status.Phase == v1alpha2.PhaseSucceeded || r.Status.Phase == v1alpha2.PhaseFailed

	// How the cluster ended (the Job's reason and message, the lead's last
	// words) has no status field: it goes into the Finished condition.
	var brokers Condition
	switch {
	case finished:
		brokers = Condition{Type: v1alpha2.ConditionBrokers, Reason: v1alpha2.ReasonBrokersFinished,
			Message: fmt.Sprintf("the cluster has finished (%s): see the Finished condition", r.Status.Phase)}
	case o.Job == nil:
		// Before the Job is observed, the same words as once it is and
		// its pods start: the MiniCluster's status does not change
		// between the first run and the next, which would write the
		// composite (and its claim) again and run once more.
		brokers = Condition{Type: v1alpha2.ConditionBrokers, Reason: v1alpha2.ReasonBrokersStarting, Message: upMessage(0, p.Size)}
	case r.Status.Phase == v1alpha2.PhaseQueued:
		// No pods yet: Kueue says why.
		brokers = Condition{Type: v1alpha2.ConditionBrokers, Reason: v1alpha2.ReasonQueued, Message: queueMessage(p, o)}
	case brokersUp(o.Job, p.ReadyQuorum):
		brokers = Condition{Type: v1alpha2.ConditionBrokers, True: true, Reason: v1alpha2.ReasonBrokersUp,
			Message: upMessage(ptr.Deref(o.Job.Status.Ready, 0), p.Size)}
	default:
		why := brokersReport(p, o.Job, o.Pods, o.Events)
		brokers = Condition{Type: v1alpha2.ConditionBrokers, Reason: why.reason, Message: why.message}
		if why.reason != v1alpha2.ReasonBrokersStarting {
			r.Warnings = append(r.Warnings, why.message)
		}
	}
	if brokers.Type != "" {
		r.Conditions = append(r.Conditions, brokers)
	}
	r.Conditions = append(r.Conditions, finishedCondition(o, r.Status.Phase))
	r.Ready = ready(p, o, composing)
	return r
}

// Scaled is the Scaled condition, and a warning when the size is clamped
// to the maximum.
func Scaled(p *plan.Plan) (Condition, string) {
	switch admitted := AdmittedMessage(p); {
	case admitted != "":
		return Condition{Type: v1alpha2.ConditionScaled, Reason: v1alpha2.ReasonAdmittedByKueue, Message: admitted}, ""
	case p.Clamped():
		msg := fmt.Sprintf("spec.size %d exceeds the maximum size %d fixed when this MiniCluster was created (the broker configuration declares %d hosts): running %d pods; lower spec.size, or re-create the MiniCluster with a larger spec.maxSize", p.RequestedSize, p.MaximumSize, p.MaximumSize, p.Size)
		return Condition{Type: v1alpha2.ConditionScaled, Reason: v1alpha2.ReasonSizeAboveMaximum, Message: msg}, msg
	}
	return Condition{Type: v1alpha2.ConditionScaled, True: true, Reason: v1alpha2.ReasonAvailable}, ""
}

// ready tells whether the MiniCluster is ready: every object composed now
// exists and is ready itself.
//   - The Job is ready once enough brokers are up, and stays ready once it
//     has succeeded, while the job controller stops the followers. A Job
//     that failed is not ready, whatever pods are still up: the phase and
//     the Finished condition say why.
//   - The services Pod is ready when it runs (or ran) its containers.
//   - Everything else is ready as soon as it exists.
func ready(p *plan.Plan, o Observed, composing []string) bool {
	for _, key := range composing {
		if !o.Composed[key] {
			return false
		}
		switch {
		case key == render.KeyJob && !jobReady(o.Job, p.ReadyQuorum):
			return false
		case key == render.KeyServicesPod && !servicesReady(o.ServicesPod):
			return false
		}
	}
	return true
}

func jobReady(job *batchv1.Job, quorum int32) bool {
	switch {
	case job == nil, failed(job):
		return false
	case succeeded(job):
		return true
	}
	return brokersUp(job, quorum)
}

func servicesReady(pod *corev1.Pod) bool {
	return pod != nil && (podReady(pod) || pod.Status.Phase == corev1.PodSucceeded)
}
