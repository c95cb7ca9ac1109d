package function

import (
	"fmt"
	"sort"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/plan"
)

// Kueue (kueue.x-k8s.io) queues a Job whose metadata carries a queue name:
// its webhook creates the Job suspended, its controller creates a Workload
// for it and unsuspends the Job once the Workload is admitted, which is
// when its ClusterQueue has quota for every pod (a Job's pods are admitted
// together: all of parallelism, or none).
//
// The function never composes spec.suspend. Crossplane applies the Job
// with server-side apply, so a field it does not apply is not its own:
// Kueue's webhook sets it at creation and Kueue's controller changes it
// (as field manager kueue), and no composition run, function or Crossplane
// restart touches it. Composing suspend: true until admission would make
// Crossplane an owner of the field that Kueue's update then takes over,
// and any apply of a stale response after admission would suspend the
// running cluster again (test/node/kueue_test.go checks the fields'
// owners on the real components).
const (
	// LabelKueueQueueName is the label Kueue reads a Job's LocalQueue
	// from.
	LabelKueueQueueName = "kueue.x-k8s.io/queue-name"
	// labelKueueJobUID is the label Kueue puts on the Workload of a Job:
	// the Job's UID.
	labelKueueJobUID = "kueue.x-k8s.io/job-uid"

	kueueAPIVersion = "kueue.x-k8s.io/v1beta2"
)

// Reasons of ConditionBrokers and ConditionScaled for Kueue.
const (
	// ReasonQueued: the Job waits for Kueue to admit it.
	ReasonQueued = "Queued"
	// ReasonAdmittedByKueue: Kueue admitted the Job with the pods it runs;
	// another size is not applied while it runs.
	ReasonAdmittedByKueue = "AdmittedByKueue"
)

// Requirement names of what the function reads while the Job is queued.
const (
	requiredWorkloads  = "kueue-workloads"
	requiredLocalQueue = "kueue-localqueue"
)

// QueueName is the Kueue queue the MiniCluster's Job goes to: the
// kueue.x-k8s.io/queue-name label of spec.jobLabels, else of
// spec.pod.labels (Kueue's batch/job integration reads the Job's label, so
// a queue named only on the pods is put on the Job too: the cluster is
// admitted whole, never pod by pod).
func QueueName(mc *v1alpha2.MiniCluster) string {
	if q := mc.Spec.JobLabels[LabelKueueQueueName]; q != "" {
		return q
	}
	return mc.Spec.Pod.Labels[LabelKueueQueueName]
}

// queueConflict names the two queues when spec.jobLabels and
// spec.pod.labels name different ones, "" otherwise.
func queueConflict(mc *v1alpha2.MiniCluster) string {
	j, p := mc.Spec.JobLabels[LabelKueueQueueName], mc.Spec.Pod.Labels[LabelKueueQueueName]
	if j == "" || p == "" || j == p {
		return ""
	}
	return fmt.Sprintf("spec.pod.labels[%s]: %q is another queue than spec.jobLabels[%s] %q: Kueue queues the Job, and its pods with it, in one LocalQueue; name one queue (in spec.jobLabels)", LabelKueueQueueName, p, LabelKueueQueueName, j)
}

// labelJobQueue puts the queue name on the composed Job when only the
// pods carry it.
func labelJobQueue(job *unstructured.Unstructured, queue string) {
	if queue == "" {
		return
	}
	labels := job.GetLabels()
	if labels[LabelKueueQueueName] != "" {
		return
	}
	if labels == nil {
		labels = map[string]string{}
	}
	labels[LabelKueueQueueName] = queue
	job.SetLabels(labels)
}

// jobQueued: the Job waits in Kueue's queue: it carries a queue name and
// is suspended (Kueue created it so and has not admitted it yet).
func jobQueued(job *batchv1.Job) bool {
	return job != nil && job.Labels[LabelKueueQueueName] != "" && ptr.Deref(job.Spec.Suspend, false)
}

// jobAdmitted: Kueue admitted the Job and it runs (a queue name, not
// suspended, not finished).
func jobAdmitted(job *batchv1.Job) bool {
	return job != nil && job.Labels[LabelKueueQueueName] != "" && !ptr.Deref(job.Spec.Suspend, false) && !jobFailed(job) && !jobSucceeded(job)
}

// keepAdmittedSize keeps the size Kueue admitted a running MiniCluster
// with: Kueue admits a Job's pods together, and a Job whose parallelism
// changes no longer matches its Workload, so Kueue stops every pod and
// queues the Job again at the new size. A Flux cluster would lose its
// running jobs; the function keeps the admitted size instead, and says
// how to get another one. It returns the message, "" when the size is the
// admitted one.
func keepAdmittedSize(mc *v1alpha2.MiniCluster, job *batchv1.Job) string {
	if !jobAdmitted(job) || job.Spec.Parallelism == nil {
		return ""
	}
	running, asked := *job.Spec.Parallelism, ptr.Deref(mc.Spec.Size, 1)
	if asked == running {
		return ""
	}
	msg := fmt.Sprintf("spec.size %d: Kueue admitted this MiniCluster with %d pods (queue %s) and admits a Job's pods together; changing the size of a running Job makes Kueue stop all of its pods and queue it again, so the cluster keeps running %d; set spec.size back to %d, or delete and re-create the MiniCluster at the new size to queue it again",
		asked, running, job.Labels[LabelKueueQueueName], running, running)
	mc.Spec.Size = ptr.To(running)
	return msg
}

// queueReport says where the Job waits and why, in Kueue's own words: the
// LocalQueue, its ClusterQueue, and the reason and message of the
// Workload's QuotaReserved (or Admitted, or Evicted) condition. It asks
// for the Workload and the LocalQueue; nil content until Crossplane
// answers, which the message says.
func queueReport(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, p *plan.Plan, job *batchv1.Job) (report, error) {
	queue := job.Labels[LabelKueueQueueName]
	require(rsp, requiredLocalQueue, &fnv1.ResourceSelector{
		ApiVersion: kueueAPIVersion,
		Kind:       "LocalQueue",
		Match:      &fnv1.ResourceSelector_MatchName{MatchName: queue},
		Namespace:  ptr.To(p.Namespace),
	})
	var workloads []resource.Required
	if job.UID != "" {
		require(rsp, requiredWorkloads, &fnv1.ResourceSelector{
			ApiVersion: kueueAPIVersion,
			Kind:       "Workload",
			Match: &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: map[string]string{
				labelKueueJobUID: string(job.UID),
			}}},
			Namespace: ptr.To(p.Namespace),
		})
		found, _, err := request.GetRequiredResource(req, requiredWorkloads)
		if err != nil {
			return report{}, errors.Wrap(err, "cannot read the Kueue Workloads Crossplane returned")
		}
		workloads = found
	}
	lqs, _, err := request.GetRequiredResource(req, requiredLocalQueue)
	if err != nil {
		return report{}, errors.Wrap(err, "cannot read the Kueue LocalQueue Crossplane returned")
	}

	where := fmt.Sprintf("queued by Kueue in LocalQueue %s/%s", p.Namespace, queue)
	if len(lqs) > 0 {
		if cq, _, _ := unstructured.NestedString(lqs[0].Resource.Object, "spec", "clusterQueue"); cq != "" {
			where += fmt.Sprintf(" (ClusterQueue %s)", cq)
		}
	}
	why := "waiting for Kueue to create the Job's Workload"
	if wl := ownWorkload(workloads, job); wl != nil {
		why = workloadWhy(wl)
	} else if len(lqs) == 0 {
		why = fmt.Sprintf("LocalQueue %s does not exist in namespace %s: the platform creates the queues (kueue.x-k8s.io LocalQueue), ask it which to name in spec.jobLabels", queue, p.Namespace)
	}
	return report{reason: ReasonQueued, message: fmt.Sprintf("%s, %d pods: %s", where, ptr.Deref(job.Spec.Parallelism, p.Size), why)}, nil
}

// ownWorkload is the Workload of job: the one it controls, else the
// newest of those labelled with its UID.
func ownWorkload(found []resource.Required, job *batchv1.Job) *unstructured.Unstructured {
	var wls []*unstructured.Unstructured
	for i := range found {
		u := found[i].Resource
		for _, o := range u.GetOwnerReferences() {
			if o.UID == job.UID && o.Controller != nil && *o.Controller {
				return u
			}
		}
		wls = append(wls, u)
	}
	if len(wls) == 0 {
		return nil
	}
	sort.SliceStable(wls, func(i, j int) bool {
		ti, tj := wls[i].GetCreationTimestamp(), wls[j].GetCreationTimestamp()
		if !ti.Equal(&tj) {
			return tj.Before(&ti)
		}
		return wls[i].GetName() > wls[j].GetName()
	})
	return wls[0]
}

// workloadWhy is Kueue's reason a Workload is not running: its Evicted,
// QuotaReserved or Admitted condition, whichever says why first, as
// "Reason: message". Only reasons and messages, no times or counts of
// attempts, so it changes only when the cause does.
func workloadWhy(wl *unstructured.Unstructured) string {
	conds := map[string]map[string]any{}
	list, _, _ := unstructured.NestedSlice(wl.Object, "status", "conditions")
	for _, c := range list {
		if m, ok := c.(map[string]any); ok {
			if t, _ := m["type"].(string); t != "" {
				conds[t] = m
			}
		}
	}
	say := func(c map[string]any) string {
		reason, _ := c["reason"].(string)
		msg, _ := c["message"].(string)
		msg = bounded(strings.TrimSpace(msg), maxCauseMessage)
		switch {
		case reason != "" && msg != "":
			return reason + ": " + msg
		case msg != "":
			return msg
		}
		return reason
	}
	isTrue := func(t string) bool { return conds[t] != nil && conds[t]["status"] == "True" }
	switch {
	case isTrue("Evicted"):
		return "evicted by Kueue, " + say(conds["Evicted"])
	case isTrue("Admitted"):
		return "admitted by Kueue; the Job starts"
	case isTrue("QuotaReserved"):
		if c := conds["Admitted"]; c != nil {
			return "quota reserved, waiting for admission checks: " + say(c)
		}
		return "quota reserved, waiting for admission checks"
	case conds["QuotaReserved"] != nil:
		return say(conds["QuotaReserved"])
	}
	return "waiting for Kueue to consider the Workload " + wl.GetName()
}
