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
