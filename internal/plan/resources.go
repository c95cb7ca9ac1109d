package plan

import (
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/entrypoint"
)

// gpuResources are the device plugins' resource names whose quantity is a
// number of GPUs. gpu.intel.com/ names a device per driver (i915, xe) but
// also GPU Aware Scheduling's shares of one, which are not GPUs.
var (
	gpuResources       = map[string]bool{"nvidia.com/gpu": true, "amd.com/gpu": true}
	gpuPrefix          = "gpu.intel.com/"
	notGPUsUnderPrefix = map[string]bool{"gpu.intel.com/millicores": true, "gpu.intel.com/memory.max": true, "gpu.intel.com/tiles": true}
)

// isGPU tells whether a container resource counts GPUs.
func isGPU(name string) bool {
	return gpuResources[name] || (strings.HasPrefix(name, gpuPrefix) && !notGPUsUnderPrefix[name])
}

// brokerResources is the one rule for what every broker offers Flux
// (docs/minicluster.md, "What Flux sees"): with spec.flux.resources node,
// the node as hwloc finds it; otherwise what the runner container was
// given: its CPU limit, else its CPU request, rounded up to whole cores
// (none: the node's cores), and the sum of its GPU limits. The runner's
// resources are checked already (checkResources): quantities parse, GPU
// counts are whole and requests of GPUs equal their limits.
func brokerResources(mc *v1alpha2.MiniCluster, runner int) entrypoint.Resources {
	if mc.Spec.Flux.Resources == v1alpha2.FluxResourcesNode {
		return entrypoint.Resources{FromNode: true}
	}
	r := mc.Spec.Containers[runner].Resources
	var out entrypoint.Resources
	for _, rl := range []v1alpha2.ContainerResource{r.Limits, r.Requests} {
		if q, ok := quantity(rl, "cpu"); ok && q.Sign() > 0 {
			// Value rounds up: 1500m is 2 cores.
			out.Cores = int(q.Value())
			break
		}
	}
	for _, k := range slices.Sorted(maps.Keys(r.Limits)) {
		if q, ok := quantity(r.Limits, k); ok && isGPU(k) && q.Sign() > 0 {
			out.GPUs += int(q.Value())
		}
	}
	return out
}

// quantity is rl[name], parsed.
func quantity(rl v1alpha2.ContainerResource, name string) (resource.Quantity, bool) {
	v, ok := rl[name]
	if !ok {
		return resource.Quantity{}, false
	}
	q, err := resource.ParseQuantity(v.String())
	return q, err == nil
}
