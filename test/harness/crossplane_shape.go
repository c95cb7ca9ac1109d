package harness

import (
	"fmt"

	"github.com/flux-framework/minicluster-crossplane/internal/driver"
)

// XRDNameV2 is the MiniCluster XRD of the Crossplane v2 shape
// (compositions/v2/definition.yaml). Its composite's CRD is ClaimCRDName:
// the shapes share it, so a control plane runs one of them.
const XRDNameV2 = "miniclusters.flux-framework.org"

// Shape is the shape the control plane serves MiniClusters in
// (Options.Shape; ShapeClaims when unset).
func (cp *ControlPlane) Shape() driver.Shape {
	if cp.opts.Shape == "" {
		return driver.ShapeClaims
	}
	return cp.opts.Shape
}

// shapeFiles are the XRD and Composition Install applies for a shape, and
// the XRD's name.
func shapeFiles(s driver.Shape) (definition, composition, xrd string, err error) {
	switch s {
	case "", driver.ShapeClaims:
		return "compositions/definition.yaml", "compositions/composition.yaml", XRDName, nil
	case driver.ShapeV2:
		return "compositions/v2/definition.yaml", "compositions/v2/composition.yaml", XRDNameV2, nil
	}
	return "", "", "", fmt.Errorf("unknown shape %q", s)
}
