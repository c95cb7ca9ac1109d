package plan

import (
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

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
// given (r, as the checks parsed it): its CPU limit, else its CPU request,
// rounded up to whole cores (none: the node's cores), and the sum of its
// GPU limits. The checks made GPU counts whole and requests of GPUs equal
// to their limits.
func brokerResources(mc *v1alpha2.MiniCluster, r corev1.ResourceRequirements) entrypoint.Resources {
	if mc.Spec.Flux.Resources == v1alpha2.FluxResourcesNode {
		return entrypoint.Resources{FromNode: true}
	}
	var out entrypoint.Resources
	for _, rl := range []corev1.ResourceList{r.Limits, r.Requests} {
		if q, ok := rl[corev1.ResourceCPU]; ok && q.Sign() > 0 {
			// Value rounds up: 1500m is 2 cores.
			out.Cores = int(q.Value())
			break
		}
	}
	for _, k := range slices.Sorted(maps.Keys(r.Limits)) {
		if q := r.Limits[k]; isGPU(string(k)) && q.Sign() > 0 {
			out.GPUs += int(q.Value())
		}
	}
	return out
}
