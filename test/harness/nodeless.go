package harness

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
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

// CreateNode registers a Node, as a kubelet does when it starts: it creates
// the object, then reports its addresses and a Ready condition through the
// status subresource (status is ignored on create). No kubelet runs behind
// it: pods bound to it stay as the test leaves them. An existing Node of
// that name gets the new addresses.
func (cp *ControlPlane) CreateNode(ctx context.Context, name string, addresses ...corev1.NodeAddress) (*corev1.Node, error) {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name}}}
	if err := cp.Client.Create(ctx, n); err != nil {
		if !kerrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("cannot create node %s: %w", name, err)
		}
		if err := cp.Client.Get(ctx, client.ObjectKey{Name: name}, n); err != nil {
			return nil, err
		}
	}
	t := metav1.Now()
	n.Status.Addresses = append([]corev1.NodeAddress{{Type: corev1.NodeHostName, Address: name}}, addresses...)
	n.Status.Conditions = []corev1.NodeCondition{{
		Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "played by the e2e harness",
		LastHeartbeatTime: t, LastTransitionTime: t,
	}}
	if err := cp.Client.Status().Update(ctx, n); err != nil {
		return nil, fmt.Errorf("cannot report node %s's addresses: %w", name, err)
	}
	return n, nil
}

// BindPod assigns a pending pod to a node through the pods/binding
// subresource, as the scheduler does (a pod's spec.nodeName cannot be
// changed by an update).
func (cp *ControlPlane) BindPod(ctx context.Context, namespace, pod, node string) error {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: pod}}
	b := &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: pod},
		Target:     corev1.ObjectReference{Kind: "Node", APIVersion: "v1", Name: node},
	}
	if err := cp.Client.SubResource("binding").Create(ctx, p, b); err != nil {
		return fmt.Errorf("cannot bind pod %s/%s to node %s: %w", namespace, pod, node, err)
	}
	return nil
}
