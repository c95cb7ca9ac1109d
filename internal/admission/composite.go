package admission

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// Composite refuses a composite resource that is not a tenant's
// MiniCluster as the platform's Composition makes it, before anything of
// its spec is read: one that picks its own revision of the Composition,
// and, in the claim shape, one that no claim made.
func Composite(xr map[string]any) *Refused {
	if msg := pinnedRevision(xr); msg != "" {
		return policyRefused(msg)
	}
	return unclaimed(xr)
}

// pinnedRevision refuses a MiniCluster that picks its own revision of the
// Composition. The XRDs enforce the Composition, whose function input is
// the platform's policy; a revision pinned by hand (compositionUpdatePolicy
// Manual with a compositionRevisionRef) or picked by labels
// (compositionRevisionSelector, e.g. an old revision's hash) would run the
// Composition's input of another time, such as a policy since tightened.
// Crossplane keeps these fields at the top of a claim's spec (and copies
// them to its composite), and under spec.crossplane of a v2 composite.
func pinnedRevision(xr map[string]any) string {
	for _, base := range [][]string{{"spec"}, {"spec", "crossplane"}} {
		path := strings.Join(base, ".")
		if p, _, _ := unstructured.NestedString(xr, append(base, "compositionUpdatePolicy")...); p == "Manual" {
			return fmt.Sprintf("%s.compositionUpdatePolicy: refused by the platform's policy (the Composition the XRD enforces): Manual keeps a revision of the Composition, and of its policy, that the platform may since have replaced; remove it (Automatic follows the platform's Composition)", path)
		}
		if sel, ok, _ := unstructured.NestedFieldNoCopy(xr, append(base, "compositionRevisionSelector")...); ok && sel != nil {
			return fmt.Sprintf("%s.compositionRevisionSelector: refused by the platform's policy (the Composition the XRD enforces): a selector can pick an earlier revision of the Composition, and of its policy; remove it", path)
		}
	}
	return ""
}

// unclaimed refuses a cluster-scoped composite (the claim shape) without a
// spec.claimRef, or whose claim labels name another claim than its
// claimRef. Crossplane's claim controller sets both when a claim makes
// its composite; a composite made by hand with claim labels only is
// bindable: any tenant's claim that names it in spec.resourceRef is bound
// to it, its spec synced into it (the size of the Job it runs elsewhere)
// and, when the claim goes, the composite deleted with it. A namespaced
// composite (the v2 shape) is the tenant's own object: no claim binds it.
func unclaimed(xr map[string]any) *Refused {
	md, _ := xr["metadata"].(map[string]any)
	if ns, _ := md["namespace"].(string); ns != "" {
		return nil
	}
	name, _ := md["name"].(string)
	labels, _, _ := unstructured.NestedStringMap(xr, "metadata", "labels")
	refName, _, _ := unstructured.NestedString(xr, "spec", "claimRef", "name")
	refNS, _, _ := unstructured.NestedString(xr, "spec", "claimRef", "namespace")
	if refName == "" || refNS == "" {
		return &Refused{Reason: ReasonUnclaimed, Message: fmt.Sprintf("spec.claimRef: XMiniCluster %s was not made by a MiniCluster claim (it has no spec.claimRef): a claim in any namespace that names it in spec.resourceRef would be bound to it and change it; create a MiniCluster claim in the namespace instead, or, as a cluster admin, set spec.claimRef to the claim that owns it (docs/security.md)%s", name, nothingComposed)}
	}
	ln, lns := labels[v1alpha2.LabelClaimName], labels[v1alpha2.LabelClaimNamespace]
	if (ln != "" && ln != refName) || (lns != "" && lns != refNS) {
		return &Refused{Reason: ReasonUnclaimed, Message: fmt.Sprintf("metadata.labels: XMiniCluster %s is bound to claim %s/%s (spec.claimRef) but its labels %s and %s name %s/%s: only Crossplane's claim controller sets them, together; delete the XMiniCluster, or, as a cluster admin, make the labels and spec.claimRef name the same claim%s", name, refNS, refName, v1alpha2.LabelClaimNamespace, v1alpha2.LabelClaimName, lns, ln, nothingComposed)}
	}
	return nil
}
