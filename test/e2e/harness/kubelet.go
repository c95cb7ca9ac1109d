package harness

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// MarkPodsReady plays the kubelet for the pods matching labels in a
// namespace: it reports every one of them Running with all containers
// ready, through the pods' status subresource, as a kubelet does. The real
// job controller then counts them and writes the Job's status.active and
// status.ready itself, so nothing fights over the Job's status. (Patching
// the Job's status directly would race with the job controller, which
// recomputes ready from the pods on every sync and would write 0 back.)
//
// Pods already reported ready or being deleted are left alone. It returns
// how many pods it changed.
func (cp *ControlPlane) MarkPodsReady(ctx context.Context, namespace string, labels map[string]string) (int, error) {
	pods := &corev1.PodList{}
	if err := cp.Client.List(ctx, pods, client.InNamespace(namespace), client.MatchingLabels(labels)); err != nil {
		return 0, err
	}
	n := 0
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.DeletionTimestamp != nil || podReady(p) {
			continue
		}
		before := p.DeepCopy()
		t := metav1.Now()
		p.Status.Phase = corev1.PodRunning
		p.Status.StartTime = &t
		p.Status.Conditions = []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: t},
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: t},
			{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: t},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: t},
		}
		p.Status.ContainerStatuses = nil
		for _, c := range p.Spec.Containers {
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
				Name: c.Name, Image: c.Image, Ready: true, Started: ptr(true),
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: t}},
			})
		}
		if err := cp.Client.Status().Patch(ctx, p, client.MergeFrom(before)); err != nil {
			return n, fmt.Errorf("cannot report pod %s/%s ready: %w", namespace, p.Name, err)
		}
		n++
	}
	return n, nil
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func ptr[T any](v T) *T { return &v }
