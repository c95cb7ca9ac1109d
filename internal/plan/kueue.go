package plan

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// LabelKueueQueueName is the label Kueue (kueue.x-k8s.io) reads a Job's
// LocalQueue from: a Job that carries it is created suspended by Kueue's
// webhook and runs once Kueue admits all of its pods together.
const LabelKueueQueueName = "kueue.x-k8s.io/queue-name"

// queueName is the Kueue queue the MiniCluster's Job goes to: the
// kueue.x-k8s.io/queue-name label of spec.jobLabels, else of
// spec.pod.labels. Kueue's batch/job integration reads the Job's label, so
// a queue named only on the pods is put on the Job too (render): the
// cluster is admitted whole, never pod by pod.
func queueName(mc *v1alpha2.MiniCluster) string {
	if q := mc.Spec.JobLabels[LabelKueueQueueName]; q != "" {
		return q
	}
	return mc.Spec.Pod.Labels[LabelKueueQueueName]
}

// checkQueue refuses two different queues in spec.jobLabels and
// spec.pod.labels.
func checkQueue(mc *v1alpha2.MiniCluster) field.ErrorList {
	j, p := mc.Spec.JobLabels[LabelKueueQueueName], mc.Spec.Pod.Labels[LabelKueueQueueName]
	if j == "" || p == "" || j == p {
		return nil
	}
	return field.ErrorList{field.Invalid(field.NewPath("spec", "pod", "labels").Key(LabelKueueQueueName), p,
		fmt.Sprintf("is another queue than spec.jobLabels[%s] %q: Kueue queues the Job, and its pods with it, in one LocalQueue; name one queue (in spec.jobLabels)", LabelKueueQueueName, j))}
}
