package entrypoint

import (
	"fmt"
	"testing"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

func TestZZDump(t *testing.T) {
	mc := &v1alpha2.MiniCluster{}
	mc.Name = "flux-sample"
	s := int32(4)
	mc.Spec.Size = &s
	mc.Spec.Containers = []v1alpha2.MiniClusterContainer{{Command: "echo hello world"}, {Name: "side", Command: "flux proxy $fluxsocket"}}
	mc.Spec.Containers[0].RunFlux = true
	mc.Spec.Logging.Quiet = true
	mc.Spec.Containers[0].Commands.Pre = "export FOO=bar"
	v1alpha2.SetDefaults(mc, v1alpha2.PlatformDefaults{})
	r, err := Runner(mc, 0, Plan{Name: "flux-sample", Size: 4})
	fmt.Println(r, err)
	fmt.Println(Sidecar(mc, 1, Plan{}))
	fmt.Println(Init(mc, Plan{}))
}
