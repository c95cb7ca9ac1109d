package node_test

import (
	"testing"

	"github.com/flux-framework/minicluster-crossplane/internal/driver"
)

// The v2 shape's tests run last (this file sorts last): the one node moves
// to a control plane serving MiniClusters as namespaced composites, and
// the README's flows run there unchanged.

// TestReadmeRunAMiniClusterV2 is TestReadmeRunAMiniCluster in the v2 shape.
func TestReadmeRunAMiniClusterV2(t *testing.T) {
	readmeHelloWorld(t, nodePlane(t, driver.ShapeV2))
}

// TestReadmeInteractiveV2 is TestReadmeInteractive in the v2 shape.
func TestReadmeInteractiveV2(t *testing.T) {
	readmeInteractive(t, nodePlane(t, driver.ShapeV2))
}
