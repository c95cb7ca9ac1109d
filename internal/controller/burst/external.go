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
	"github.com/flux-framework/minicluster-crossplane/internal/plan"
)

const errNotBurst = "managed resource is not a Burst"

// external talks to two clusters: the local one, where the Burst and its
// root MiniCluster live, and the target, where the burst MiniCluster runs.
// fresh reads the Burst from the local API server, past the manager's
// cache, whose copy may predate the record of the claim Create just made.
type external struct {
	local  client.Client
	fresh  client.Reader
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
	cert := sec.Data[v1alpha2.CurveCertKey]
	if len(cert) == 0 {
		return nil, errors.Errorf("Secret %s/%s has no %s", b.Namespace, sec.Name, v1alpha2.CurveCertKey)
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
		objs, err := e.mine(ctx, b)
		return managed.ExternalObservation{ResourceExists: len(objs) > 0, ResourceUpToDate: true}, err
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

	f, err := e.look(ctx, b, w)
	if meta.IsNoMatchError(err) {
		return waitOut(b, &waiting{reason: ReasonTargetLacksAPI, msg: fmt.Sprintf("the target cluster does not serve the MiniCluster API (%s): install Crossplane and the MiniCluster Configuration there (docs/bursting.md)", v1alpha2.ClaimGVK().GroupVersion())}), nil
	}
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	// Before saying anything is missing: a missing object makes the
	// reconciler Create, and Create writes the root's certificate. A Burst
	// that may only observe leaves even its own copy where it is.
	if err := e.refuseForeign(ctx, b, f, !observesOnly(b)); err != nil {
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
	upToDate := bytes.Equal(sec.Data[v1alpha2.CurveCertKey], w.secret.Data[v1alpha2.CurveCertKey]) && BoundTo(sec, claim) &&
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

// observesOnly reports whether b's management policies let the controller
// only read the target ([Observe], with or without LateInitialize).
func observesOnly(b *v1alpha1.Burst) bool {
	for _, p := range b.GetManagementPolicies() {
		if p != xpv2.ManagementActionObserve && p != xpv2.ManagementActionLateInitialize {
			return false
		}
	}
	return true
}

// absent tells whether a read of the target says the object is not there:
// not found, or of a kind the target does not serve (a target without the
// MiniCluster API holds no burst MiniCluster, and a Burst that waited for
// it must still be deletable).
func absent(err error) bool {
	return kerrors.IsNotFound(err) || meta.IsNoMatchError(err)
}

// mine is what the target holds of b's under the names b writes: the burst
// MiniCluster b created, known by the uid it recorded, and b's copy of the
// root's certificate, known by b's labels (which a tenant with only
// MiniCluster rights cannot put on a Secret). An object of either name
// that is not b's is left out, so Delete never deletes it.
func (e *external) mine(ctx context.Context, b *v1alpha1.Burst) ([]client.Object, error) {
	claim := &unstructured.Unstructured{}
	claim.SetGroupVersionKind(v1alpha2.ClaimGVK())
	claim.SetNamespace(b.Spec.ForProvider.TargetNamespace)
	claim.SetName(b.Spec.ForProvider.Cluster)
	sec := &corev1.Secret{}
	sec.SetNamespace(b.Spec.ForProvider.TargetNamespace)
	sec.SetName(SecretName(b))

	var out []client.Object
	switch err := e.target.Get(ctx, client.ObjectKeyFromObject(claim), claim); {
	case err == nil:
		recorded, err := e.recorded(ctx, b, claim)
		if err != nil {
			return nil, err
		}
		if OwnClaim(claim, recorded) {
			out = append(out, claim)
		}
	case !absent(err):
		return nil, errors.Wrap(err, "cannot read the target cluster")
	}
	switch err := e.target.Get(ctx, client.ObjectKeyFromObject(sec), sec); {
	case err == nil:
		if Owned(sec, b) {
			out = append(out, sec)
		}
	case !absent(err):
		return nil, errors.Wrap(err, "cannot read the target cluster")
	}
	return out, nil
}

// Create makes the burst MiniCluster, records its uid in the Burst's
// status, and only then writes the copy of the root's certificate, for that
// MiniCluster alone: annotated with its uid (the function exempts the copy
// from the Secret policy for the MiniCluster of that uid only) and owned by
// it. The MiniCluster comes first because only the API server's answer to
// its creation says which MiniCluster of that name is the Burst's; its pods
// wait for the copy anyway, as the function composes nothing for a
// MiniCluster whose certificate Secret does not exist. Create writes
// nothing where an object of either name is not this Burst's.
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
	f, err := e.look(ctx, b, w)
	if err != nil {
		return managed.ExternalCreation{}, err
	}
	if err := e.refuseForeign(ctx, b, f, true); err != nil {
		return managed.ExternalCreation{}, err
	}
	claim := f.claim
	var made *unstructured.Unstructured
	if claim == nil {
		// A copy without its MiniCluster was written for one that is
		// gone: take it back before the name can be taken again.
		if f.secret != nil {
			if err := e.takeBack(ctx, f.secret); err != nil {
				return managed.ExternalCreation{}, err
			}
			f.secret = nil
		}
		if made, err = e.createClaim(ctx, b, w.claim, f.recorded); err != nil {
			return managed.ExternalCreation{}, err
		}
		claim = made
	}
	if f.secret != nil {
		// Both are there, and the Burst's: Update binds the copy to the
		// MiniCluster if it is not.
		return managed.ExternalCreation{}, nil
	}
	sec := w.secret.DeepCopy()
	BindCopy(sec, claim)
	switch err := e.target.Create(ctx, sec); {
	case err == nil:
	case kerrors.IsAlreadyExists(err):
		if err := e.refuseForeignSecret(ctx, b, sec); err != nil {
			if made != nil {
				// Someone won the race for the copy's name since look:
				// the MiniCluster just made would mount their Secret, so
				// take it back too.
				err = errors.Join(err, e.takeBack(ctx, made))
			}
			return managed.ExternalCreation{}, err
		}
	default:
		return managed.ExternalCreation{}, errors.Wrap(err, "cannot create the CURVE certificate Secret in the target cluster")
	}
	return managed.ExternalCreation{}, nil
}

// createClaim creates the burst MiniCluster want and records its uid in
// b's status before anything else is written for it. recorded is what b
// recorded before, for the refusal's message.
func (e *external) createClaim(ctx context.Context, b *v1alpha1.Burst, want *unstructured.Unstructured, recorded types.UID) (*unstructured.Unstructured, error) {
	claim := want.DeepCopy()
	switch err := e.target.Create(ctx, claim); {
	case err == nil:
	case kerrors.IsAlreadyExists(err):
		// A tenant made one since look. Whatever its labels, it is not
		// the Burst's: the Burst has not recorded it.
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(v1alpha2.ClaimGVK())
		if err := e.target.Get(ctx, client.ObjectKeyFromObject(want), got); err != nil {
			return nil, errors.Wrapf(err, "cannot get %s %s/%s in the target cluster", v1alpha2.ClaimKind, want.GetNamespace(), want.GetName())
		}
		return nil, foreignClaim(got, recorded)
	default:
		return nil, errors.Wrap(err, "cannot create the burst MiniCluster in the target cluster")
	}
	if claim.GetUID() == "" {
		return nil, errors.Errorf("the target cluster created burst MiniCluster %s/%s without a uid: the Burst cannot tell it from one made under its name later, so it writes no certificate for it", claim.GetNamespace(), claim.GetName())
	}
	if err := e.record(ctx, b, claim.GetUID()); err != nil {
		// Unrecorded, the MiniCluster would be foreign to the Burst from
		// the next reconcile on, and stay: take it back, and make another
		// then.
		return nil, errors.Join(err, e.takeBack(ctx, claim))
	}
	return claim, nil
}

// record writes uid into b's status.atProvider.claimUID on the API server
// at once. The reconciler would not keep it: after Create,
// crossplane-runtime's managed reconciler writes its critical annotations
// with an update whose answer replaces whatever Create set in the status
// (and only annotations are re-applied). And the copy must not be written
// for a MiniCluster whose uid may yet be lost. Status, because neither a
// tenant of the target namespace nor, without bursts/status, one of the
// Burst's can write it.
func (e *external) record(ctx context.Context, b *v1alpha1.Burst, uid types.UID) error {
	raw, err := jsonMarshal(map[string]any{"status": map[string]any{"atProvider": map[string]any{"claimUID": string(uid)}}})
	if err != nil {
		return err
	}
	if err := e.local.Status().Patch(ctx, b, client.RawPatch(types.MergePatchType, raw)); err != nil {
		return errors.Wrapf(err, "cannot record the uid of burst MiniCluster %s/%s in Burst %s/%s's status.atProvider.claimUID", b.Spec.ForProvider.TargetNamespace, b.Spec.ForProvider.Cluster, b.Namespace, b.Name)
	}
	return nil
}

// recorded is the uid of the burst MiniCluster b created, as its status
// records it. The reconciler reads b from the manager's cache, which may
// not yet hold the record Create made moments ago: before claim, whose uid
// differs, is taken for foreign (and the copy next to it deleted), the
// record is read again from the API server.
func (e *external) recorded(ctx context.Context, b *v1alpha1.Burst, claim *unstructured.Unstructured) (types.UID, error) {
	uid := types.UID(b.Status.AtProvider.ClaimUID)
	if claim == nil || OwnClaim(claim, uid) {
		return uid, nil
	}
	cur := &v1alpha1.Burst{}
	if err := e.fresh.Get(ctx, client.ObjectKeyFromObject(b), cur); err != nil {
		return "", errors.Wrapf(err, "cannot get Burst %s/%s, for the uid of the burst MiniCluster it made", b.Namespace, b.Name)
	}
	if cur.GetUID() != b.GetUID() {
		// A Burst of the same name made since: its record is not b's.
		return uid, nil
	}
	b.Status.AtProvider.ClaimUID = cur.Status.AtProvider.ClaimUID
	return types.UID(cur.Status.AtProvider.ClaimUID), nil
}

// takeBack deletes obj, which the Burst wrote, and only that object: the
// uid precondition leaves one made in its place alone.
func (e *external) takeBack(ctx context.Context, obj client.Object) error {
	uid := obj.GetUID()
	if err := e.target.Delete(ctx, obj, client.Preconditions{UID: &uid}); err != nil && !kerrors.IsNotFound(err) {
		return errors.Wrapf(err, "cannot delete %s/%s, which this Burst wrote, in the target cluster", obj.GetNamespace(), obj.GetName())
	}
	return nil
}

// found is what the target holds under the names a Burst writes, nil where
// there is nothing, and the uid of the burst MiniCluster the Burst
// recorded.
type found struct {
	claim    *unstructured.Unstructured
	secret   *corev1.Secret
	recorded types.UID
}

// look reads the target's objects of w's names, and what b recorded of
// the claim. A target error keeps its cause, so Observe can tell a target
// without the MiniCluster API.
func (e *external) look(ctx context.Context, b *v1alpha1.Burst, w *wanted) (found, error) {
	var f found
	claim := &unstructured.Unstructured{}
	claim.SetGroupVersionKind(v1alpha2.ClaimGVK())
	switch err := e.target.Get(ctx, client.ObjectKeyFromObject(w.claim), claim); {
	case err == nil:
		f.claim = claim
	case !kerrors.IsNotFound(err):
		return found{}, errors.Wrap(err, "cannot read the target cluster")
	}
	sec := &corev1.Secret{}
	switch err := e.target.Get(ctx, client.ObjectKeyFromObject(w.secret), sec); {
	case err == nil:
		f.secret = sec
	case !kerrors.IsNotFound(err):
		return found{}, errors.Wrap(err, "cannot read the target cluster")
	}
	var err error
	f.recorded, err = e.recorded(ctx, b, f.claim)
	return f, err
}

// refuseForeign says which of the objects found b did not make: a
// MiniCluster of the claim's name that is not the one b created (by uid:
// made before the Burst, or after the Burst's own was deleted, with or
// without b's labels), or a Secret of the copy's name without b's labels.
// With clean, b's own copy next to a foreign MiniCluster is deleted. The
// function would not exempt it for that MiniCluster, whose uid is not the
// one the copy is annotated with, but a function of before the annotation
// exempted a copy by its labels, which a tenant copies onto its
// MiniCluster; and a root's certificate has no business in a namespace
// where the Burst has no MiniCluster.
func (e *external) refuseForeign(ctx context.Context, b *v1alpha1.Burst, f found, clean bool) error {
	if f.claim != nil && !OwnClaim(f.claim, f.recorded) {
		err := foreignClaim(f.claim, f.recorded)
		if clean && f.secret != nil && Owned(f.secret, b) {
			err = errors.Join(err, e.takeBack(ctx, f.secret))
		}
		return err
	}
	if f.secret != nil && !Owned(f.secret, b) {
		return foreign("Secret", f.secret, "")
	}
	return nil
}

// refuseForeignSecret reads the Secret of want's name, after a create
// found it already there, and says whether b did not make it.
func (e *external) refuseForeignSecret(ctx context.Context, b *v1alpha1.Burst, want *corev1.Secret) error {
	got := &corev1.Secret{}
	if err := e.target.Get(ctx, client.ObjectKeyFromObject(want), got); err != nil {
		return errors.Wrapf(err, "cannot get Secret %s/%s in the target cluster", want.Namespace, want.Name)
	}
	if !Owned(got, b) {
		return foreign("Secret", got, "")
	}
	return nil
}

// foreignClaim is the refusal for claim, a MiniCluster of the burst
// claim's name that is not the one of uid recorded, which the Burst made
// ("" if it has made none).
func foreignClaim(claim *unstructured.Unstructured, recorded types.UID) error {
	why := fmt.Sprintf("uid %s; this Burst has made none", claim.GetUID())
	if recorded != "" {
		why = fmt.Sprintf("uid %s, not %s, the one this Burst made (status.atProvider.claimUID)", claim.GetUID(), recorded)
	}
	return foreign(v1alpha2.ClaimKind, claim, " ("+why+"; labels do not make a MiniCluster the Burst's)")
}

// foreign is the refusal for obj of kind, in the way of what a Burst
// writes; why, if set, says how the Burst knows. The kind is passed, not
// read from obj: typed objects come back from the API server without it.
func foreign(kind string, obj client.Object, why string) error {
	return errors.Errorf("%s %s/%s exists in the target cluster but was not made by this Burst%s, so the Burst writes nothing there (a MiniCluster of that name would get the root's CURVE certificate): delete it, or choose another cluster name (spec.forProvider.cluster) or target namespace (spec.forProvider.targetNamespace)", kind, obj.GetNamespace(), obj.GetName(), why)
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
	f, err := e.look(ctx, b, w)
	if err != nil {
		return managed.ExternalUpdate{}, err
	}
	if err := e.refuseForeign(ctx, b, f, true); err != nil {
		return managed.ExternalUpdate{}, err
	}
	if f.claim == nil || f.secret == nil {
		return managed.ExternalUpdate{}, errors.Errorf("cannot update the burst MiniCluster %s/%s and its CURVE certificate Secret: one of them is gone from the target cluster (the next reconcile creates it)", w.claim.GetNamespace(), w.claim.GetName())
	}
	// Update sends the resource version read, so a Secret replaced since
	// is a conflict, not overwritten. The MiniCluster is the Burst's own
	// (refuseForeign), so the copy may be bound to it if it is not.
	if sec := f.secret; !bytes.Equal(sec.Data[v1alpha2.CurveCertKey], w.secret.Data[v1alpha2.CurveCertKey]) || !BoundTo(sec, f.claim) {
		sec.Data = w.secret.Data
		BindCopy(sec, f.claim)
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

// Delete removes the burst MiniCluster the Burst created and its
// certificate copy, and only those: objects of the same names that this
// Burst did not make are left.
func (e *external) Delete(ctx context.Context, mg resource.Managed) (managed.ExternalDelete, error) {
	b, ok := mg.(*v1alpha1.Burst)
	if !ok {
		return managed.ExternalDelete{}, errors.New(errNotBurst)
	}
	b.SetConditions(xpv2.Deleting())
	objs, err := e.mine(ctx, b)
	if err != nil {
		return managed.ExternalDelete{}, err
	}
	for _, obj := range objs {
		if err := e.takeBack(ctx, obj); err != nil {
			return managed.ExternalDelete{}, err
		}
	}
	return managed.ExternalDelete{}, nil
}

// Disconnect does nothing: target clients are kept by NewClientFor, one per
// kubeconfig, and the local one belongs to the manager.
func (e *external) Disconnect(context.Context) error { return nil }
