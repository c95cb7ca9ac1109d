// Package burst is the burst controller: a crossplane-runtime managed
// reconciler that realises a Burst as a burst MiniCluster claim (and a copy
// of the root's CURVE certificate) in a target cluster, wired to the root's
// lead broker through its NodePort, and keeps that wiring true.
package burst

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/flux-framework/minicluster-crossplane/apis/bursting/v1alpha1"
	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/plan"
)

// Labels on what the controller creates in the target: they say which
// Burst made it, and mark the certificate copy as the Burst's (a tenant
// with only MiniCluster rights cannot write a Secret). A burst MiniCluster
// is known by its uid instead (OwnClaim): its labels are any tenant's to
// write. They are the MiniCluster API's, because the function read them
// before the copy carried its MiniCluster's uid.
const (
	LabelBurstName      = v1alpha2.LabelBurstName
	LabelBurstNamespace = v1alpha2.LabelBurstNamespace
)

// Lead is where a burst cluster reaches the root's rank-0 broker.
type Lead struct {
	Address string
	Port    int32
	Node    string
}

// Root is what the controller needs of the root MiniCluster.
type Root struct {
	MiniCluster *v1alpha2.MiniCluster
	// MaximumSize of the root: its host range.
	MaximumSize int32
}

// ClusterEntry returns the root's bursting cluster called name.
func (r Root) ClusterEntry(name string) (v1alpha2.BurstedCluster, error) {
	for _, c := range r.MiniCluster.Spec.Flux.Bursting.Clusters {
		if c.Name == name {
			return c, nil
		}
	}
	names := make([]string, 0, len(r.MiniCluster.Spec.Flux.Bursting.Clusters))
	for _, c := range r.MiniCluster.Spec.Flux.Bursting.Clusters {
		names = append(names, c.Name)
	}
	return v1alpha2.BurstedCluster{}, fmt.Errorf("spec.forProvider.cluster %q is not one of root MiniCluster %s's spec.flux.bursting.clusters %v: its hostnames must be in the root's host list", name, r.MiniCluster.Name, names)
}

// RootFrom reads the root claim, with the defaults the function applies, so
// both sides compute the same host list.
func RootFrom(u *unstructured.Unstructured) (Root, error) {
	b, err := json.Marshal(u.Object)
	if err != nil {
		return Root{}, err
	}
	mc := &v1alpha2.MiniCluster{}
	if err := json.Unmarshal(b, mc); err != nil {
		return Root{}, fmt.Errorf("cannot decode root MiniCluster %s: %w", u.GetName(), err)
	}
	v1alpha2.SetDefaults(mc, v1alpha2.PlatformDefaults{})
	return Root{MiniCluster: mc, MaximumSize: plan.MaximumSize(mc)}, nil
}

// NodeAddress is the address other clusters reach a node at: its
// ExternalIP, else its InternalIP.
func NodeAddress(n *corev1.Node) string {
	for _, t := range []corev1.NodeAddressType{corev1.NodeExternalIP, corev1.NodeInternalIP} {
		for _, a := range n.Status.Addresses {
			if a.Type == t && a.Address != "" {
				return a.Address
			}
		}
	}
	return ""
}

// LeadPod picks the pod running the root's lead broker (completion index
// 0) among pods: the newest one that is scheduled and not finished.
func LeadPod(pods []corev1.Pod) *corev1.Pod {
	var live []*corev1.Pod
	for i := range pods {
		p := &pods[i]
		if p.Spec.NodeName == "" || p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		live = append(live, p)
	}
	if len(live) == 0 {
		return nil
	}
	sort.Slice(live, func(i, j int) bool {
		if !live[i].CreationTimestamp.Equal(&live[j].CreationTimestamp) {
			return live[j].CreationTimestamp.Before(&live[i].CreationTimestamp)
		}
		return live[i].Name < live[j].Name
	})
	return live[0]
}

// NodePort is the lead broker Service's node port for the broker port.
func NodePort(svc *corev1.Service) int32 {
	for _, p := range svc.Spec.Ports {
		if p.Port == v1alpha2.BrokerPort {
			return p.NodePort
		}
	}
	return 0
}

// SecretName is the target's copy of the root's certificate.
func SecretName(b *v1alpha1.Burst) string { return plan.CurveSecretOf(b.Spec.ForProvider.Cluster) }

// RootSecretName is the root's own certificate Secret.
func RootSecretName(r Root) string { return plan.NamesOf(r.MiniCluster).CurveSecret }

func labels(b *v1alpha1.Burst) map[string]string {
	return map[string]string{LabelBurstName: b.Name, LabelBurstNamespace: b.Namespace}
}

// Owned reports whether obj carries b's labels. That is proof enough for
// a Secret, which a tenant with only MiniCluster rights cannot write, but
// not for a MiniCluster, whose labels any tenant of the target namespace
// writes as it likes: a burst MiniCluster is b's only when it is the one b
// created, by uid (OwnClaim).
func Owned(obj metav1.Object, b *v1alpha1.Burst) bool {
	l := obj.GetLabels()
	return l[LabelBurstName] == b.Name && l[LabelBurstNamespace] == b.Namespace
}

// OwnClaim reports whether claim is the burst MiniCluster that a Burst
// recorded, as it created it, with uid recorded (status.atProvider.claimUID).
// Only the API server sets a uid, and a MiniCluster deleted and made again
// under the same name gets a new one, so neither a tenant who makes the
// name first nor one who replaces the Burst's own passes, whatever its
// labels say.
func OwnClaim(claim metav1.Object, recorded types.UID) bool {
	return recorded != "" && claim.GetUID() == recorded
}

// BindCopy makes sec the certificate copy for claim: the annotation the
// function reads to tell the copy for this very MiniCluster from any other
// Secret of its name, and an owner reference, so that deleting the
// MiniCluster deletes the copy with it (the garbage collector matches the
// uid, so a MiniCluster made again under the name does not keep it).
func BindCopy(sec *corev1.Secret, claim metav1.Object) {
	if sec.Annotations == nil {
		sec.Annotations = map[string]string{}
	}
	sec.Annotations[v1alpha2.AnnotationBurstClaimUID] = string(claim.GetUID())
	sec.OwnerReferences = []metav1.OwnerReference{claimOwner(claim)}
}

// BoundTo reports whether sec is the certificate copy for claim, as
// BindCopy makes it.
func BoundTo(sec *corev1.Secret, claim metav1.Object) bool {
	return claim.GetUID() != "" && sec.Annotations[v1alpha2.AnnotationBurstClaimUID] == string(claim.GetUID()) &&
		reflect.DeepEqual(sec.OwnerReferences, []metav1.OwnerReference{claimOwner(claim)})
}

// claimOwner is the owner reference of a certificate copy to its burst
// MiniCluster. Not a controller reference: the copy is not composed, and
// neither Crossplane nor the function is to take it for a composed
// resource of the MiniCluster; nor does it block the MiniCluster's
// deletion (which would need the finalizers rights of the MiniCluster).
func claimOwner(claim metav1.Object) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion: v1alpha2.SchemeGroupVersion.String(),
		Kind:       v1alpha2.ClaimKind,
		Name:       claim.GetName(),
		UID:        claim.GetUID(),
	}
}

// DesiredSecret is the target's copy of the root's CURVE certificate,
// before BindCopy binds it to the burst MiniCluster it is for.
func DesiredSecret(b *v1alpha1.Burst, cert []byte) *corev1.Secret {
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: SecretName(b), Namespace: b.Spec.ForProvider.TargetNamespace, Labels: labels(b)},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{v1alpha2.CurveCertKey: cert},
	}
}

// DesiredClaim is the burst MiniCluster: the Burst's template, sized as the
// root's cluster entry, joined to the root's lead broker with the root's
// clusters list and certificate.
func DesiredClaim(b *v1alpha1.Burst, root Root, lead Lead) (*unstructured.Unstructured, error) {
	entry, err := root.ClusterEntry(b.Spec.ForProvider.Cluster)
	if err != nil {
		return nil, err
	}
	spec := *b.Spec.ForProvider.Template.DeepCopy()
	size := entry.Size
	spec.Size = &size
	spec.Flux.CurveCert = ""
	spec.Flux.CurveCertSecret = SecretName(b)
	spec.Flux.Bursting = v1alpha2.Bursting{
		LeadBroker: &v1alpha2.FluxBroker{Address: lead.Address, Port: lead.Port, Name: root.MiniCluster.Name, Size: root.MaximumSize},
		Clusters:   append([]v1alpha2.BurstedCluster(nil), root.MiniCluster.Spec.Flux.Bursting.Clusters...),
	}
	raw, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	var specMap map[string]any
	if err := json.Unmarshal(raw, &specMap); err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: map[string]any{"spec": specMap}}
	u.SetAPIVersion(v1alpha2.SchemeGroupVersion.String())
	u.SetKind(v1alpha2.ClaimKind)
	u.SetName(b.Spec.ForProvider.Cluster)
	u.SetNamespace(b.Spec.ForProvider.TargetNamespace)
	u.SetLabels(labels(b))
	return u, nil
}

// MutableSpec is what the controller keeps true in an existing burst claim:
// the only fields a MiniCluster allows to change (the rest is the Job's
// immutable pod template).
type MutableSpec struct {
	Size       int64
	LeadBroker map[string]any
}

// Mutable reads the mutable part of a claim's spec.
func Mutable(u *unstructured.Unstructured) MutableSpec {
	size, _, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "size")
	lb, _, _ := unstructured.NestedMap(u.Object, "spec", "flux", "bursting", "leadBroker")
	return MutableSpec{Size: toInt64(size), LeadBroker: normalizeNumbers(lb)}
}

func toInt64(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case int:
		return int64(n)
	case int32:
		return int64(n)
	case float64:
		return int64(n)
	}
	return 0
}

func normalizeNumbers(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		switch v.(type) {
		case int, int32, int64, float64:
			out[k] = toInt64(v)
		default:
			out[k] = v
		}
	}
	return out
}
