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

	f, err := e.find(ctx, w)
	if meta.IsNoMatchError(err) {
		return waitOut(b, &waiting{reason: ReasonTargetLacksAPI, msg: fmt.Sprintf("the target cluster does not serve the MiniCluster API (%s): install Crossplane and the MiniCluster Configuration there (docs/bursting.md)", v1alpha2.ClaimGVK().GroupVersion())}), nil
	}
	if err != nil {
		return managed.ExternalObservation{}, errors.Wrap(err, "cannot read the target cluster")
	}
	// Before saying anything is missing: a missing object makes the
	// reconciler Create, and Create writes the root's certificate.
	if err := f.refuseForeign(b); err != nil {
		return managed.ExternalObservation{}, err
	}
	if f.claim == nil || f.secret == nil {
		b.SetConditions(xpv2.Creating())
		return managed.ExternalObservation{ResourceExists: false}, nil
	}
	claim, sec := f.claim, f.secret

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
// never start without it, then the claim. It writes nothing where an object
// of either name is not this Burst's: a MiniCluster of the claim's name
// would get the root's certificate, i.e. a broker in the root's instance.
func (e *external) Create(ctx context.Context, mg resource.Managed) (managed.ExternalCreation, error) {
	b, ok := mg.(*v1alpha1.Burst)
	if !ok {
		return managed.ExternalCreation{}, errors.New(errNotBurst)
	}
	w, err := e.want(ctx, b)
	if err != nil {
		return managed.ExternalCreation{}, err
	}
	// Observe checked too, but a tenant of the target namespace may have
	// created either object since.
	f, err := e.find(ctx, w)
	if err != nil {
		return managed.ExternalCreation{}, errors.Wrap(err, "cannot read the target cluster")
	}
	if err := f.refuseForeign(b); err != nil {
		return managed.ExternalCreation{}, err
	}
	var written *corev1.Secret
	if f.secret == nil {
		switch err := e.target.Create(ctx, w.secret); {
		case err == nil:
			written = w.secret
		case kerrors.IsAlreadyExists(err):
			if err := e.refuseForeignAt(ctx, b, "Secret", &corev1.Secret{}, w.secret); err != nil {
				return managed.ExternalCreation{}, err
			}
		default:
			return managed.ExternalCreation{}, errors.Wrap(err, "cannot create the CURVE certificate Secret in the target cluster")
		}
	}
	if f.claim != nil {
		return managed.ExternalCreation{}, nil
	}
	switch err := e.target.Create(ctx, w.claim); {
	case err == nil:
	case kerrors.IsAlreadyExists(err):
		claim := &unstructured.Unstructured{}
		claim.SetGroupVersionKind(v1alpha2.ClaimGVK())
		if err := e.refuseForeignAt(ctx, b, v1alpha2.ClaimKind, claim, w.claim); err != nil {
			// A tenant won the race since find: the certificate just
			// written sits next to its MiniCluster, so take it back.
			return managed.ExternalCreation{}, errors.Join(err, e.unwrite(ctx, written))
		}
	default:
		return managed.ExternalCreation{}, errors.Wrap(err, "cannot create the burst MiniCluster in the target cluster")
	}
	return managed.ExternalCreation{}, nil
}

// unwrite deletes sec, which Create wrote moments ago, and only that
// object: the UID precondition leaves one made in its place alone.
func (e *external) unwrite(ctx context.Context, sec *corev1.Secret) error {
	if sec == nil {
		return nil
	}
	uid := sec.GetUID()
	if err := e.target.Delete(ctx, sec, client.Preconditions{UID: &uid}); err != nil && !kerrors.IsNotFound(err) {
		return errors.Wrapf(err, "cannot delete the CURVE certificate Secret %s/%s this Burst wrote in the target cluster", sec.Namespace, sec.Name)
	}
	return nil
}

// found is what the target holds under the names a Burst writes: nil where
// there is nothing.
type found struct {
	claim  *unstructured.Unstructured
	secret *corev1.Secret
}

// find reads the target's objects of w's names. Errors other than not found
// come back unwrapped, so Observe can tell a target without the
// MiniCluster API.
func (e *external) find(ctx context.Context, w *wanted) (found, error) {
	var f found
	claim := &unstructured.Unstructured{}
	claim.SetGroupVersionKind(v1alpha2.ClaimGVK())
	switch err := e.target.Get(ctx, client.ObjectKeyFromObject(w.claim), claim); {
	case err == nil:
		f.claim = claim
	case !kerrors.IsNotFound(err):
		return found{}, err
	}
	sec := &corev1.Secret{}
	switch err := e.target.Get(ctx, client.ObjectKeyFromObject(w.secret), sec); {
	case err == nil:
		f.secret = sec
	case !kerrors.IsNotFound(err):
		return found{}, err
	}
	return f, nil
}

// refuseForeign says which of the objects found b did not make.
func (f found) refuseForeign(b *v1alpha1.Burst) error {
	if f.claim != nil && !Owned(f.claim, b) {
		return foreign(v1alpha2.ClaimKind, f.claim)
	}
	if f.secret != nil && !Owned(f.secret, b) {
		return foreign("Secret", f.secret)
	}
	return nil
}

// refuseForeignAt reads the object of want's name into into, after a create
// found it already there, and says whether b did not make it.
func (e *external) refuseForeignAt(ctx context.Context, b *v1alpha1.Burst, kind string, into, want client.Object) error {
	if err := e.target.Get(ctx, client.ObjectKeyFromObject(want), into); err != nil {
		return errors.Wrapf(err, "cannot get %s %s/%s in the target cluster", kind, want.GetNamespace(), want.GetName())
	}
	if !Owned(into, b) {
		return foreign(kind, into)
	}
	return nil
}

// foreign is the refusal for obj of kind, in the way of what a Burst
// writes. The kind is passed, not read from obj: typed objects come back
// from the API server without it.
func foreign(kind string, obj client.Object) error {
	return errors.Errorf("%s %s/%s exists in the target cluster but was not made by this Burst, so the Burst writes nothing there (a MiniCluster of that name would get the root's CURVE certificate): delete it, or choose another cluster name (spec.forProvider.cluster) or target namespace (spec.forProvider.targetNamespace)", kind, obj.GetNamespace(), obj.GetName())
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
	// Observe saw both objects as this Burst's, but either may have been
	// replaced since: a tenant of the target namespace may delete the
	// burst MiniCluster and create its own.
	f, err := e.find(ctx, w)
	if err != nil {
		return managed.ExternalUpdate{}, errors.Wrap(err, "cannot read the target cluster")
	}
	if err := f.refuseForeign(b); err != nil {
		return managed.ExternalUpdate{}, err
	}
	if f.claim == nil || f.secret == nil {
		return managed.ExternalUpdate{}, errors.Errorf("cannot update the burst MiniCluster %s/%s and its CURVE certificate Secret: one of them is gone from the target cluster (the next reconcile creates it)", w.claim.GetNamespace(), w.claim.GetName())
	}
	// Update sends the resource version read, so a Secret replaced since
	// is a conflict, not overwritten.
	if sec := f.secret; !bytes.Equal(sec.Data[entrypoint.CurveFile], w.secret.Data[entrypoint.CurveFile]) {
		sec.Data = w.secret.Data
		if err := e.target.Update(ctx, sec); err != nil {
			return managed.ExternalUpdate{}, errors.Wrap(err, "cannot update the CURVE certificate Secret in the target cluster")
		}
	}
	m := Mutable(w.claim)
	patch := map[string]any{
		// The API server refuses to change a uid: a claim replaced since
		// it was read is not patched.
		"metadata": map[string]any{"uid": string(f.claim.GetUID())},
		"spec": map[string]any{
			"size": m.Size,
			"flux": map[string]any{"bursting": map[string]any{"leadBroker": m.LeadBroker}},
		},
	}
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
