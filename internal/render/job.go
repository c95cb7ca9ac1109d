package render

import (
	"maps"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/flux-framework/minicluster-crossplane/internal/plan"
)

// Job is the Indexed Job of brokers: pod <name>-<i> is rank i. How it ends
// is JobLifecycle's.
func Job(in Input) *batchv1.Job {
	mc := in.MiniCluster
	s := &mc.Spec
	pod := brokerPodSpec(in)
	lc := JobLifecycle(mc, pod.Containers)
	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: meta(in, mc.Name, jobLabels(in)),
		Spec: batchv1.JobSpec{
			CompletionMode:        ptr.To(batchv1.IndexedCompletion),
			Parallelism:           ptr.To(in.Size),
			Completions:           ptr.To(in.Size),
			BackoffLimitPerIndex:  lc.BackoffLimitPerIndex,
			MaxFailedIndexes:      lc.MaxFailedIndexes,
			PodFailurePolicy:      lc.PodFailurePolicy,
			PodReplacementPolicy:  lc.PodReplacementPolicy,
			SuccessPolicy:         lc.SuccessPolicy,
			ActiveDeadlineSeconds: s.DeadlineSeconds,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: PodLabels(in), Annotations: emptyToNil(s.Pod.Annotations)},
				Spec:       pod,
			},
		},
	}
}

// Kueue (kueue.x-k8s.io) queues a Job whose metadata carries a queue name:
// its webhook creates the Job suspended, its controller creates a Workload
// for it and unsuspends the Job once the Workload is admitted, which is
// when its ClusterQueue has quota for every pod (a Job's pods are admitted
// together: all of parallelism, or none).
//
// The Job never has spec.suspend. Crossplane applies the Job
// with server-side apply, so a field it does not apply is not its own:
// Kueue's webhook sets it at creation and Kueue's controller changes it
// (as field manager kueue), and no composition run, function or Crossplane
// restart touches it. Composing suspend: true until admission would make
// Crossplane an owner of the field that Kueue's update then takes over,
// and any apply of a stale response after admission would suspend the
// running cluster again (test/node/kueue_test.go checks the fields'
// owners on the real components).
//
// jobLabels are spec.jobLabels, with the Kueue queue when only the pods
// name it: Kueue queues the Job, and admits its pods together.
func jobLabels(in Input) map[string]string {
	labels := in.MiniCluster.Spec.JobLabels
	if in.Queue == "" || labels[plan.LabelKueueQueueName] != "" {
		return emptyToNil(labels)
	}
	out := maps.Clone(labels)
	if out == nil {
		out = map[string]string{}
	}
	out[plan.LabelKueueQueueName] = in.Queue
	return out
}
