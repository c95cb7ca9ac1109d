package function

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

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
//
// QueueName is the Kueue queue the MiniCluster's Job goes to: the
// kueue.x-k8s.io/queue-name label of spec.jobLabels, else of
// spec.pod.labels (Kueue's batch/job integration reads the Job's label, so
// a queue named only on the pods is put on the Job too: the cluster is
// admitted whole, never pod by pod).
func QueueName(mc *v1alpha2.MiniCluster) string {
	if q := mc.Spec.JobLabels[plan.LabelKueueQueueName]; q != "" {
		return q
	}
	return mc.Spec.Pod.Labels[plan.LabelKueueQueueName]
}

// queueConflict names the two queues when spec.jobLabels and
// spec.pod.labels name different ones, "" otherwise.
func queueConflict(mc *v1alpha2.MiniCluster) string {
	j, p := mc.Spec.JobLabels[plan.LabelKueueQueueName], mc.Spec.Pod.Labels[plan.LabelKueueQueueName]
	if j == "" || p == "" || j == p {
		return ""
	}
	return fmt.Sprintf("spec.pod.labels[%s]: %q is another queue than spec.jobLabels[%s] %q: Kueue queues the Job, and its pods with it, in one LocalQueue; name one queue (in spec.jobLabels)", plan.LabelKueueQueueName, p, plan.LabelKueueQueueName, j)
}

// labelJobQueue puts the queue name on the composed Job when only the
// pods carry it.
func labelJobQueue(job *unstructured.Unstructured, queue string) {
	if queue == "" {
		return
	}
	labels := job.GetLabels()
	if labels[plan.LabelKueueQueueName] != "" {
		return
	}
	if labels == nil {
		labels = map[string]string{}
	}
	labels[plan.LabelKueueQueueName] = queue
	job.SetLabels(labels)
}
