package render

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
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
		ObjectMeta: meta(in, mc.Name, emptyToNil(s.JobLabels)),
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
