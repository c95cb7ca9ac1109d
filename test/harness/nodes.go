package harness

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

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
