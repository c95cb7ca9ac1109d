package v1alpha2

// Labels the burst controller puts on the burst MiniCluster and on the copy
// of the root's CURVE certificate it writes next to it. They live with the
// MiniCluster API, not the controller, because the function reads them too.
const (
	// LabelBurstName is the name of the Burst that made the object. The
	// function reads it, with LabelBurstNamespace, to recognise the burst
	// controller's certificate copy for a burst MiniCluster: a
	// <name>-curve-cert Secret whose two labels equal the MiniCluster's.
	LabelBurstName = "bursting.flux-framework.org/burst"
	// LabelBurstNamespace is the namespace of the Burst that made the
	// object; the function compares it with the MiniCluster's, as it does
	// LabelBurstName, to recognise the burst controller's certificate copy.
	LabelBurstNamespace = "bursting.flux-framework.org/burst-namespace"
)

// AnnotationBurstClaimUID is the UID of the burst MiniCluster claim (v2
// shape: the namespaced MiniCluster; claim shape: the claim) for which the
// burst controller wrote a <name>-curve-cert copy of the root's CURVE
// certificate. The burst controller sets it only on a copy next to a claim it
// created itself, known by the UID it recorded when it created it, never by
// labels, which any tenant of the target namespace can forge. The function
// exempts the copy from the Secret policy only when this annotation equals
// the UID of the MiniCluster that names it, so a claim that a tenant
// pre-creates, or recreates after deleting the genuine one, under the same
// name never reads the root's certificate.
const AnnotationBurstClaimUID = "bursting.flux-framework.org/claim-uid"
