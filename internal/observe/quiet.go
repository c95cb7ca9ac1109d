package observe

import (
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/plan"
)

// When the status changes.
//
// Every change of a MiniCluster's status costs three composition runs in
// Crossplane 2.4 (each applies every composed object again) and, with
// claims, a round of claim writes; that cost is Crossplane's. How often the
// status changes is ours, and it changes only when a user learns something:
// the phase (and with it the quorum reached or lost), why a broker cannot
// come up, how large a running cluster is, the end.
//
// The counts of brokers — status.job.ready and status.job.succeeded, and
// the count in the Brokers message — are news on their own only while the
// cluster runs (phase Running): there they say how large the running
// cluster is after a scale, or that a broker was lost and came back.
// Elsewhere they ride along with the news:
//
//   - Before the quorum (phase Pending on both sides), brokers come up one
//     by one within seconds, and the job controller's ready count moves
//     with the readiness probe's 5-second period: hello-world's count went
//     0, 3, 0 under real Flux, each a status change, and none of it said
//     more than "starting". The count last written stays until the phase
//     or a cause in the Brokers message changes, which writes the count of
//     that moment with it.
//   - Once a broker has ended with success while the Job has not ended
//     (status.job.succeeded above 0, no end condition), the instance is
//     shutting down: Flux's followers leave before the lead, and the ready
//     count falls to 0 in the seconds before Succeeded. The phase, the
//     counts, the Brokers condition and the readiness stay as last written
//     until the Job ends. A broker that fails meanwhile (status.job.failed)
//     is news, and so is the end, which the job controller reports as soon
//     as the lead has succeeded (the Job's successPolicy). A cluster whose
//     follower ends with success while the rest run on (nothing in Flux
//     does that) keeps saying what it said before, until its end.
//
// The promises hold: a broker that cannot come up changes the Brokers
// message (and with it the count) within StartGrace and a read of its
// pods; BROKERS moves while the cluster runs; Finished comes at once.

// Written is what the MiniCluster's status said when it was last written:
// the observed composite's status and conditions.
type Written struct {
	Status v1alpha2.MiniClusterStatus
	// Brokers is the Brokers condition, nil when there is none.
	Brokers *Condition
	// Ready is the composite's Ready condition (Crossplane's, set from the
	// readiness the function reports), nil when there is none.
	Ready *bool
}

// ending tells whether the Job's instance is shutting down: a broker ended
// with success and the Job has not ended yet.
func ending(o Observed) bool {
	job := o.Job
	return job != nil && job.Status.Succeeded > 0 && !failed(job) && !succeeded(job)
}

// quiet is the report to give instead of live when live differs from what
// was written only in what is not news (see above), and false otherwise.
func quiet(p *plan.Plan, o Observed, composing []string, live Report) (Report, bool) {
	w := o.Written
	if w == nil || o.Job == nil || p.CleanedUp {
		return Report{}, false
	}
	switch {
	case ending(o):
		if w.Brokers == nil || w.Ready == nil || w.Status.Phase == "" {
			return Report{}, false
		}
		held := live
		held.Status.Phase = w.Status.Phase
		held.Status.Job.Ready, held.Status.Job.Succeeded = w.Status.Job.Ready, w.Status.Job.Succeeded
		held.Conditions = []Condition{*w.Brokers, finishedCondition(o, w.Status.Phase)}
		held.Ready = *w.Ready
		held.Warnings = nil
		return held, true
	case live.Status.Phase == v1alpha2.PhasePending && w.Status.Phase == v1alpha2.PhasePending:
		o.Job = o.Job.DeepCopy()
		o.Job.Status.Ready = ptr.To(w.Status.Job.Ready)
		o.Job.Status.Succeeded = w.Status.Job.Succeeded
		held := reportNow(p, o, composing)
		if held.Status.Phase != v1alpha2.PhasePending || !equality.Semantic.DeepEqual(held.Status, w.Status) || !sameCondition(brokersOf(held), w.Brokers) {
			return Report{}, false
		}
		return held, true
	}
	return Report{}, false
}

// brokersOf is r's Brokers condition, nil when it has none.
func brokersOf(r Report) *Condition {
	for i := range r.Conditions {
		if r.Conditions[i].Type == v1alpha2.ConditionBrokers {
			return &r.Conditions[i]
		}
	}
	return nil
}

func sameCondition(a, b *Condition) bool {
	return a != nil && b != nil && *a == *b
}
