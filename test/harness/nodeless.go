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
		// A finished pod stays finished, as with a kubelet.
		if p.DeletionTimestamp != nil || podReady(p) || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if err := cp.ReportPodRunning(ctx, p); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// ReportPodRunning reports one pod Running with all containers ready,
// through its status subresource, as a kubelet does.
func (cp *ControlPlane) ReportPodRunning(ctx context.Context, p *corev1.Pod) error {
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
		return fmt.Errorf("cannot report pod %s/%s ready: %w", p.Namespace, p.Name, err)
	}
	return nil
}

// ReportPodTerminated reports, as the kubelet does with restartPolicy Never,
// that the pod's containers exited — the container named runner with
// exitCode, the others with 0 — and the pod Succeeded (exitCode 0) or
// Failed, with extra conditions (such as DisruptionTarget for an eviction).
func (cp *ControlPlane) ReportPodTerminated(ctx context.Context, p *corev1.Pod, runner string, exitCode int32, extra ...corev1.PodCondition) error {
	before := p.DeepCopy()
	now := metav1.Now()
	phase, reason := corev1.PodSucceeded, "Completed"
	if exitCode != 0 {
		phase, reason = corev1.PodFailed, "Error"
	}
	p.Status.Phase = phase
	p.Status.Conditions = []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: corev1.ContainersReady, Status: corev1.ConditionFalse, Reason: "PodCompleted", LastTransitionTime: now},
		{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "PodCompleted", LastTransitionTime: now},
	}
	p.Status.Conditions = append(p.Status.Conditions, extra...)
	p.Status.ContainerStatuses = nil
	for _, c := range p.Spec.Containers {
		code, why := int32(0), "Completed"
		if c.Name == runner {
			code, why = exitCode, reason
		}
		started := now
		if p.Status.StartTime != nil {
			started = *p.Status.StartTime
		}
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, Ready: false, Started: ptr(false),
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: code, Reason: why, StartedAt: started, FinishedAt: now,
			}},
		})
	}
	if err := cp.Client.Status().Patch(ctx, p, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("cannot report pod %s/%s %s with exit code %d: %w", p.Namespace, p.Name, phase, exitCode, err)
	}
	return nil
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
