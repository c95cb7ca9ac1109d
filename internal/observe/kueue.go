package observe

import (
	"fmt"
	"sort"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/flux-framework/minicluster-crossplane/internal/plan"
)

// Queued: the Job waits in Kueue's queue: it carries a queue name and is
// suspended (Kueue's webhook created it so, and its controller has not
// admitted it yet).
func Queued(job *batchv1.Job) bool {
	return job != nil && job.Labels[plan.LabelKueueQueueName] != "" && ptr.Deref(job.Spec.Suspend, false)
}

// admitted: Kueue admitted the Job and it runs (a queue name, not
// suspended, not finished).
func Admitted(job *batchv1.Job) bool {
	return job != nil && job.Labels[plan.LabelKueueQueueName] != "" && !ptr.Deref(job.Spec.Suspend, false) && !failed(job) && !succeeded(job)
}

// AdmittedMessage says why the MiniCluster runs the size Kueue admitted
// its Job with (plan.AdmittedSize) rather than spec.size: Kueue admits a
// Job's pods together, and a Job whose parallelism changes no longer
// matches its Workload, so Kueue would stop every pod and queue the Job
// again at the new size, and the Flux cluster would lose its running jobs.
// "" when the size is the admitted one.
func AdmittedMessage(p *plan.Plan) string {
	if p.AdmittedSize == 0 {
		return ""
	}
	return fmt.Sprintf("spec.size %d: Kueue admitted this MiniCluster with %d pods (queue %s) and admits a Job's pods together; changing the size of a running Job makes Kueue stop all of its pods and queue it again, so the cluster keeps running %d; set spec.size back to %d, or delete and re-create the MiniCluster at the new size to queue it again",
		p.RequestedSize, p.AdmittedSize, p.Queue, p.AdmittedSize, p.AdmittedSize)
}

// queueMessage says where the Job waits and why, in Kueue's own words: the
// LocalQueue, its ClusterQueue, and the reason and message of the
// Workload's QuotaReserved (or Admitted, or Evicted) condition.
func queueMessage(p *plan.Plan, o Observed) string {
	job := o.Job
	queue := job.Labels[plan.LabelKueueQueueName]
	where := fmt.Sprintf("queued by Kueue in LocalQueue %s/%s", p.Namespace, queue)
	if o.LocalQueue != nil {
		if cq, _, _ := unstructured.NestedString(o.LocalQueue.Object, "spec", "clusterQueue"); cq != "" {
			where += fmt.Sprintf(" (ClusterQueue %s)", cq)
		}
	}
	why := "waiting for Kueue to create the Job's Workload"
	if wl := ownWorkload(o.Workloads, job); wl != nil {
		why = workloadWhy(wl)
	} else if o.LocalQueue == nil {
		why = fmt.Sprintf("LocalQueue %s does not exist in namespace %s: the platform creates the queues (kueue.x-k8s.io LocalQueue), ask it which to name in spec.jobLabels", queue, p.Namespace)
	}
	return fmt.Sprintf("%s, %d pods: %s", where, ptr.Deref(job.Spec.Parallelism, p.Size), why)
}

// ownWorkload is the Workload of job: the one it controls, else the
// newest of those labelled with its UID.
func ownWorkload(found []*unstructured.Unstructured, job *batchv1.Job) *unstructured.Unstructured {
	if job.UID == "" {
		return nil
	}
	var wls []*unstructured.Unstructured
	for _, u := range found {
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
