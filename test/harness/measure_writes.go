package harness

import (
	"strings"

	"github.com/flux-framework/minicluster-crossplane/internal/driver"
)

// What one MiniCluster costs the API server, from the audit log
// (Options.AuditWrites): which writes are its own, who made them, and
// where each composition run starts and ends. make bench-node reads a real
// node's writes with these; a node writes more than a test that plays the
// kubelet (the kubelet's pod statuses, the scheduler's bindings, the
// endpoints controllers), and beside a MiniCluster's own writes the node
// renews leases and reports its status every few seconds.

// Crossplane's field managers (crossplane v2.4
// composite/composition_functions.go and claim/syncer_ssa.go): every
// composition run applies the composite's resourceRefs, then each composed
// object, then the composite's status, each under its own field manager.
const (
	FieldManagerComposite = "apiextensions.crossplane.io/composite"
	FieldManagerClaim     = "apiextensions.crossplane.io/claim"
	FieldManagerComposed  = "apiextensions.crossplane.io/composed"
)

// Composite is the API's plural of the composite resource in a shape:
// the cluster-scoped XMiniCluster with claims, the MiniCluster itself in
// the v2 shape.
func Composite(shape driver.Shape) string {
	if shape == driver.ShapeV2 {
		return "miniclusters"
	}
	return "xminiclusters"
}

// WriterOf says who wrote, finer than AuditWrite.Writer: the node's
// components by name, and Crossplane's claim controller apart from its
// composite controller, which the API server's user cannot tell (both are
// "crossplane"). The field manager tells them apart for applies; updates
// carry none, so the resource does: with claims, the claim controller is
// the one that writes the claim (miniclusters) and the composite
// controller the one that writes the XMiniCluster, but for the claim
// controller's apply of the composite.
func WriterOf(w AuditWrite, shape driver.Shape) string {
	switch {
	case strings.HasPrefix(w.User, "system:node:"):
		return "kubelet"
	case w.User == "system:kube-scheduler":
		return "kube-scheduler"
	case w.User != "crossplane":
		return w.Writer()
	case w.Resource == "events":
		return "crossplane (events)"
	case strings.HasPrefix(w.FieldManager, FieldManagerComposed):
		return "crossplane composite (composed apply)"
	case w.FieldManager == FieldManagerClaim:
		return "crossplane claim"
	case shape != driver.ShapeV2 && w.Resource == "miniclusters":
		return "crossplane claim"
	}
	return "crossplane composite"
}

// WriteKey is "writer verb group/resource[/subresource]", a write's line
// in a breakdown.
func WriteKey(w AuditWrite, shape driver.Shape) string {
	k := WriterOf(w, shape) + " " + w.Verb + " " + w.Group + "/" + w.Resource
	if w.Subresource != "" {
		k += "/" + w.Subresource
	}
	return k
}

// StartsCompositionRun says whether w is the first write of a composition
// run: the composite controller's apply of the composite's resourceRefs,
// which every run makes before it applies any composed object (even when
// it changes nothing), so these count the runs that got that far.
func StartsCompositionRun(w AuditWrite, shape driver.Shape) bool {
	return w.User == "crossplane" && w.Verb == "patch" && w.Subresource == "" &&
		w.Resource == Composite(shape) && w.FieldManager == FieldManagerComposite
}

// EndsCompositionRun says whether w is the last write of a successful
// composition run: the composite controller's apply of the function's
// desired status.
func EndsCompositionRun(w AuditWrite, shape driver.Shape) bool {
	return w.User == "crossplane" && w.Verb == "patch" && w.Subresource == "status" &&
		w.Resource == Composite(shape) && w.FieldManager == FieldManagerComposite
}

// OfMiniCluster keeps the writes of one MiniCluster: those in its
// namespace, and with claims its cluster-scoped composite and that
// composite's events, which the API server keeps in namespace default
// under the composite's name. The node's own writes (leases, node status)
// and other namespaces' are left out.
func OfMiniCluster(ws []AuditWrite, namespace, composite string) []AuditWrite {
	var out []AuditWrite
	for _, w := range ws {
		switch {
		case w.Namespace == namespace && namespace != "":
		case composite != "" && w.Namespace == "" && w.Name == composite:
		case composite != "" && w.Namespace == "default" && w.Resource == "events" && strings.HasPrefix(w.Name, composite+"."):
		default:
			continue
		}
		out = append(out, w)
	}
	return out
}
