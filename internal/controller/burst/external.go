package burst

import (
	"bytes"
	"context"
	"fmt"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/flux-framework/minicluster-crossplane/apis/bursting/v1alpha1"
	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/entrypoint"
	"github.com/flux-framework/minicluster-crossplane/internal/plan"
)

const errNotBurst = "managed resource is not a Burst"

// external talks to two clusters: the local one, where the Burst and its
// root MiniCluster live, and the target, where the burst MiniCluster runs.
type external struct {
	local  client.Client
	target client.Client
}

// wanted is what the target should hold for a Burst right now.
type wanted struct {
	lead   Lead
	claim  *unstructured.Unstructured
	secret *corev1.Secret
}

// want reads the root side: the root claim, its lead broker's NodePort and
// node address, and its certificate.
func (e *external) want(ctx context.Context, b *v1alpha1.Burst) (*wanted, error) {
	p := b.Spec.ForProvider
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(v1alpha2.ClaimGVK())
	if err := e.local.Get(ctx, types.NamespacedName{Namespace: b.Namespace, Name: p.Root}, u); err != nil {
		return nil, errors.Wrapf(err, "cannot get root MiniCluster %s/%s (spec.forProvider.root)", b.Namespace, p.Root)
	}
	root, err := RootFrom(u)
	if err != nil {
		return nil, err
	}
	if _, err := root.ClusterEntry(p.Cluster); err != nil {
		return nil, err
	}

	svc := &corev1.Service{}
	svcName := plan.NamesOf(root.MiniCluster).LeadBroker
	if err := e.local.Get(ctx, types.NamespacedName{Namespace: b.Namespace, Name: svcName}, svc); err != nil {
		if kerrors.IsNotFound(err) {
			return nil, waitFor(ReasonWaitingForRoot, "waiting for the root's lead broker Service %s/%s (the function composes it for a MiniCluster with spec.flux.bursting.clusters)", b.Namespace, svcName)
		}
		return nil, errors.Wrapf(err, "cannot get the root's lead broker Service %s/%s", b.Namespace, svcName)
	}
	lead := Lead{Port: NodePort(svc), Address: p.Address}
	if lead.Port == 0 {
		return nil, waitFor(ReasonWaitingForRoot, "waiting for a node port on the root's lead broker Service %s/%s", b.Namespace, svcName)
	}

	pods := &corev1.PodList{}
	if err := e.local.List(ctx, pods, client.InNamespace(b.Namespace), client.MatchingLabels{
		plan.LabelJobName: root.MiniCluster.Name, plan.LabelCompletionIndex: "0",
	}); err != nil {
		return nil, errors.Wrap(err, "cannot list the root's lead broker pods")
	}
	if pod := LeadPod(pods.Items); pod != nil {
		lead.Node = pod.Spec.NodeName
		if lead.Address == "" {
			node := &corev1.Node{}
			if err := e.local.Get(ctx, types.NamespacedName{Name: pod.Spec.NodeName}, node); err != nil {
				return nil, errors.Wrapf(err, "cannot get node %s of the lead broker", pod.Spec.NodeName)
			}
			lead.Address = NodeAddress(node)
		}
	}
	if lead.Address == "" {
		return nil, waitFor(ReasonWaitingForRoot, "waiting for root MiniCluster %s's lead broker pod to be scheduled on a node with an address (set spec.forProvider.address to use a fixed one)", root.MiniCluster.Name)
	}

	sec := &corev1.Secret{}
	if err := e.local.Get(ctx, types.NamespacedName{Namespace: b.Namespace, Name: RootSecretName(root)}, sec); err != nil {
		if kerrors.IsNotFound(err) {
			return nil, waitFor(ReasonWaitingForRoot, "waiting for the root's CURVE certificate Secret %s/%s", b.Namespace, RootSecretName(root))
		}
		return nil, errors.Wrapf(err, "cannot get the root's CURVE certificate Secret %s/%s", b.Namespace, RootSecretName(root))
	}
	cert := sec.Data[entrypoint.CurveFile]
	if len(cert) == 0 {
		return nil, errors.Errorf("Secret %s/%s has no %s", b.Namespace, sec.Name, entrypoint.CurveFile)
	}

	claim, err := DesiredClaim(b, root, lead)
	if err != nil {
		return nil, err
	}
	return &wanted{lead: lead, claim: claim, secret: DesiredSecret(b, cert)}, nil
}

// Observe compares the target with what the root says it should hold.
func (e *external) Observe(ctx context.Context, mg resource.Managed) (managed.ExternalObservation, error) {
	b, ok := mg.(*v1alpha1.Burst)
	if !ok {
		return managed.ExternalObservation{}, errors.New(errNotBurst)
	}
	if meta := b.GetDeletionTimestamp(); meta != nil {
		// Deleting: all that matters is whether our objects still exist.
		exists, err := e.exists(ctx, b)
		return managed.ExternalObservation{ResourceExists: exists, ResourceUpToDate: true}, err
	}
	w, err := e.want(ctx, b)
	if wait := (*waiting)(nil); errors.As(err, &wait) {
		return waitOut(b, wait), nil
	}
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	b.Status.AtProvider.Address = w.lead.Address
	b.Status.AtProvider.Port = w.lead.Port
	b.Status.AtProvider.Node = w.lead.Node
	b.Status.AtProvider.Claim = w.claim.GetNamespace() + "/" + w.claim.GetName()
	b.Status.AtProvider.CurveCertSecret = w.secret.Namespace + "/" + w.secret.Name

	claim := &unstructured.Unstructured{}
	claim.SetGroupVersionKind(v1alpha2.ClaimGVK())
	claimErr := e.target.Get(ctx, client.ObjectKeyFromObject(w.claim), claim)
	sec := &corev1.Secret{}
	secErr := e.target.Get(ctx, client.ObjectKeyFromObject(w.secret), sec)
	if meta.IsNoMatchError(claimErr) {
		return waitOut(b, &waiting{reason: ReasonTargetLacksAPI, msg: fmt.Sprintf("the target cluster does not serve the MiniCluster API (%s): install Crossplane and the MiniCluster Configuration there (docs/bursting.md)", v1alpha2.ClaimGVK().GroupVersion())}), nil
	}
	for _, err := range []error{claimErr, secErr} {
		if err != nil && !kerrors.IsNotFound(err) {
			return managed.ExternalObservation{}, errors.Wrap(err, "cannot read the target cluster")
		}
	}
	if kerrors.IsNotFound(claimErr) || kerrors.IsNotFound(secErr) {
		b.SetConditions(xpv2.Creating())
		return managed.ExternalObservation{ResourceExists: false}, nil
	}
	for _, obj := range []client.Object{claim, sec} {
		if !Owned(obj, b) {
			return managed.ExternalObservation{}, errors.Errorf("%s %s/%s exists in the target cluster but was not made by this Burst: delete it or choose another cluster name or target namespace", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetNamespace(), obj.GetName())
		}
	}

	b.Status.AtProvider.ClaimReady = claimReady(claim)
	if b.Status.AtProvider.ClaimReady {
		b.SetConditions(xpv2.Available())
	} else {
		b.SetConditions(xpv2.Unavailable().WithMessage("burst MiniCluster " + b.Status.AtProvider.Claim + " is not ready yet"))
	}
	upToDate := bytes.Equal(sec.Data[entrypoint.CurveFile], w.secret.Data[entrypoint.CurveFile]) &&
		reflect.DeepEqual(Mutable(claim), Mutable(w.claim))
	return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: upToDate}, nil
}

// waitOut reports what b waits for and leaves the target alone: the
// observation says there is nothing to create or update, so the reconciler
// neither acts nor counts it as an error, and polls again soon.
func waitOut(b *v1alpha1.Burst, w *waiting) managed.ExternalObservation {
	b.SetConditions(w.condition())
	return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}
}

func claimReady(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == string(xpv2.TypeReady) && m["status"] == string(corev1.ConditionTrue) {
			return true
		}
	}
	return false
}

func (e *external) exists(ctx context.Context, b *v1alpha1.Burst) (bool, error) {
	for _, obj := range e.ours(b) {
		err := e.target.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		switch {
		case err == nil && Owned(obj, b):
			return true, nil
		case err != nil && !absent(err):
			return false, errors.Wrap(err, "cannot read the target cluster")
		}
	}
	return false, nil
}

// absent tells whether a read of the target says the object is not there:
// not found, or of a kind the target does not serve (a target without the
// MiniCluster API holds no burst MiniCluster, and a Burst that waited for
// it must still be deletable).
func absent(err error) bool {
	return kerrors.IsNotFound(err) || meta.IsNoMatchError(err)
}

// ours are the objects a Burst makes in the target, identified by name.
func (e *external) ours(b *v1alpha1.Burst) []client.Object {
	claim := &unstructured.Unstructured{}
	claim.SetGroupVersionKind(v1alpha2.ClaimGVK())
	claim.SetNamespace(b.Spec.ForProvider.TargetNamespace)
	claim.SetName(b.Spec.ForProvider.Cluster)
	sec := &corev1.Secret{}
	sec.SetNamespace(b.Spec.ForProvider.TargetNamespace)
	sec.SetName(SecretName(b))
	return []client.Object{claim, sec}
}

// Create writes the certificate first, so the burst MiniCluster's pods
// never start without it, then the claim.
func (e *external) Create(ctx context.Context, mg resource.Managed) (managed.ExternalCreation, error) {
	b, ok := mg.(*v1alpha1.Burst)
	if !ok {
		return managed.ExternalCreation{}, errors.New(errNotBurst)
	}
	w, err := e.want(ctx, b)
	if err != nil {
		return managed.ExternalCreation{}, err
	}
	if err := e.target.Create(ctx, w.secret); err != nil && !kerrors.IsAlreadyExists(err) {
		return managed.ExternalCreation{}, errors.Wrap(err, "cannot create the CURVE certificate Secret in the target cluster")
	}
	if err := e.target.Create(ctx, w.claim); err != nil && !kerrors.IsAlreadyExists(err) {
		return managed.ExternalCreation{}, errors.Wrap(err, "cannot create the burst MiniCluster in the target cluster")
	}
	return managed.ExternalCreation{}, nil
}

// Update moves the burst MiniCluster to the lead broker's current address
// and port (and size), and refreshes the certificate.
func (e *external) Update(ctx context.Context, mg resource.Managed) (managed.ExternalUpdate, error) {
	b, ok := mg.(*v1alpha1.Burst)
	if !ok {
		return managed.ExternalUpdate{}, errors.New(errNotBurst)
	}
	w, err := e.want(ctx, b)
	if err != nil {
		return managed.ExternalUpdate{}, err
	}
	sec := &corev1.Secret{}
	if err := e.target.Get(ctx, client.ObjectKeyFromObject(w.secret), sec); err != nil {
		return managed.ExternalUpdate{}, errors.Wrap(err, "cannot get the CURVE certificate Secret in the target cluster")
	}
	if !bytes.Equal(sec.Data[entrypoint.CurveFile], w.secret.Data[entrypoint.CurveFile]) {
		sec.Data = w.secret.Data
		if err := e.target.Update(ctx, sec); err != nil {
			return managed.ExternalUpdate{}, errors.Wrap(err, "cannot update the CURVE certificate Secret in the target cluster")
		}
	}
	m := Mutable(w.claim)
	patch := map[string]any{"spec": map[string]any{
		"size": m.Size,
		"flux": map[string]any{"bursting": map[string]any{"leadBroker": m.LeadBroker}},
	}}
	raw, err := jsonMarshal(patch)
	if err != nil {
		return managed.ExternalUpdate{}, err
	}
	claim := &unstructured.Unstructured{}
	claim.SetGroupVersionKind(v1alpha2.ClaimGVK())
	claim.SetNamespace(w.claim.GetNamespace())
	claim.SetName(w.claim.GetName())
	if err := e.target.Patch(ctx, claim, client.RawPatch(types.MergePatchType, raw)); err != nil {
		return managed.ExternalUpdate{}, errors.Wrap(err, "cannot update the burst MiniCluster's lead broker in the target cluster")
	}
	return managed.ExternalUpdate{}, nil
}

// Delete removes the burst MiniCluster and the certificate copy, and only
// those: objects of the same names that this Burst did not make are left.
func (e *external) Delete(ctx context.Context, mg resource.Managed) (managed.ExternalDelete, error) {
	b, ok := mg.(*v1alpha1.Burst)
	if !ok {
		return managed.ExternalDelete{}, errors.New(errNotBurst)
	}
	b.SetConditions(xpv2.Deleting())
	for _, obj := range e.ours(b) {
		if err := e.target.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			if absent(err) {
				continue
			}
			return managed.ExternalDelete{}, errors.Wrap(err, "cannot read the target cluster")
		}
		if !Owned(obj, b) {
			continue
		}
		if err := e.target.Delete(ctx, obj); err != nil && !kerrors.IsNotFound(err) {
			return managed.ExternalDelete{}, errors.Wrap(err, fmt.Sprintf("cannot delete %s/%s in the target cluster", obj.GetNamespace(), obj.GetName()))
		}
	}
	return managed.ExternalDelete{}, nil
}

// Disconnect does nothing: target clients are kept by NewClientFor, one per
// kubeconfig, and the local one belongs to the manager.
func (e *external) Disconnect(context.Context) error { return nil }
